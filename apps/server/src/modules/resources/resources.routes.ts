import { ZResourcesQuery } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../../lib/auth.ts';
import type { ResourcesService } from './resources.service.ts';

export default async function resourcesRoutes(app: FastifyInstance, { resources }: { resources: ResourcesService }) {
  app.get('/api/resources/', async (request) => {
    const user = requireUser(request);
    return resources.list(user.id, ZResourcesQuery.parse(request.query));
  });
}
