// One chat socket, from its upgrade to its close: who may open it, what it receives, the frames it
// sends (each answered only while its session lives) and the history it gets first.
import { CLOSE_CODES } from '@daybook/contracts';
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { UserRow } from '../accounts/index.ts';
import type { SessionsService } from '../accounts/sessions.service.ts';
import { type ChatHub, type ChatUser, SESSION_ENDED, type Subscriber } from './chat.hub.ts';
import type { Channel } from './chat.repo.ts';
import type { ChatService } from './chat.service.ts';

export const MAX_SOCKETS_PER_USER = 10;
// More frames than this from one user within the window, over all their sockets and reconnects,
// close the socket that sent it with 1013 (try again later).
export const FLOOD = { max: 20, windowMs: 10_000 };
/** The web client's liveness check, as it sends it, and the answer (see ZPingRequest). */
const PING_FRAME = JSON.stringify({ message_type: 'ping' });
const PONG_FRAME = JSON.stringify({ message_type: 'pong' });

/** A write that named a user no longer there (PostgreSQL's, or Prisma's, foreign-key violation). */
const accountGone = (err: unknown) => ['23503', 'P2003'].includes(String((err as { code?: unknown } | null)?.code));

export interface OpenSocket {
  socket: WebSocket;
  sessionId: string;
  /** Answered the last ping. */
  alive: boolean;
}

/** What every chat socket of this app shares. */
export interface SocketContext {
  chat: ChatService;
  hub: ChatHub;
  sessions: Pick<SessionsService, 'isLive'>;
  maxConnections: number;
  dailyMessage?: (userId: number, id: number) => Promise<{ date: string; text: string } | null>;
  originOk: (request: FastifyRequest) => boolean;
  /** Counts a frame against the user's flood budget; false once it is spent. */
  spend: (userId: number) => boolean;
  open: Set<OpenSocket>;
}

/** When a joined socket starts receiving events, and stream pieces besides. */
interface Delivery {
  joined: boolean;
  historySent: boolean;
}

/** Frames per user in the flood window, spent by each frame. */
export function createFloodBudget() {
  // Kept when sockets close, so reconnecting does not reset it.
  const budgets = new Map<number, number[]>();
  return {
    spend(userId: number) {
      const now = Date.now();
      const recent = budgets.get(userId) ?? [];
      while (recent.length && (recent[0] ?? 0) <= now - FLOOD.windowMs) recent.shift();
      budgets.set(userId, recent);
      if (recent.length >= FLOOD.max) return false;
      recent.push(now);
      return true;
    },
    /** Forgets the users with no frame left in the window. */
    sweep() {
      const now = Date.now();
      for (const [userId, recent] of budgets) if ((recent.at(-1) ?? 0) <= now - FLOOD.windowMs) budgets.delete(userId);
    },
  };
}

/** The handler of a chat socket on `channel` (@fastify/websocket's). */
export async function openChatSocket(ctx: SocketContext, channel: Channel, socket: WebSocket, request: FastifyRequest) {
  const admitted = admit(ctx, socket, request);
  if (!admitted) return;
  const { user, sessionId } = admitted;
  const chatUser: ChatUser = {
    id: user.id,
    learnFromChats: user.learnFromChats,
    onboarded: user.onboardedAt !== null,
  };
  const delivery = subscribe(ctx, channel, socket, chatUser, sessionId);
  readFrames(ctx, channel, socket, request, chatUser, sessionId);
  await sendHistory(ctx, channel, socket, request, chatUser, delivery);
}

/** The socket's user and session, or null once the socket is closed for being refused. */
function admit(
  { hub, maxConnections, originOk }: SocketContext,
  socket: WebSocket,
  request: FastifyRequest,
): { user: UserRow; sessionId: string } | null {
  const user = request.user;
  const sessionId = request.session?.id;
  if (!user || !sessionId || !originOk(request)) {
    socket.close(CLOSE_CODES.policyViolation, user ? 'Origin not allowed' : 'Authentication required');
    return null;
  }
  if (hub.count(user.id) >= MAX_SOCKETS_PER_USER) {
    socket.close(CLOSE_CODES.tryAgainLater, 'Too many connections');
    return null;
  }
  // An overloaded server turns new sockets away; clients retry after 15 s.
  if (hub.total() >= maxConnections) {
    socket.close(CLOSE_CODES.tryAgainLater, 'Server busy');
    return null;
  }
  return { user, sessionId };
}

