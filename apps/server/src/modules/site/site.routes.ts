import { type TSiteInfo, ZSiteInfo } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../../config.ts';

/** Public facts about this installation that the web app shows (footer, about page). */
export default async function siteRoutes(fastify: FastifyInstance, { config }: { config: Config }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const info: TSiteInfo = {
    creator: { ...config.creator, email: config.creator.email ?? null },
  };
  app.get(
    '/api/site/',
    {
      config: {
        auth: 'public',
        docs: {
          tag: 'Site',
          summary: 'About this installation',
          description: 'Public facts the host configured (the footer and about page show them). Cached for a minute.',
          responses: { 200: { description: 'The site information.' } },
        },
      },
      schema: { response: { 200: ZSiteInfo } },
    },
    async (_request, reply) => reply.header('Cache-Control', 'public, max-age=60').send(info),
  );
}
