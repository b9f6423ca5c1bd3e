// WebSockets /ws/chat/ and /ws/onboarding/, and the timers that look after their sockets: pings,
// sessions that ended elsewhere, and answers left pending. Each socket's handling is in chat.socket.ts.
import { CLOSE_CODES } from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SessionsService } from '../accounts/sessions.service.ts';
import { type ChatHub, SESSION_ENDED } from './chat.hub.ts';
import { type ChatService, PENDING_HEARTBEAT_MS } from './chat.service.ts';
import { createFloodBudget, type OpenSocket, openChatSocket, type SocketContext } from './chat.socket.ts';

export const PING_INTERVAL_MS = 30_000;

export interface ChatSocketOptions {
  chat: ChatService;
  hub: ChatHub;
  sessions: Pick<SessionsService, 'isLive'>;
  allowedOrigins: Set<string>;
  maxConnections: number;
  /** Sockets are pinged this often; one that has not answered the previous ping is dropped. */
  pingIntervalMs?: number;
  /** The user's daily message `id` (from /ws/chat/?dmid=), or null for another user's or none. */
  dailyMessage?: (userId: number, id: number) => Promise<{ date: string; text: string } | null>;
}

export function chatSocketRoutes(
  app: FastifyInstance,
  {
    chat,
    hub,
    sessions,
    allowedOrigins,
    maxConnections,
    pingIntervalMs = PING_INTERVAL_MS,
    dailyMessage,
  }: ChatSocketOptions,
) {
  const originOk = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    return !origin || allowedOrigins.has(origin) || origin === `${request.protocol}://${request.host}`;
  };
  const budget = createFloodBudget();
  const open = new Set<OpenSocket>();
  keepSockets(app, { chat, sessions, open, sweep: budget.sweep, pingIntervalMs });

  const ctx: SocketContext = { chat, hub, sessions, maxConnections, dailyMessage, originOk, spend: budget.spend, open };
  app.get('/ws/chat/', { websocket: true }, (socket, request) => openChatSocket(ctx, 'chat', socket, request));
  app.get('/ws/onboarding/', { websocket: true }, (socket, request) =>
    openChatSocket(ctx, 'onboarding', socket, request),
  );
}

/** Starts the ping and the pending-answer heartbeat, stopped when the app closes. */
function keepSockets(
  app: FastifyInstance,
  {
    chat,
    sessions,
    open,
    sweep,
    pingIntervalMs,
  }: {
    chat: ChatService;
    sessions: Pick<SessionsService, 'isLive'>;
    open: Set<OpenSocket>;
    sweep: () => void;
    pingIntervalMs: number;
  },
) {
  const endIfSignedOut = (sockets: OpenSocket[]) => {
    const sessionId = sockets[0]?.sessionId;
    if (!sessionId) return;
    sessions.isLive(sessionId).then(
      (live) => {
        if (!live) for (const s of sockets) s.socket.close(CLOSE_CODES.policyViolation, SESSION_ENDED);
      },
      (err) => app.log.warn({ err }, 'session check failed'),
    );
  };
  // Dead connections (no pong) give their slot back; sessions that expired or ended elsewhere (a
  // deactivation, another instance) close their sockets.
  const ping = setInterval(() => {
    const bySession = new Map<string, OpenSocket[]>();
    for (const s of open) {
      if (!s.alive) {
        s.socket.terminate();
        continue;
      }
      s.alive = false;
      s.socket.ping();
      bySession.set(s.sessionId, [...(bySession.get(s.sessionId) ?? []), s]);
    }
    for (const sockets of bySession.values()) endIfSignedOut(sockets);
    sweep();
  }, pingIntervalMs);
  ping.unref();

  // Answers another instance (or this one, before a restart) left unfinished get a note; those this
  // instance owes are marked alive meanwhile. See PENDING_STALE_SEC for why staleness is safe.
  const upkeep = () =>
    Promise.all([chat.keepPending(), chat.answerInterrupted()]).catch((err) =>
      app.log.warn({ err }, 'chat upkeep failed'),
    );
  const heartbeat = setInterval(upkeep, PENDING_HEARTBEAT_MS);
  heartbeat.unref();
  app.addHook('onReady', async () => {
    await upkeep();
  });
  app.addHook('onClose', async () => {
    clearInterval(ping);
    clearInterval(heartbeat);
  });
}
