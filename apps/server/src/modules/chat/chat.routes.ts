// WebSockets /ws/chat/ and /ws/onboarding/ (the session cookie authenticates the upgrade) and
// older history over HTTP. A socket lives as long as its session: it closes with 1008 when the
// session ends, and answers no message once it has.
import { CLOSE_CODES, ZChatHistoryQuery } from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { requireUser } from '../../lib/auth.ts';
import type { SessionsService } from '../accounts/sessions.service.ts';
import { type ChatHub, type ChatUser, SESSION_ENDED, type Subscriber } from './chat.hub.ts';
import type { Channel } from './chat.repo.ts';
import { type ChatService, PENDING_HEARTBEAT_MS } from './chat.service.ts';

export const MAX_SOCKETS_PER_USER = 10;
// More frames than this from one user within the window, over all their sockets and reconnects,
// close the socket that sent it with 1013 (try again later).
export const FLOOD = { max: 20, windowMs: 10_000 };
export const PING_INTERVAL_MS = 30_000;
/** The web client's liveness check, as it sends it, and the answer (see ZPingRequest). */
const PING_FRAME = JSON.stringify({ message_type: 'ping' });
const PONG_FRAME = JSON.stringify({ message_type: 'pong' });

export interface ChatRoutesOptions {
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

/**
 * Errors on sockets (@fastify/websocket's errorHandler): a malformed frame is the client's doing
 * (a warning, without its content), a dropped connection is routine, anything else is ours.
 */
export function socketErrorHandler(error: Error & { code?: string }, socket: WebSocket, request: FastifyRequest) {
  if (error.code?.startsWith('WS_ERR_')) request.log.warn({ code: error.code }, 'malformed websocket frame');
  else if (error.code === 'ECONNRESET' || error.code === 'EPIPE')
    request.log.debug({ code: error.code }, 'socket dropped');
  else request.log.error({ err: error }, 'websocket handler failed');
  socket.terminate();
}

/** A write that named a user no longer there (PostgreSQL's, or Prisma's, foreign-key violation). */
const accountGone = (err: unknown) => ['23503', 'P2003'].includes(String((err as { code?: unknown } | null)?.code));

interface OpenSocket {
  socket: WebSocket;
  sessionId: string;
  /** Answered the last ping. */
  alive: boolean;
}

export default async function chatRoutes(
  app: FastifyInstance,
  {
    chat,
    hub,
    sessions,
    allowedOrigins,
    maxConnections,
    pingIntervalMs = PING_INTERVAL_MS,
    dailyMessage,
  }: ChatRoutesOptions,
) {
  const originOk = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    return !origin || allowedOrigins.has(origin) || origin === `${request.protocol}://${request.host}`;
  };

  // Frames per user in the flood window; kept when sockets close, so reconnecting does not reset it.
  const budgets = new Map<number, number[]>();
  const spend = (userId: number) => {
    const now = Date.now();
    const recent = budgets.get(userId) ?? [];
    while (recent.length && (recent[0] ?? 0) <= now - FLOOD.windowMs) recent.shift();
    budgets.set(userId, recent);
    if (recent.length >= FLOOD.max) return false;
    recent.push(now);
    return true;
  };

  const open = new Set<OpenSocket>();
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
    const now = Date.now();
    for (const [userId, recent] of budgets) if ((recent.at(-1) ?? 0) <= now - FLOOD.windowMs) budgets.delete(userId);
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

