import type { FastifyInstance } from 'fastify';

// Accounts do not exist yet: every visitor is anonymous. The answer keeps allauth's 401 shape.
export default async function accountsRoutes(app: FastifyInstance) {
  app.get('/auth/session', async (_request, reply) =>
    reply
      .status(401)
      .header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate, private')
      .send({ status: 401, data: { flows: [{ id: 'login' }, { id: 'signup' }] }, meta: { is_authenticated: false } }),
  );
}
