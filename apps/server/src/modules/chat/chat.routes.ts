// WebSockets /ws/chat/ and /ws/onboarding/ (the session cookie authenticates the upgrade) and
// older history over HTTP.
import { CLOSE_CODES, ZChatHistoryQuery } from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { requireUser } from '../../lib/auth.ts';
import type { ChatHub } from './chat.hub.ts';
import type { Channel } from './chat.repo.ts';
import type { ChatService } from './chat.service.ts';

export const MAX_SOCKETS_PER_USER = 10;
// A burst larger than this within the window closes the socket with 1013 (try again later).
const FLOOD = { max: 20, windowMs: 10_000 };

export interface ChatRoutesOptions {
  chat: ChatService;
  hub: ChatHub;
  allowedOrigins: Set<string>;
  maxConnections: number;
}

export default async function chatRoutes(
  app: FastifyInstance,
  { chat, hub, allowedOrigins, maxConnections }: ChatRoutesOptions,
) {
  const originOk = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    return !origin || allowedOrigins.has(origin) || origin === `${request.protocol}://${request.host}`;
  };

  const connect = (channel: Channel) => async (socket: WebSocket, request: FastifyRequest) => {
    const user = request.user;
    if (!user || !originOk(request)) {
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
    const chatUser = { id: user.id, learnFromChats: user.learnFromChats, onboarded: user.onboardedAt !== null };
    const recent: number[] = [];
    let remove = () => {};
    // Joined before history is read: a message published meanwhile arrives twice at most, never
    // zero times, and the client merges by message_id.
    const joinHub = () => {
      if (socket.readyState !== socket.OPEN) return;
      remove = hub.add(user.id, {
        channel,
        user: chatUser,
        send: (event) => socket.readyState === socket.OPEN && socket.send(JSON.stringify(event)),
      });
    };
    socket.on('close', () => remove());
    socket.on('error', (err) => request.log.debug({ err }, 'socket error'));
    socket.on('message', (data, isBinary) => {
      const now = Date.now();
      recent.push(now);
      while (recent.length && (recent[0] ?? 0) < now - FLOOD.windowMs) recent.shift();
      if (recent.length > FLOOD.max) {
        socket.close(CLOSE_CODES.tryAgainLater, 'Too many messages');
        return;
      }
      const frame = isBinary ? '' : data.toString();
      chat
        .receive(chatUser, channel, frame)
        .then((refusal) => {
          if (refusal && socket.readyState === socket.OPEN) socket.send(JSON.stringify(refusal));
        })
        .catch((err) => {
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
        });
    });

    try {
      // Greet before joining the hub, so the greeting arrives once: in the history.
      if (channel === 'onboarding') await chat.greetOnboarding(user.id);
      joinHub();
      const history = await chat.history(user.id, channel, 50);
      if (socket.readyState === socket.OPEN)
        socket.send(JSON.stringify({ message_type: 'history', messages: history.results, has_more: history.has_more }));
    } catch (err) {
      request.log.error({ err }, 'could not send chat history');
      socket.close(CLOSE_CODES.tryAgainLater, 'Try again later');
    }
  };

  app.get('/ws/chat/', { websocket: true }, connect('chat'));
  app.get('/ws/onboarding/', { websocket: true }, connect('onboarding'));

  app.get('/api/chat/messages/', async (request) => {
    const user = requireUser(request);
    const query = ZChatHistoryQuery.parse(request.query);
    return chat.history(user.id, query.channel, query.limit, query.before);
  });
}
