// One chat WebSocket: connects, parses server frames with the contract, and reconnects per the
// spec's policy. The WebSocket class and the timers are injectable so tests drive them by hand.
// The connection itself is socket.connection.ts; what it shows is the reducer in socket.state.ts.
import type { TClientEvent, TServerEvent } from '@daybook/contracts';
import { useCallback, useEffect, useReducer, useRef } from 'react';
import { openChatConnection } from './socket.connection.ts';
import { initialSocketState, type SocketState, socketReducer } from './socket.state.ts';
import { browserTimers, OPEN, type SocketConstructor, type SocketLike, type Timers } from './socket.ts';

export { HEARTBEAT_MS, PONG_TIMEOUT_MS } from './socket.liveness.ts';
export { CONNECT_FAILED, type ConnectionStatus, type OutageKind, SOCKET_ERROR } from './socket.state.ts';
export { browserTimers, type SocketConstructor, type SocketLike, type Timers } from './socket.ts';

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

/** The connection's state (SocketState), and what the chat can do with it. */
export interface ChatSocket extends SocketState {
  /** False when the socket is not open or refused the frame. */
  send(message: TClientEvent): boolean;
  /** Connects now (dropping a scheduled retry) unless a socket is open or connecting. */
  reconnect(): void;
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
  const [state, dispatch] = useReducer(socketReducer, undefined, initialSocketState);
  const socketRef = useRef<SocketLike | null>(null);
  const connectRef = useRef<() => void>(() => {});
  const probeRef = useRef<() => void>(() => {});
  const handlers = useRef({ onEvent, onBadFrame, checkSession });
  handlers.current = { onEvent, onBadFrame, checkSession };

  useEffect(() => {
    const Impl = WebSocketImpl ?? (globalThis.WebSocket as unknown as SocketConstructor);
    const connection = openChatConnection({ url, Impl, timers, socketRef, handlers, dispatch });
    connectRef.current = connection.connect;
    probeRef.current = connection.probe;
    connection.connect();
    return connection.close;
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
    status: state.status,
    error: state.error,
    closeCode: state.closeCode,
    retryInMs: state.retryInMs,
    retryAt: state.retryAt,
    outage: state.outage,
    send,
    reconnect,
    signedOut: state.signedOut,
    offline: state.offline,
    probe,
  } satisfies ChatSocket;
}
