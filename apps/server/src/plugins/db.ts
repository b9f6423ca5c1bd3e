import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { type Database, openDatabase } from '../db/database.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
  }
}

export interface DbPluginOptions {
  config: Config;
  /** A database opened by the caller (tests); it is then also closed by the caller. */
  db?: Database;
}

export default fp<DbPluginOptions>(
  async (app: FastifyInstance, { config, db }) => {
    const database = db ?? (await openDatabase({ ...config.db }));
    app.decorate('db', database);
    if (!db) {
      app.addHook('onClose', async () => {
        await database.close();
      });
      const { applied, modified } = await database.migrate();
      if (applied.length) app.log.info({ applied }, `applied ${applied.length} migration(s)`);
      if (modified.length) app.log.warn({ modified }, 'migrations changed after they were applied');
    }
    app.log.info(
      `database: ${database.kind === 'postgres' ? 'PostgreSQL' : `embedded PGlite in ${config.db.dataDir}`}`,
    );
  },
  { name: 'db' },
);
