// GET /metrics for Prometheus, behind a bearer token, and the latency of every request. Registered
// only when METRICS_ENABLED is on; otherwise /metrics is an unknown path like any other.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../lib/errors.ts';
import { toApiError } from '../../plugins/errors.ts';
import type { Metrics } from './metrics.ts';

export interface MetricsRoutesOptions {
  metrics: Metrics;
  token: string;
}

/** Compared as digests, so neither the length nor the contents of the token leak through timing. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}

export default fp<MetricsRoutesOptions>(
  async (app: FastifyInstance, { metrics, token }) => {
    // The route's pattern (/api/memories/:id/), never the URL: labels hold no ids or user data.
    app.addHook('onResponse', async (request, reply) => {
      metrics.httpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    });

    app.get('/metrics', async (request, reply) => {
      if (!bearerMatches(request.headers.authorization, token)) {
        const { status, body } = toApiError(
          new AppError('unauthorized', 'Metrics need the token set in METRICS_TOKEN (Authorization: Bearer <token>).'),
        );
        return reply.status(status).header('WWW-Authenticate', 'Bearer realm="metrics"').send(body);
      }
      const text = await metrics.render();
      return reply.header('Cache-Control', 'no-store').type(metrics.contentType).send(text);
    });
  },
  { name: 'metrics', dependencies: ['errors'] },
);
