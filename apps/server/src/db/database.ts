// One database handle for the app: PostgreSQL when a URL is given, otherwise an embedded PGlite
// stored in a data directory (or in memory). Both get the same migrations and the same Prisma client.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PGLITE_SEED_DIR } from '../config.ts';
import { type Prisma, PrismaClient } from '../generated/prisma/client.ts';
import { privateDir, tightenTree } from '../lib/private-files.ts';
import {
  applyMigrations,
  type MigrateResult,
  pendingMigrations,
  readMigrations,
  type SqlConnection,
} from './migrations.ts';
import { createPGlite } from './pglite-seed.ts';

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent PGlite is used. */
  url?: string;
  /** Folder for PGlite's files; `null` keeps PGlite in memory. */
  dataDir: string | null;
  migrationsDir: string;
  /**
   * Where an empty PGlite cluster is kept for new ones to start from (db/pglite-seed.ts); `null`
   * never keeps one. Unset: the checkout's cache (the tests' and tools' own databases).
   */
  seedDir?: string | null;
}

/**
 * A parameterised SQL query ($1, $2...) straight to the driver; rows come back as objects. With a
 * `name`, PostgreSQL keeps the statement parsed and planned on each connection, for the fixed texts
 * every request runs (a session's lookup costs a third of the database's time that way): one name
 * per text, and only for texts whose plan suits every parameter.
 */
/** The client or an open transaction: every repo method takes either. */
export type Tx = Prisma.TransactionClient | PrismaClient;

export type Query = <T>(text: string, params?: unknown[], name?: string) => Promise<T[]>;

/**
 * The embedded database's one connection, for the jobs module (pg-boss's `db` option). PGlite runs
 * one transaction at a time: a statement sent from inside a `prisma.$transaction` callback would wait
 * for that very transaction to end, so `inTransaction()` tells the caller it is in one.
 */
export interface JobsConnection {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number }>;
  inTransaction(): boolean;
}

export interface Database {
  kind: 'postgres' | 'pglite';
  /** PostgreSQL's connection string (the jobs module opens a small pool of its own). */
  url?: string;
  /** PGlite only: see JobsConnection. */
  jobsConnection?: JobsConnection;
  prisma: PrismaClient;
  /**
   * Bypasses Prisma, for the few queries on a chat turn's path: a quarter of the CPU time of a
   * Prisma query (see `npm run bench`). Everything else goes through `prisma`.
   */
  query: Query;
  /** Runs `fn` with a raw SQL connection (migrations, health checks). */
  withConnection<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T>;
  migrate(): Promise<MigrateResult>;
  pendingMigrations(): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface Driver {
  kind: Database['kind'];
  url?: string;
  jobsConnection?: JobsConnection;
  prisma: PrismaClient;
  query: Query;
  withConnection: Database['withConnection'];
  close(): Promise<void>;
}

// Prisma stores DateTime in `timestamp` columns as UTC; drivers would read them as local time.
const TIMESTAMP_OID = 1114;
/** A `timestamp` column's value, as the driver sends it ("2026-11-21 12:00:00.123") or inside JSON ("...T12:00:00.123"). */
export const parseUtcTimestamp = (value: string) => new Date(`${value.replace(' ', 'T')}Z`);
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID ? parseUtcTimestamp : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

function pgliteConnection(db: PGlite): SqlConnection {
  return {
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await db.query<T>(sql, params)).rows,
  };
}

export function pgConnection(client: pg.ClientBase): SqlConnection {
  return {
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  };
}

