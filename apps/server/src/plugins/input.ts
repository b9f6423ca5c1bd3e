// PostgreSQL text cannot hold NUL characters: a "\u0000" anywhere in a request would fail deep in
// the database and answer 500. They carry no meaning in text, so they are dropped on the way in.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { withoutNul } from '../lib/text.ts';

export default fp(async function inputPlugin(app: FastifyInstance) {
  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined && request.body !== null) request.body = withoutNul(request.body);
    if (request.query && typeof request.query === 'object') request.query = withoutNul(request.query);
  });
});
