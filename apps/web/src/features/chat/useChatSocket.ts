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
/** Quiet this long, the client asks the server whether the connection still carries anything. */
export const HEARTBEAT_MS = 15_000;
/** Asked (a ping after quiet, or after sending a message), nothing this long: the connection is dead. */
export const PONG_TIMEOUT_MS = 4_000;
/** Our own code for a socket given up on (no server sends it): it stalled, or the browser went offline. */
const GIVEN_UP = 4000;
const PING = JSON.stringify({ message_type: 'ping' });
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
  /** The browser says it has no network: nothing is tried until it is back. */
  offline: boolean;
  /**
   * Checks now that the connection still carries frames (after sending a message): when nothing
   * comes back within PONG_TIMEOUT_MS, the socket is given up and a new one opened.
   */
  probe(): void;
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
  const [offline, setOffline] = useState(() => typeof navigator !== 'undefined' && navigator.onLine === false);
  const socketRef = useRef<SocketLike | null>(null);
  const connectRef = useRef<() => void>(() => {});
  const probeRef = useRef<() => void>(() => {});
  const handlers = useRef({ onEvent, onBadFrame, checkSession });
  handlers.current = { onEvent, onBadFrame, checkSession };

  useEffect(() => {
    const Impl = WebSocketImpl ?? (globalThis.WebSocket as unknown as SocketConstructor);
    let disposed = false;
    let attempts = 0;
    const attemptTimes: number[] = [];
    let timer: unknown = null;
    let isOffline = typeof navigator !== 'undefined' && navigator.onLine === false;
    // Closed with 1012 (the server restarts) and not connected since.
    let restarting = false;
    // Liveness: when a frame last came, the next check, and the answer a ping waits for.
    let lastHeard = 0;
    let heartbeat: unknown = null;
    let pongDue: unknown = null;

    const cancelRetry = () => {
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
    };

    const stopLiveness = () => {
      if (heartbeat !== null) timers.clearTimeout(heartbeat);
      if (pongDue !== null) timers.clearTimeout(pongDue);
      heartbeat = pongDue = null;
    };

    /** A frame came: the connection lives. After HEARTBEAT_MS of quiet, it is asked. */
    const heard = () => {
      lastHeard = timers.now();
      if (pongDue !== null) timers.clearTimeout(pongDue);
      pongDue = null;
      if (heartbeat === null) armHeartbeat(HEARTBEAT_MS);
    };
    const armHeartbeat = (ms: number) => {
      heartbeat = timers.setTimeout(() => {
        heartbeat = null;
        const quiet = timers.now() - lastHeard;
        if (quiet < HEARTBEAT_MS) armHeartbeat(HEARTBEAT_MS - quiet);
        else probe();
      }, ms);
    };
    const probe = () => {
      const ws = socketRef.current;
      if (!ws || ws.readyState !== OPEN || pongDue !== null) return;
      pongDue = timers.setTimeout(() => {
        pongDue = null;
        if (socketRef.current === ws) giveUp(ws);
      }, PONG_TIMEOUT_MS);
      try {
        ws.send(PING);
      } catch {
        // A socket that cannot send is dead too: the deadline above says so.
      }
    };

    /**
     * The socket stalled (nothing came back when asked) or the browser went offline: it is closed
     * here, as the server would have, and a new one is opened (once back online).
     */
    const giveUp = (ws: SocketLike) => {
      stopLiveness();
      ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
      try {
        ws.close(GIVEN_UP);
      } catch {
        // Already closing.
      }
      socketRef.current = null;
      setCloseCode(null);
      setStatus('disconnected');
      setOutage((kind) => kind ?? 'disconnected');
      scheduleRetry(1006);
    };

    const scheduleRetry = (code: number) => {
      cancelRetry();
      // Offline, every attempt would fail: the next one comes when the browser is back online.
      if (isOffline) {
        setRetryInMs(null);
        setRetryAt(null);
        return;
      }
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
        restarting = false;
        heard();
        attempts = 0;
        setStatus('connected');
        setError(null);
        setCloseCode(null);
        setOutage(null);
        setSignedOut(false);
      };
      ws.onmessage = (event) => {
        if (!live()) return;
        heard();
        let parsed: ReturnType<typeof ZServerEvent.safeParse> | null = null;
        try {
          parsed = ZServerEvent.safeParse(JSON.parse(String(event.data)));
        } catch {
          parsed = null;
        }
        if (parsed?.success && parsed.data.message_type === 'pong') return;
        if (parsed?.success) handlers.current.onEvent(parsed.data);
        else handlers.current.onBadFrame?.(event.data);
      };
      ws.onerror = () => {
        if (!live()) return;
        // The server said it was restarting: a failed attempt meanwhile is that outage, not an error.
        if (restarting) {
          setOutage((kind) => kind ?? 'disconnected');
          return;
        }
        setStatus('error');
        setError(SOCKET_ERROR);
        setOutage((kind) => kind ?? 'error');
      };
      ws.onclose = (event) => {
        if (!live()) return;
        stopLiveness();
        socketRef.current = null;
        setCloseCode(event.code);
        // The server is restarting (1012): straight back, to another instance, with no outage shown
        // (no banner, no countdown) unless that attempt fails too.
        if (retryDelay({ code: event.code, attempts, attemptTimes }) === 0) {
          restarting = true;
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

    const onOffline = () => {
      isOffline = true;
      setOffline(true);
      const ws = socketRef.current;
      if (ws) giveUp(ws);
      else scheduleRetry(1006);
    };
    const onOnline = () => {
      isOffline = false;
      setOffline(false);
      // Back: at once, not after the backoff of the attempts made while offline.
      attempts = 0;
      connect();
    };
    window.addEventListener('offline', onOffline);
    window.addEventListener('online', onOnline);

    connectRef.current = connect;
    probeRef.current = probe;
    connect();
    return () => {
      disposed = true;
      window.removeEventListener('offline', onOffline);
      window.removeEventListener('online', onOnline);
      stopLiveness();
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
  const probe = useCallback(() => probeRef.current(), []);

  return {
    status,
    error,
    closeCode,
    retryInMs,
    retryAt,
    outage,
    send,
    reconnect,
    signedOut,
    offline,
    probe,
  } satisfies ChatSocket;
}
