import type { THealth, TReadiness } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';

export default async function healthRoutes(app: FastifyInstance) {
  app.get('/healthz', async (): Promise<THealth> => ({ status: 'ok', uptime_s: Math.round(process.uptime()) }));

  // Ready means: the database answers and every migration on disk has been applied.
  app.get('/readyz', async (request, reply) => {
    let body: TReadiness;
    try {
      const pending = await app.db.pendingMigrations();
      body = {
        status: pending.length ? 'not_ready' : 'ready',
        database: 'ok',
        migrations: { pending },
      };
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      body = { status: 'not_ready', database: 'unreachable', migrations: { pending: [] } };
    }
    return reply
      .header('Cache-Control', 'no-store')
      .status(body.status === 'ready' ? 200 : 503)
      .send(body);
  });
}
