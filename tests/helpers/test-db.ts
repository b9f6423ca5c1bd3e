// Gives each test file a database of its own, so files run in parallel without sharing rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../apps/server/src/db/database.ts';

export type TestDbTarget =
  | { kind: 'postgres'; adminUrl: string; template: string; prefix: string; migrationsDir: string }
  | { kind: 'pglite'; migrationsDir: string };

declare module 'vitest' {
  export interface ProvidedContext {
    testDb: TestDbTarget;
  }
}

export interface TestDatabase {
  db: Database;
  /** Connection string for a server started as a child process (Postgres only). */
  url?: string;
  dispose(): Promise<void>;
}

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates an empty, fully migrated database (a copy of the run's template on Postgres). */
export async function createDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> } | null> {
  const target = inject('testDb');
  if (target.kind !== 'postgres') return null;
  const name = `${target.prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: target.adminUrl });
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${target.template}"`);
        break;
      } catch (err) {
        // Two copies of one template cannot start at the same instant; the loser retries.
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(target.adminUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: target.adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => c.end());
    },
  };
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const target = inject('testDb');
  const created = await createDatabaseUrl();
  if (created) {
    const db = await openDatabase({ url: created.url, dataDir: null, migrationsDir: target.migrationsDir });
    return {
      db,
      url: created.url,
      async dispose() {
        await db.close();
        await created.drop();
      },
    };
  }
  const db = await openDatabase({ dataDir: null, migrationsDir: target.migrationsDir });
  await db.migrate();
  return { db, dispose: () => db.close() };
}
