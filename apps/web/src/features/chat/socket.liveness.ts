// Whether an open socket still carries frames: after a quiet spell, or when asked (probe), the
// server is pinged; no answer in time and the socket is given up.
import { OPEN, type SocketLike, type Timers } from './socket.ts';

/** Quiet this long, the client asks the server whether the connection still carries anything. */
export const HEARTBEAT_MS = 15_000;
/** Asked (a ping after quiet, or after sending a message), nothing this long: the connection is dead. */
export const PONG_TIMEOUT_MS = 4_000;
const PING = JSON.stringify({ message_type: 'ping' });

export function createLiveness({
  timers,
  socket,
  onStalled,
}: {
  timers: Timers;
  /** The socket in use now, if any. */
  socket: () => SocketLike | null;
  /** `ws` did not answer a ping in time (and is still the one in use). */
  onStalled: (ws: SocketLike) => void;
}) {
  // Liveness: when a frame last came, the next check, and the answer a ping waits for.
  let lastHeard = 0;
  let heartbeat: unknown = null;
  let pongDue: unknown = null;

  const stop = () => {
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
    const ws = socket();
    if (!ws || ws.readyState !== OPEN || pongDue !== null) return;
    pongDue = timers.setTimeout(() => {
      pongDue = null;
      if (socket() === ws) onStalled(ws);
    }, PONG_TIMEOUT_MS);
    try {
      ws.send(PING);
    } catch {
      // A socket that cannot send is dead too: the deadline above says so.
    }
  };

  return { heard, probe, stop };
}
