// WebSockets /ws/chat/ and /ws/onboarding/ (the session cookie authenticates the upgrade) and
// older history over HTTP. A socket lives as long as its session: it closes with 1008 when the
// session ends, and answers no message once it has.
//
// The routes are in groups: the sockets (chat.socket.routes.ts, each socket's handling in
// chat.socket.ts) and the history (chat.history.routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { chatHistoryRoutes } from './chat.history.routes.ts';
import { type ChatSocketOptions, chatSocketRoutes } from './chat.socket.routes.ts';

export { PING_INTERVAL_MS } from './chat.socket.routes.ts';
export { FLOOD, MAX_SOCKETS_PER_USER } from './chat.socket.ts';

export type ChatRoutesOptions = ChatSocketOptions;

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

export default async function chatRoutes(app: FastifyInstance, options: ChatRoutesOptions) {
  chatSocketRoutes(app, options);
  chatHistoryRoutes(app, options);
}
