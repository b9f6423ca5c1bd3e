// Builds the real app against a test database of its own, for app.inject and real HTTP tests.
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '../../../../tests/helpers/test-db.ts';
import { buildApp } from '../app.ts';
import { type Config, loadConfig } from '../config.ts';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  database: TestDatabase;
  close(): Promise<void>;
}

export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env });
  const database = await createTestDatabase();
  const app = await buildApp(config, { db: database.db });
  await app.ready();
  return {
    app,
    config,
    database,
    async close() {
      await app.close();
      await database.dispose();
    },
  };
}
