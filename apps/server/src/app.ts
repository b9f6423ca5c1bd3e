import cookie from '@fastify/cookie';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import accountsRoutes from './modules/accounts/accounts.routes.ts';
import healthRoutes from './modules/health/health.routes.ts';
import siteRoutes from './modules/site/site.routes.ts';
import dbPlugin from './plugins/db.ts';
import errorsPlugin from './plugins/errors.ts';
import securityHeaders from './plugins/security-headers.ts';
import webApp from './plugins/web-app.ts';

/** One log line per request, when it completes, instead of Fastify's two. */
class OneLineRequestLog extends LogController {
  override incomingRequest() {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (error) request.log.error({ ...line, err: error }, 'request failed');
    else request.log.info(line, `${line.method} ${line.url} ${line.status} ${line.ms}ms`);
  }
}

export interface AppDeps {
  /** An already-open database (tests); otherwise one is opened from config and migrated. */
  db?: Database;
}

/** Builds the whole application. Never listens: server.ts does that. */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.cookie', 'req.headers.authorization', 'req.headers["x-csrftoken"]'],
      ...(config.logFormat === 'pretty'
        ? {
            transport: {
              target: 'pino-pretty',
              options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname,reqId,method,url,status,ms' },
            },
          }
        : {}),
    },
    logController: new OneLineRequestLog(),
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    // The spec names API paths with a trailing slash; clients that drop it still reach them.
    routerOptions: { ignoreTrailingSlash: true },
  });

  await app.register(errorsPlugin);
  await app.register(securityHeaders);
  await app.register(cookie);
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  await app.register(dbPlugin, { config, db: deps.db });

  await app.register(healthRoutes);
  await app.register(siteRoutes, { config });
  await app.register(accountsRoutes, { prefix: '/_allauth/browser/v1' });

  await app.register(webApp, config.web);
  return app;
}
