// Applies Prisma-format migrations (prisma/migrations/<name>/migration.sql) without Prisma's native
// engine. Rows in _prisma_migrations match Prisma's, so `prisma migrate deploy` stays compatible.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The two things the runner needs from a connection: PGlite and node-postgres both provide them. */
export interface SqlConnection {
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface AppliedMigration {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly migrationName?: string,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

// Prisma's own advisory lock key, so our runner and `prisma migrate` never run at once.
const ADVISORY_LOCK_KEY = 72707369;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export async function readMigrations(dir: string): Promise<Migration[]> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    throw new MigrationError(`Migrations folder not found: ${dir}`);
  }
  entries.sort();
  return Promise.all(
    entries.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

async function appliedMigrations(db: SqlConnection): Promise<AppliedMigration[]> {
  const exists = await db.query<{ exists: boolean }>(
    `SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS "exists"`,
  );
  if (!exists[0]?.exists) return [];
  return db.query<AppliedMigration>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );
}

/** Names of migrations on disk that the database has not finished applying. */
export async function pendingMigrations(db: SqlConnection, migrations: Migration[]): Promise<string[]> {
  const done = new Set(
    (await appliedMigrations(db)).filter((m) => m.finished_at && !m.rolled_back_at).map((m) => m.migration_name),
  );
  return migrations.filter((m) => !done.has(m.name)).map((m) => m.name);
}

export interface MigrateResult {
  applied: string[];
  modified: string[];
}

/** Applies every pending migration in order, each in its own transaction. Safe to run twice. */
export async function applyMigrations(db: SqlConnection, migrations: Migration[]): Promise<MigrateResult> {
  // The lock first: instances starting together wait here, and one creates the table (two
  // concurrent CREATE TABLE IF NOT EXISTS can both try, and one fails).
  await db.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK_KEY]);
  try {
    await db.exec(CREATE_TABLE);
    const rows = await appliedMigrations(db);
    const stuck = rows.find((r) => !r.finished_at && !r.rolled_back_at);
    if (stuck) {
      throw new MigrationError(
        `Migration ${stuck.migration_name} started but never finished. Inspect the database, then mark it rolled back ` +
          `(npx prisma migrate resolve --rolled-back ${stuck.migration_name}) before starting again.`,
        stuck.migration_name,
      );
    }
    const finished = new Map(rows.filter((r) => r.finished_at && !r.rolled_back_at).map((r) => [r.migration_name, r]));
    const applied: string[] = [];
    const modified: string[] = [];
    for (const migration of migrations) {
      const done = finished.get(migration.name);
      if (done) {
        if (done.checksum !== migration.checksum) modified.push(migration.name);
        continue;
      }
      await applyOne(db, migration);
      applied.push(migration.name);
    }
    return { applied, modified };
  } finally {
    await db.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_KEY]);
  }
}

async function applyOne(db: SqlConnection, migration: Migration) {
  const id = randomUUID();
  await db.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
     VALUES ($1, $2, $3, now(), 0)`,
    [id, migration.checksum, migration.name],
  );
  try {
    // Postgres DDL is transactional: a failing migration leaves no half-applied schema behind.
    await db.exec(`BEGIN;\n${migration.sql}\n;COMMIT;`);
  } catch (err) {
    await db.exec('ROLLBACK').catch(() => {});
    const reason = err instanceof Error ? err.message : String(err);
    await db.query(`UPDATE "_prisma_migrations" SET logs = $2, rolled_back_at = now() WHERE id = $1`, [id, reason]);
    throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${reason}`, migration.name);
  }
  await db.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
}
