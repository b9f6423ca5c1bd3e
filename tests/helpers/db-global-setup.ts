// Decides once per run where integration tests get their databases: a real PostgreSQL server when
// one answers (TEST_DATABASE_URL, or the local one), else in-process PGlite so a fresh machine passes.
// With Postgres, a template database (migrated, with pg-boss's schema and Daybook's job queues made
// by one app built on it) makes each test file's own database a cheap copy that starts ready.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { buildApp } from '../../apps/server/src/app.ts';
import { loadConfig } from '../../apps/server/src/config.ts';
import { openDatabase, pgConnection } from '../../apps/server/src/db/database.ts';
import { applyMigrations, readMigrations } from '../../apps/server/src/db/migrations.ts';
import { databaseUrl, type TestDbTarget } from './test-db.ts';

const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../prisma/migrations');

async function tryConnect(url: string): Promise<pg.Client | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return client;
  } catch {
    return null;
  }
}

/** pg-boss installs its schema and the app its queues on start: done once here, not by every file's app. */
async function makeJobQueues(url: string) {
  const db = await openDatabase({ url, dataDir: null, migrationsDir: MIGRATIONS_DIR });
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SECRET_KEY: 'template-secret-key-0123456789-abcdefghijklmn',
    DATABASE_URL: url,
    WEATHER_PROVIDER: 'none',
  });
  const app = await buildApp(config, { db, dailySchedule: false });
  try {
    await app.ready();
  } finally {
    await app.close();
    await db.close();
  }
}

type Target = Awaited<ReturnType<typeof prepare>>;

// The server and end-to-end projects both name this setup: one template serves both (vitest loads
// the setups of all projects in one process), dropped when the last project's teardown runs.
const shared = globalThis as { __daybookTestDb?: { target: Promise<Target>; users: number } };

export default async function setup(project: TestProject) {
  shared.__daybookTestDb ??= { target: prepare(), users: 0 };
  const state = shared.__daybookTestDb;
  state.users += 1;
  const { provided, teardown } = await state.target;
  project.provide('testDb', provided);
  return async () => {
    state.users -= 1;
    if (state.users > 0) return;
    shared.__daybookTestDb = undefined;
    await teardown();
  };
}

async function prepare() {
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = await tryConnect(adminUrl);
  if (!admin) {
    if (process.env.REQUIRE_POSTGRES === '1')
      throw new Error(`PostgreSQL is required but ${adminUrl} does not answer.`);
    console.warn(`[tests] PostgreSQL at ${adminUrl} does not answer: integration tests use in-process PGlite.`);
    const provided: TestDbTarget = { kind: 'pglite', migrationsDir: MIGRATIONS_DIR };
    return { provided, teardown: async () => {} };
  }

  const prefix = `daybook_t_${randomBytes(3).toString('hex')}`;
  const template = `${prefix}_template`;
  await admin.query(`CREATE DATABASE "${template}"`);
  const client = new pg.Client({ connectionString: databaseUrl(adminUrl, template) });
  await client.connect();
  try {
    await applyMigrations(pgConnection(client), await readMigrations(MIGRATIONS_DIR));
  } finally {
    await client.end();
  }
  await makeJobQueues(databaseUrl(adminUrl, template));
  const provided: TestDbTarget = { kind: 'postgres', adminUrl, template, prefix, migrationsDir: MIGRATIONS_DIR };

  const teardown = async () => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${prefix}%`,
    ]);
    for (const { datname } of rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
    }
    await admin.end();
  };
  return { provided, teardown };
}