  const connect = (channel: Channel) => async (socket: WebSocket, request: FastifyRequest) => {
    const user = request.user;
    const sessionId = request.session?.id;
    if (!user || !sessionId || !originOk(request)) {
      socket.close(CLOSE_CODES.policyViolation, user ? 'Origin not allowed' : 'Authentication required');
      return;
    }
    if (hub.count(user.id) >= MAX_SOCKETS_PER_USER) {
      socket.close(CLOSE_CODES.tryAgainLater, 'Too many connections');
      return;
    }
    // An overloaded server turns new sockets away; clients retry after 15 s.
    if (hub.total() >= maxConnections) {
      socket.close(CLOSE_CODES.tryAgainLater, 'Server busy');
      return;
    }
    const chatUser: ChatUser = {
      id: user.id,
      learnFromChats: user.learnFromChats,
      onboarded: user.onboardedAt !== null,
    };
    const entry: OpenSocket = { socket, sessionId, alive: true };
    // Counted (and closed with its session) from now on; it receives events once it has joined.
    let joined = false;
    // Pieces of answers before the history are in the history's `streams` (their text so far).
    let historySent = false;
    const subscriber: Subscriber = {
      channel,
      user: chatUser,
      sessionId,
      send: (event) => {
        if (!joined || (!historySent && event.message_type === 'stream')) return;
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
      },
      close: (code, reason) => socket.close(code, reason),
      terminate: () => socket.terminate(),
    };
    const remove = hub.add(user.id, subscriber);
    open.add(entry);
    socket.on('close', () => {
      remove();
      open.delete(entry);
    });
    socket.on('pong', () => {
      entry.alive = true;
    });

    const failed = (err: unknown) => {
      // The account was deleted while its message was being answered: nothing is left to write to.
      if (socket.readyState !== socket.OPEN && accountGone(err)) {
        request.log.info({ userId: user.id }, 'chat message dropped: the account is gone');
        return;
      }
      request.log.error({ err }, 'chat message failed');
      if (socket.readyState === socket.OPEN) {
        socket.send(
          JSON.stringify({
            message_type: 'error',
            author_type: 'system',
            code: 'invalid_message',
            raw_text: 'Failed to process your message. Please try again.',
          }),
        );
      }
    };
    // Frames of one socket are handled in order, each after its session is found still live.
    let frames: Promise<unknown> = Promise.resolve();
    socket.on('message', (data, isBinary) => {
      // A client asking whether the connection lives gets its answer at once, outside the budget.
      if (!isBinary && data.toString() === PING_FRAME) {
        if (socket.readyState === socket.OPEN) socket.send(PONG_FRAME);
        return;
      }
      if (!spend(user.id)) {
        socket.close(CLOSE_CODES.tryAgainLater, 'Too many messages');
        return;
      }
      const frame = isBinary ? '' : data.toString();
      frames = frames
        .then(async () => {
          if (socket.readyState !== socket.OPEN) return;
          if (!(await sessions.isLive(sessionId))) {
            socket.close(CLOSE_CODES.policyViolation, SESSION_ENDED);
            return;
          }
          // Not awaited: the reply streams while the next frames are read (the service queues them).
          chat
            .receive(chatUser, channel, frame)
            .then((refusal) => {
              if (refusal && socket.readyState === socket.OPEN) socket.send(JSON.stringify(refusal));
            })
            .catch(failed);
        })
        .catch(failed);
    });

    try {
      // Opened on a daily message: answers have it in context. An unknown or another user's id is
      // ignored (the web app says it was not found); the chat works as usual.
      const dmid = channel === 'chat' ? (request.query as { dmid?: unknown }).dmid : undefined;
      if (dailyMessage && typeof dmid === 'string' && /^\d{1,9}$/.test(dmid) && Number(dmid) > 0)
        chatUser.dailyMessage = await dailyMessage(user.id, Number(dmid));
      // Greet before joining the hub, so the greeting arrives once: in the history.
      if (channel === 'onboarding') await chat.greetOnboarding(user.id);
      // Joined before history is read: a message published meanwhile arrives twice at most, never
      // zero times, and the client merges by message_id.
      joined = true;
      const history = await chat.history(user.id, channel, 50);
      const researches = channel === 'chat' ? await chat.activeResearches(user.id) : [];
      // Read with the history's sending, in one go: no piece of an answer goes missing or comes twice.
      const streams = hub.liveStreams(user.id, channel);
      const answering = hub.answering(user.id, channel);
      historySent = true;
      if (socket.readyState === socket.OPEN)
        socket.send(
          JSON.stringify({
            message_type: 'history',
            messages: history.results,
            has_more: history.has_more,
            ...(streams.length ? { streams } : {}),
            ...(answering.length ? { answering } : {}),
            ...(researches.length ? { researches } : {}),
          }),
        );
    } catch (err) {
      request.log.error({ err }, 'could not send chat history');
      socket.close(CLOSE_CODES.tryAgainLater, 'Try again later');
    }
  };

  app.get('/ws/chat/', { websocket: true }, connect('chat'));
  app.get('/ws/onboarding/', { websocket: true }, connect('onboarding'));

  app.get('/api/chat/messages/', async (request, reply) => {
    const user = requireUser(request);
    const query = ZChatHistoryQuery.parse(request.query);
    const body = await chat.historyJson(user.id, query.channel, query.limit, query.before);
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
