// Older chat history over HTTP, further back than the socket's first page.
import { ZChatHistoryPage, ZChatHistoryQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import type { ChatService } from './chat.service.ts';

export function chatHistoryRoutes(app: FastifyInstance, { chat }: { chat: ChatService }) {
  // The page arrives as JSON text, so it has no response schema to pass through.
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/chat/messages/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'Chat',
          summary: 'Older chat history',
          description:
            'The socket sends the latest 50 messages when it connects; this pages further back from the oldest one shown.',
          responses: { 200: { description: 'Oldest first.', schema: ZChatHistoryPage } },
          queryNotes: { before: 'Messages older than this message_id.' },
        },
      },
      schema: { querystring: ZChatHistoryQuery },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const query = request.query;
      const body = await chat.historyJson(user.id, query.channel, query.limit, query.before);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
