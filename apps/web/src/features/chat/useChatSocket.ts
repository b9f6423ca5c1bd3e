// One chat WebSocket: connects, parses server frames with the contract, and reconnects per the
// spec's policy. The WebSocket class and the timers are injectable so tests drive them by hand.
import { CLOSE_CODES, type TClientEvent, type TServerEvent, ZServerEvent } from '@daybook/contracts';
import { useCallback, useEffect, useRef, useState } from 'react';
import { retryDelay } from './reconnect.ts';

export type ConnectionStatus = 'connecting' | 'connected' | 'disconnected' | 'error';
/**
 * How the current outage began: a drop (`disconnected`) or a failure (`error`). It stays the same
 * through every retry until a socket opens again, so the screen does not flip between the two.
 */
export type OutageKind = 'disconnected' | 'error';

export const SOCKET_ERROR = 'WebSocket connection error';
export const CONNECT_FAILED = 'Connection error';

const CONNECTING = 0;
const OPEN = 1;
/** Enough history for the burst rule. */
const KEPT_ATTEMPT_TIMES = 10;

/** The part of the browser WebSocket the hook uses. */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type SocketConstructor = new (url: string) => SocketLike;

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export const browserTimers: Timers = {
  setTimeout: (callback, ms) => window.setTimeout(callback, ms),
  clearTimeout: (handle) => window.clearTimeout(handle as number),
  now: () => Date.now(),
};

export interface ChatSocketOptions {
  url: string;
  onEvent: (event: TServerEvent) => void;
  /** A frame that is not JSON or not a known event; it is ignored. */
  onBadFrame?: (data: unknown) => void;
  /**
   * Asked after a 1008 close (the server ended the socket with its session): resolves true while
   * still signed in. False stops the retries; the app then shows sign-in. Unset: retry as usual.
   */
  checkSession?: () => Promise<boolean>;
  WebSocketImpl?: SocketConstructor;
  timers?: Timers;
}

export interface ChatSocket {
  status: ConnectionStatus;
  /** Why the connection last failed (spec error texts); kept through the retries of an outage. */
  error: string | null;
  /** Code of the last close, null while none. */
  closeCode: number | null;
  /** Delay of the scheduled retry, null when none is scheduled. */
  retryInMs: number | null;
  /** When the scheduled retry fires (`timers.now()` clock), null when none is scheduled. */
  retryAt: number | null;
  /** The kind of the outage in progress (also while a retry is connecting), null once connected. */
  outage: OutageKind | null;
  /** False when the socket is not open or refused the frame. */
  send(message: TClientEvent): boolean;
  /** Connects now (dropping a scheduled retry) unless a socket is open or connecting. */
  reconnect(): void;
  /** The server closed the socket because the session ended, and the session check agreed. */
  signedOut: boolean;
}

