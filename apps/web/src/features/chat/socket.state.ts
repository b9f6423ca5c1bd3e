// What the chat socket shows (status, errors, the scheduled retry), as a pure reducer of what
// happens to the connection.

export type ConnectionStatus = 'connecting' | 'connected' | 'disconnected' | 'error';
/**
 * How the current outage began: a drop (`disconnected`) or a failure (`error`). It stays the same
 * through every retry until a socket opens again, so the screen does not flip between the two.
 */
export type OutageKind = 'disconnected' | 'error';

export const SOCKET_ERROR = 'WebSocket connection error';
export const CONNECT_FAILED = 'Connection error';

/** What the chat shows of its connection. */
export interface SocketState {
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
  /** The server closed the socket because the session ended, and the session check agreed. */
  signedOut: boolean;
  /** The browser says it has no network: nothing is tried until it is back. */
  offline: boolean;
}

export type SocketAction =
  /** A socket is being opened. */
  | { type: 'connecting' }
  /** No socket could be made at all. */
  | { type: 'connect-failed' }
  | { type: 'opened' }
  /** `restarting`: the server said it was restarting, and no socket has opened since. */
  | { type: 'socket-error'; restarting: boolean }
  /** `reconnecting`: a new socket is opened at once (the server restarts), with no outage shown. */
  | { type: 'closed'; code: number; reconnecting: boolean }
  /** The hook gave the socket up (it stalled, or the browser went offline). */
  | { type: 'given-up' }
  /** A retry was scheduled in `inMs` (at `at`), or none is (both null). */
  | { type: 'retry'; inMs: number | null; at: number | null }
  | { type: 'signed-out' }
  | { type: 'offline' }
  | { type: 'online' };

export const initialSocketState = (): SocketState => ({
  status: 'connecting',
  error: null,
  closeCode: null,
  retryInMs: null,
  retryAt: null,
  outage: null,
  signedOut: false,
  offline: typeof navigator !== 'undefined' && navigator.onLine === false,
});

/** `state` with `changes`, or `state` itself when nothing changes (so nothing renders again). */
function patch(state: SocketState, changes: Partial<SocketState>): SocketState {
  for (const key of Object.keys(changes) as Array<keyof SocketState>)
    if (!Object.is(state[key], changes[key])) return { ...state, ...changes };
  return state;
}

export function socketReducer(state: SocketState, action: SocketAction): SocketState {
  switch (action.type) {
    case 'connecting':
      // The error of an outage stays until a socket opens: it still explains the banner.
      return patch(state, { status: 'connecting', retryInMs: null, retryAt: null });
    case 'connect-failed':
      return patch(state, { status: 'error', error: CONNECT_FAILED, outage: state.outage ?? 'error' });
    case 'opened':
      return patch(state, { status: 'connected', error: null, closeCode: null, outage: null, signedOut: false });
    case 'socket-error':
      // The server said it was restarting: a failed attempt meanwhile is that outage, not an error.
      if (action.restarting) return patch(state, { outage: state.outage ?? 'disconnected' });
      return patch(state, { status: 'error', error: SOCKET_ERROR, outage: state.outage ?? 'error' });
    case 'closed':
      if (action.reconnecting) return patch(state, { closeCode: action.code });
      return patch(state, {
        closeCode: action.code,
        status: state.status === 'error' ? 'error' : 'disconnected',
        outage: state.outage ?? 'disconnected',
      });
    case 'given-up':
      return patch(state, { closeCode: null, status: 'disconnected', outage: state.outage ?? 'disconnected' });
    case 'retry':
      return patch(state, { retryInMs: action.inMs, retryAt: action.at });
    case 'signed-out':
      return patch(state, { signedOut: true });
    case 'offline':
      return patch(state, { offline: true });
    case 'online':
      return patch(state, { offline: false });
  }
}
