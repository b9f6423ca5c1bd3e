// GET /api/chat/search/: the signed-in user's chat messages containing a text, newest first.
import { ZChatSearchQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../../lib/auth.ts';
import { perKeyGate } from '../memories/memories.gate.ts';
import type { ChatSearchService } from './chat-search.service.ts';

/**
 * Searches run at most this many at a time per user (as the memories search): a rare word walks
 * the user's whole history, so one user's flood competes with others as a couple of requests.
 */
export const SEARCHES_AT_ONCE_PER_USER = 2;

export default async function chatSearchRoutes(app: FastifyInstance, { search }: { search: ChatSearchService }) {
  const gate = perKeyGate(SEARCHES_AT_ONCE_PER_USER);
  app.get('/api/chat/search/', async (request, reply) => {
    const user = requireUser(request);
    const query = ZChatSearchQuery.parse(request.query);
    const page = await gate(user.id, () => search.search(user.id, query.q, query.limit, query.before));
    return reply.header('Cache-Control', 'no-store').send(page);
  });
}