/** Adds the socket to the hub and the pinged sockets until it closes. */
function subscribe(
  { hub, open }: SocketContext,
  channel: Channel,
  socket: WebSocket,
  chatUser: ChatUser,
  sessionId: string,
): Delivery {
  const entry: OpenSocket = { socket, sessionId, alive: true };
  // Counted (and closed with its session) from now on; it receives events once it has joined.
  // Pieces of answers before the history are in the history's `streams` (their text so far).
  const delivery: Delivery = { joined: false, historySent: false };
  const subscriber: Subscriber = {
    channel,
    user: chatUser,
    sessionId,
    send: (event) => {
      if (!delivery.joined || (!delivery.historySent && event.message_type === 'stream')) return;
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
    },
    close: (code, reason) => socket.close(code, reason),
    terminate: () => socket.terminate(),
  };
  const remove = hub.add(chatUser.id, subscriber);
  open.add(entry);
  socket.on('close', () => {
    remove();
    open.delete(entry);
  });
  socket.on('pong', () => {
    entry.alive = true;
  });
  return delivery;
}

/** Hands the socket's frames to the chat, and answers its pings. */
function readFrames(
  { chat, sessions, spend }: SocketContext,
  channel: Channel,
  socket: WebSocket,
  request: FastifyRequest,
  chatUser: ChatUser,
  sessionId: string,
) {
  const failed = (err: unknown) => {
    // The account was deleted while its message was being answered: nothing is left to write to.
    if (socket.readyState !== socket.OPEN && accountGone(err)) {
      request.log.info({ userId: chatUser.id }, 'chat message dropped: the account is gone');
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
    if (!spend(chatUser.id)) {
      socket.close(CLOSE_CODES.tryAgainLater, 'Too many messages');
      return;
    }
    const frame = isBinary ? '' : data.toString();
    frames = frames
      .then(async () => {
        // A frame that arrived is handled even if the tab has gone since (a message sent, or Stop
        // pressed, just before a page change): what the user sent is not lost.
        if (!(await sessions.isLive(sessionId))) {
          if (socket.readyState === socket.OPEN) socket.close(CLOSE_CODES.policyViolation, SESSION_ENDED);
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
}

/** Joins the socket to its events and sends it the latest history, with what is being answered. */
async function sendHistory(
  { chat, hub, dailyMessage }: SocketContext,
  channel: Channel,
  socket: WebSocket,
  request: FastifyRequest,
  chatUser: ChatUser,
  delivery: Delivery,
) {
  const userId = chatUser.id;
  try {
    // Opened on a daily message: answers have it in context. An unknown or another user's id is
    // ignored (the web app says it was not found); the chat works as usual.
    const dmid = channel === 'chat' ? (request.query as { dmid?: unknown }).dmid : undefined;
    if (dailyMessage && typeof dmid === 'string' && /^\d{1,9}$/.test(dmid) && Number(dmid) > 0)
      chatUser.dailyMessage = await dailyMessage(userId, Number(dmid));
    // Greet before joining the hub, so the greeting arrives once: in the history.
    if (channel === 'onboarding') await chat.greetOnboarding(userId);
    // Joined before history is read: a message published meanwhile arrives twice at most, never
    // zero times, and the client merges by message_id.
    delivery.joined = true;
    const history = await chat.history(userId, channel, 50);
    const researches = channel === 'chat' ? await chat.activeResearches(userId) : [];
    // Read with the history's sending, in one go: no piece of an answer goes missing or comes twice.
    const streams = hub.liveStreams(userId, channel);
    const answering = hub.answering(userId, channel);
    delivery.historySent = true;
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
}