async function postgresDriver(url: string): Promise<Driver> {
  // UTC sessions: column defaults (CURRENT_TIMESTAMP into `timestamp`) are then written in UTC, as
  // every read assumes, whatever time zone the server is set to.
  // Idle connections stay 5 minutes (pg's default is 10 s): a quiet spell between bursts of chat
  // would otherwise cost new backends (a fork, a login, cold caches, every prepared statement
  // planned again) in the middle of the next burst.
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 300_000, options: '-c TimeZone=UTC' });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: 'postgres',
    url,
    prisma,
    query: async <T>(text: string, params: unknown[] = [], name?: string) =>
      (await pool.query({ name, text, values: params, types: pgTypes })).rows as T[],
    async withConnection(fn) {
      const client = await pool.connect();
      try {
        return await fn(pgConnection(client));
      } finally {
        client.release();
      }
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

export class DatabaseInUseError extends Error {}

/** PGlite is one process's database: a second process opening the same folder would corrupt it. */
async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const lockFile = path.join(dir, 'daybook.lock');
  const holder = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
  if (holder && holder !== process.pid) {
    let alive = true;
    try {
      process.kill(holder, 0);
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (alive) {
      throw new DatabaseInUseError(
        `The embedded database in ${dir} is in use by another Daybook process (pid ${holder}). Stop it first, or set DATABASE_URL to use PostgreSQL.`,
      );
    }
  }
  await writeFile(lockFile, String(process.pid));
  return () => rm(lockFile, { force: true });
}

/** Extensions the migrations create (PostgreSQL has them in contrib; PGlite loads them). */
const PGLITE_EXTENSIONS = { pg_trgm };

async function pgliteDriver(dataDir: string | null, seedDir: string | null): Promise<Driver> {
  let pglite: PGlite;
  let unlock = async () => {};
  if (dataDir) {
    const dir = path.resolve(dataDir, 'pglite');
    // Made private even when an older version created them open: PGlite writes its files 0666.
    await privateDir(path.resolve(dataDir));
    await privateDir(dir);
    const release = await lockDataDir(dir);
    unlock = async () => {
      await tightenTree(dir);
      await release();
    };
    pglite = await createPGlite(dir, { extensions: PGLITE_EXTENSIONS }, seedDir);
    await tightenTree(dir);
  } else {
    pglite = await createPGlite(undefined, { extensions: PGLITE_EXTENSIONS }, seedDir);
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  // Marks the async context of each interactive transaction's callback, for inTransaction().
  const transactions = new AsyncLocalStorage<{ open: boolean }>();
  const $transaction = prisma.$transaction.bind(prisma) as (arg: unknown, options?: unknown) => Promise<unknown>;
  Object.assign(prisma, {
    $transaction: (arg: unknown, options?: unknown) => {
      if (typeof arg !== 'function') return $transaction(arg, options);
      const marker = { open: true };
      return transactions
        .run(marker, () => $transaction(arg, options))
        .finally(() => {
          marker.open = false;
        });
    },
  });
  return {
    kind: 'pglite',
    jobsConnection: {
      async executeSql(text, values) {
        if (values?.length) {
          const result = await pglite.query(text, values, { rowMode: 'object' });
          return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
        }
        // pg-boss sends its schema and maintenance scripts (several commands, their own BEGIN and
        // COMMIT) without parameters: they need the simple protocol.
        try {
          const results = await pglite.exec(text);
          const last = results.at(-1);
          return { rows: last?.rows ?? [], rowCount: last?.affectedRows ?? 0 };
        } catch (err) {
          // A script that failed after its BEGIN leaves the one connection in an aborted transaction.
          await pglite.exec('ROLLBACK').catch(() => {});
          throw err;
        }
      },
      inTransaction: () => transactions.getStore()?.open === true,
    },
    prisma,
    query: async <T>(text: string, params: unknown[] = []) =>
      (await pglite.query<T>(text, params, { parsers: { [TIMESTAMP_OID]: parseUtcTimestamp } })).rows,
    withConnection: (fn) => fn(pgliteConnection(pglite)),
    async close() {
      await prisma.$disconnect();
      await pglite.close();
      await unlock();
    },
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const driver = options.url
    ? await postgresDriver(options.url)
    : await pgliteDriver(options.dataDir, options.seedDir === undefined ? PGLITE_SEED_DIR : options.seedDir);
  return {
    ...driver,
    async migrate() {
      const migrations = await readMigrations(options.migrationsDir);
      return driver.withConnection((conn) => applyMigrations(conn, migrations));
    },
    async pendingMigrations() {
      const migrations = await readMigrations(options.migrationsDir);
      return driver.withConnection((conn) => pendingMigrations(conn, migrations));
    },
    async ping() {
      await driver.withConnection((conn) => conn.query('SELECT 1'));
    },
  };
}
