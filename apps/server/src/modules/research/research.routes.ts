import { ZResearch, ZRowParams } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import type { ResearchService } from './research.service.ts';

const NOT_FOUND = 'Research report not found.';

export default async function researchRoutes(fastify: FastifyInstance, { research }: { research: ResearchService }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Any id that is not a row id, and another user's, is simply not found.
  app.get(
    '/api/web-research/:id/',
    {
      config: {
        auth: 'user',
        notFound: NOT_FOUND,
        docs: {
          tag: 'History',
          summary: 'One research report',
          responses: { 200: { description: 'The research, done or not.' } },
        },
      },
      schema: { params: ZRowParams, response: { 200: ZResearch } },
    },
    async (request) => {
      const found = await research.get(requireUser(request).id, request.params.id);
      if (!found) throw new AppError('not_found', NOT_FOUND);
      return found;
    },
  );
}
