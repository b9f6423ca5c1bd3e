import { ZResourceList, ZResourcesQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import type { ResourcesService } from './resources.service.ts';

export default async function resourcesRoutes(
  fastify: FastifyInstance,
  { resources }: { resources: ResourcesService },
) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/api/resources/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'History',
          summary: 'Daily messages and research reports',
          description: 'Newest first; with `after`, the items newer than that date, oldest of them first.',
          responses: { 200: { description: 'A bare array of items.' } },
          queryNotes: {
            before:
              "Items older than this sort_date (the next page). ISO 8601 with an offset, e.g. an item's sort_date.",
            after: 'Items newer than this sort_date. Not together with before.',
          },
        },
      },
      schema: { querystring: ZResourcesQuery, response: { 200: ZResourceList } },
    },
    async (request) => resources.list(requireUser(request).id, request.query),
  );
}
