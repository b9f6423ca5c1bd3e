// GET /api/chat/search/: the signed-in user's chat messages containing a text, newest first.
import { ZChatSearchPage, ZChatSearchQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import { perKeyGate } from '../../lib/per-key-gate.ts';
import type { ChatSearchService } from './chat-search.service.ts';

/**
 * Searches run at most this many at a time per user (as the memories search): a rare word walks
 * the user's whole history, so one user's flood competes with others as a couple of requests.
 */
export const SEARCHES_AT_ONCE_PER_USER = 2;

export default async function chatSearchRoutes(fastify: FastifyInstance, { search }: { search: ChatSearchService }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const gate = perKeyGate(SEARCHES_AT_ONCE_PER_USER);
  app.get(
    '/api/chat/search/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'Chat',
          summary: 'Search the chat',
          description:
            "The user's and the assistant's chat messages (daily messages included; research reports by their readable text, never their JSON; not system notes or onboarding) containing `q`, case- and accent-insensitively, newest first. Open one at /chat?message=<message_id>.",
          responses: { 200: { description: 'Newest first.' } },
          queryNotes: {
            q: 'Taken literally (% and _ are not wildcards); trimmed, 1 to 200 characters.',
            limit: 'From 1 to 50.',
            before: "The next page: results older than this message_id (the last result's).",
          },
        },
      },
      schema: { querystring: ZChatSearchQuery, response: { 200: ZChatSearchPage } },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const query = request.query;
      const page = await gate(user.id, () => search.search(user.id, query.q, query.limit, query.before));
      return reply.header('Cache-Control', 'no-store').send(page);
    },
  );
}
