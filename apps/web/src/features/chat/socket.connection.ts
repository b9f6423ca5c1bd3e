// One chat connection, from mount to unmount: opens sockets, reads their frames, and reconnects per
// the spec's policy, reporting what happens as SocketActions. Not a hook: useChatSocket runs it in
// an effect, and it keeps its moment-to-moment state in plain variables.
import { CLOSE_CODES, type TServerEvent } from '@daybook/contracts';
import { createLiveness } from './socket.liveness.ts';
import { createRetries } from './socket.retries.ts';
import type { SocketAction } from './socket.state.ts';
import {
  CONNECTING,
  detach,
  OPEN,
  parseFrame,
  type SocketConstructor,
  type SocketLike,
  type Timers,
} from './socket.ts';

/** Our own code for a socket given up on (no server sends it): it stalled, or the browser went offline. */
const GIVEN_UP = 4000;

export interface ConnectionHandlers {
  onEvent: (event: TServerEvent) => void;
  onBadFrame?: (data: unknown) => void;
  checkSession?: () => Promise<boolean>;
}

/** A frame from the open socket, handed on unless it is only the answer to a ping. */
function deliverFrame(data: unknown, handlers: ConnectionHandlers) {
  const parsed = parseFrame(data);
  if (parsed?.message_type === 'pong') return;
  if (parsed) handlers.onEvent(parsed);
  else handlers.onBadFrame?.(data);
}

/** Calls `offline` and `online` as the browser's network goes and comes back; returns the unsubscribe. */
function watchNetwork(offline: () => void, online: () => void) {
  window.addEventListener('offline', offline);
  window.addEventListener('online', online);
  return () => {
    window.removeEventListener('offline', offline);
    window.removeEventListener('online', online);
  };
}

export function openChatConnection({
  url,
  Impl,
  timers,
  socketRef,
  handlers,
  dispatch,
}: {
  url: string;
  Impl: SocketConstructor;
  timers: Timers;
  /** The socket in use, shared with the hook (which sends on it). */
  socketRef: { current: SocketLike | null };
  /** The latest handlers the hook was given. */
  handlers: { readonly current: ConnectionHandlers };
  dispatch: (action: SocketAction) => void;
}) {
  let disposed = false;
  // Closed with 1012 (the server restarts) and not connected since.
  let restarting = false;
  const retries = createRetries({ timers, dispatch, retry: () => connect() });
  const liveness = createLiveness({ timers, socket: () => socketRef.current, onStalled: (ws) => giveUp(ws) });

  /**
   * The socket stalled (nothing came back when asked) or the browser went offline: it is closed
   * here, as the server would have, and a new one is opened (once back online).
   */
  const giveUp = (ws: SocketLike) => {
    liveness.stop();
    detach(ws);
    try {
      ws.close(GIVEN_UP);
    } catch {
      // Already closing.
    }
    socketRef.current = null;
    dispatch({ type: 'given-up' });
    retries.schedule(1006);
  };

  const connect = () => {
    if (disposed) return;
    const current = socketRef.current;
    // A socket is only opened if none is connecting (or already open).
    if (current && (current.readyState === CONNECTING || current.readyState === OPEN)) return;
    retries.cancel();
    retries.started();
    dispatch({ type: 'connecting' });
    let ws: SocketLike;
    try {
      ws = new Impl(url);
    } catch {
      socketRef.current = null;
      dispatch({ type: 'connect-failed' });
      retries.schedule(1006);
      return;
    }
    socketRef.current = ws;
    const live = () => !disposed && socketRef.current === ws;
    ws.onopen = () => {
      if (!live()) return;
      restarting = false;
      liveness.heard();
      retries.connected();
      dispatch({ type: 'opened' });
    };
    ws.onmessage = (event) => {
      if (!live()) return;
      liveness.heard();
      deliverFrame(event.data, handlers.current);
    };
    ws.onerror = () => {
      if (live()) dispatch({ type: 'socket-error', restarting });
    };
    ws.onclose = (event) => {
      if (live()) closed(event.code);
    };
  };

  const closed = (code: number) => {
    liveness.stop();
    socketRef.current = null;
    // The server is restarting (1012): straight back, to another instance, with no outage shown
    // (no banner, no countdown) unless that attempt fails too.
    const reconnecting = retries.delay(code) === 0;
    dispatch({ type: 'closed', code, reconnecting });
    if (reconnecting) {
      restarting = true;
      connect();
      return;
    }
    const check = handlers.current.checkSession;
    if (code !== CLOSE_CODES.policyViolation || !check) {
      retries.schedule(code);
      return;
    }
    // Signed out (elsewhere, or the session expired): retrying would be refused forever.
    const settle = (stillSignedIn: boolean) => {
      // Unmounted, or a socket was opened meanwhile (Reconnect).
      if (disposed || socketRef.current) return;
      if (stillSignedIn) retries.schedule(code);
      else dispatch({ type: 'signed-out' });
    };
    check().then(settle, () => settle(true));
  };

  const unwatchNetwork = watchNetwork(
    () => {
      retries.setOffline(true);
      dispatch({ type: 'offline' });
      const ws = socketRef.current;
      if (ws) giveUp(ws);
      else retries.schedule(1006);
    },
    () => {
      retries.setOffline(false);
      dispatch({ type: 'online' });
      connect();
    },
  );

  return {
    /** Connects now (dropping a scheduled retry) unless a socket is open or connecting. */
    connect,
    probe: liveness.probe,
    /** Unmount: nothing more is tried, and the socket is closed. */
    close() {
      disposed = true;
      unwatchNetwork();
      liveness.stop();
      retries.cancel();
      const ws = socketRef.current;
      socketRef.current = null;
      if (ws) {
        detach(ws);
        ws.close(1000);
      }
    },
  };
}
