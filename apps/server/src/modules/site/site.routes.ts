import type { TSiteInfo } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';

/** Public facts about this installation that the web app shows (footer, about page). */
export default async function siteRoutes(app: FastifyInstance, { config }: { config: Config }) {
  const info: TSiteInfo = {
    creator: { ...config.creator, email: config.creator.email ?? null },
  };
  app.get('/api/site/', async (_request, reply) => reply.header('Cache-Control', 'public, max-age=60').send(info));
}
