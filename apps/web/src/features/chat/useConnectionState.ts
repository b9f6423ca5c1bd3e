// What the screen says about the connection: whether an outage is on (it keeps the kind it began as
// through every retry), whether a retry is connecting, the seconds until the next one, and the
// header's status pill. The socket itself (online/offline, pings, retries) is useChatSocket.
import type { ChatSocket, ConnectionStatus, OutageKind, Timers } from './useChatSocket.ts';
import { useCountdown } from './useCountdown.ts';

export const OFFLINE = 'Offline';

export interface ConnectionState {
  /** Set from the first failure after a working connection (or the first attempt) until a socket opens again. */
  outage: OutageKind | null;
  /** A retry during an outage is connecting. */
  reconnecting: boolean;
  /** Whole seconds until the scheduled retry; null while none is scheduled. */
  retryIn: number | null;
  statusKind: ConnectionStatus;
  statusText: string;
}

export function useConnectionState(socket: ChatSocket, timers: Timers): ConnectionState {
  const connected = socket.status === 'connected';
  const outage = connected ? null : socket.outage;
  const reconnecting = outage !== null && socket.status === 'connecting';
  const retryIn = useCountdown(socket.retryAt, timers);
  // The header pill follows the banner: an outage keeps its kind, and a retry in progress is "Reconnecting...".
  const statusKind = socket.offline ? 'disconnected' : reconnecting ? 'connecting' : (outage ?? socket.status);
  const statusText = socket.offline
    ? OFFLINE
    : reconnecting
      ? 'Reconnecting...'
      : {
          connecting: 'Connecting...',
          connected: 'Connected',
          disconnected: 'Disconnected',
          error: 'Connection problem',
        }[statusKind];
  return { outage, reconnecting, retryIn, statusKind, statusText };
}
