import cookie from '@fastify/cookie';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import accountsRoutes from './modules/accounts/accounts.routes.ts';
import healthRoutes from './modules/health/health.routes.ts';
import siteRoutes from './modules/site/site.routes.ts';
import dbPlugin from './plugins/db.ts';
import errorsPlugin from './plugins/errors.ts';
import securityHeaders from './plugins/security-headers.ts';
import webApp from './plugins/web-app.ts';

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
    },
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