export function useChatSocket({
  url,
  onEvent,
  onBadFrame,
  checkSession,
  WebSocketImpl,
  timers = browserTimers,
}: ChatSocketOptions) {
  const [status, setStatus] = useState<ConnectionStatus>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [closeCode, setCloseCode] = useState<number | null>(null);
  const [retryInMs, setRetryInMs] = useState<number | null>(null);
  const [retryAt, setRetryAt] = useState<number | null>(null);
  const [outage, setOutage] = useState<OutageKind | null>(null);
  const [signedOut, setSignedOut] = useState(false);
  const socketRef = useRef<SocketLike | null>(null);
  const connectRef = useRef<() => void>(() => {});
  const handlers = useRef({ onEvent, onBadFrame, checkSession });
  handlers.current = { onEvent, onBadFrame, checkSession };

  useEffect(() => {
    const Impl = WebSocketImpl ?? (globalThis.WebSocket as unknown as SocketConstructor);
    let disposed = false;
    let attempts = 0;
    const attemptTimes: number[] = [];
    let timer: unknown = null;

    const cancelRetry = () => {
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
    };

    const scheduleRetry = (code: number) => {
      cancelRetry();
      const delay = retryDelay({ code, attempts, attemptTimes });
      setRetryInMs(delay);
      setRetryAt(delay === null ? null : timers.now() + delay);
      if (delay === null) return;
      attempts++;
      timer = timers.setTimeout(() => {
        timer = null;
        connect();
      }, delay);
    };

    const connect = () => {
      if (disposed) return;
      const current = socketRef.current;
      // A socket is only opened if none is connecting (or already open).
      if (current && (current.readyState === CONNECTING || current.readyState === OPEN)) return;
      cancelRetry();
      attemptTimes.push(timers.now());
      if (attemptTimes.length > KEPT_ATTEMPT_TIMES) attemptTimes.shift();
      setStatus('connecting');
      // The error of an outage stays until a socket opens: it still explains the banner.
      setRetryInMs(null);
      setRetryAt(null);
      let ws: SocketLike;
      try {
        ws = new Impl(url);
      } catch {
        socketRef.current = null;
        setStatus('error');
        setError(CONNECT_FAILED);
        setOutage((kind) => kind ?? 'error');
        scheduleRetry(1006);
        return;
      }
      socketRef.current = ws;
      const live = () => !disposed && socketRef.current === ws;
      ws.onopen = () => {
        if (!live()) return;
        attempts = 0;
        setStatus('connected');
        setError(null);
        setCloseCode(null);
        setOutage(null);
        setSignedOut(false);
      };
      ws.onmessage = (event) => {
        if (!live()) return;
        let parsed: ReturnType<typeof ZServerEvent.safeParse> | null = null;
        try {
          parsed = ZServerEvent.safeParse(JSON.parse(String(event.data)));
        } catch {
          parsed = null;
        }
        if (parsed?.success) handlers.current.onEvent(parsed.data);
        else handlers.current.onBadFrame?.(event.data);
      };
      ws.onerror = () => {
        if (!live()) return;
        setStatus('error');
        setError(SOCKET_ERROR);
        setOutage((kind) => kind ?? 'error');
      };
      ws.onclose = (event) => {
        if (!live()) return;
        socketRef.current = null;
        setCloseCode(event.code);
        // The server is restarting (1012): straight back, to another instance, with no outage shown
        // (no banner, no countdown) unless that attempt fails too.
        if (retryDelay({ code: event.code, attempts, attemptTimes }) === 0) {
          connect();
          return;
        }
        setStatus((previous) => (previous === 'error' ? 'error' : 'disconnected'));
        setOutage((kind) => kind ?? 'disconnected');
        const check = handlers.current.checkSession;
        if (event.code !== CLOSE_CODES.policyViolation || !check) {
          scheduleRetry(event.code);
          return;
        }
        // Signed out (elsewhere, or the session expired): retrying would be refused forever.
        const settle = (stillSignedIn: boolean) => {
          // Unmounted, or a socket was opened meanwhile (Reconnect).
          if (disposed || socketRef.current) return;
          if (stillSignedIn) scheduleRetry(event.code);
          else setSignedOut(true);
        };
        check().then(settle, () => settle(true));
      };
    };

    connectRef.current = connect;
    connect();
    return () => {
      disposed = true;
      cancelRetry();
      const ws = socketRef.current;
      socketRef.current = null;
      if (ws) {
        ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
        ws.close(1000);
      }
    };
  }, [url, WebSocketImpl, timers]);

  const send = useCallback((message: TClientEvent) => {
    const ws = socketRef.current;
    if (!ws || ws.readyState !== OPEN) return false;
    try {
      ws.send(JSON.stringify(message));
      return true;
    } catch {
      return false;
    }
  }, []);

  const reconnect = useCallback(() => connectRef.current(), []);

  return { status, error, closeCode, retryInMs, retryAt, outage, send, reconnect, signedOut } satisfies ChatSocket;
}
