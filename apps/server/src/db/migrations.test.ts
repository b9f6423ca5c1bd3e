import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabaseUrl } from '../../../../tests/helpers/test-db.ts';
import { REPO_ROOT } from '../config.ts';
import { type Database, openDatabase } from './database.ts';
import { applyMigrations, MigrationError, pendingMigrations, readMigrations } from './migrations.ts';

const REAL_MIGRATIONS = path.join(REPO_ROOT, 'prisma/migrations');

async function migrationsWith(extra: Record<string, string>) {
  const dir = await mkdtemp(path.join(tmpdir(), 'daybook-mig-'));
  await cp(REAL_MIGRATIONS, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

const tableExists = (db: Database, table: string) =>
  db.withConnection(
    async (c) => (await c.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [table]))[0]?.t,
  );

const rows = (db: Database) =>
  db.withConnection((c) =>
    c.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      rolled_back_at: Date | null;
      logs: string | null;
    }>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at, logs FROM _prisma_migrations ORDER BY started_at',
    ),
  );

// The same behaviour on both engines the product supports.
const engines = [
  [
    'PGlite',
    async (dir: string) => ({ db: await openDatabase({ dataDir: null, migrationsDir: dir }), drop: async () => {} }),
  ],
  [
    'PostgreSQL',
    async (dir: string) => {
      // An empty database, not the pre-migrated template: these tests migrate it themselves.
      const created = await createDatabaseUrl();
      if (!created) return null;
      const db = await openDatabase({ url: created.url, dataDir: null, migrationsDir: dir });
      await db.withConnection((c) => c.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;'));
      return { db, drop: created.drop };
    },
  ],
] as const;

describe.each(engines)('migrations on %s', (_name, open) => {
  const opened: Array<{ db: Database; drop(): Promise<void> }> = [];
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.db.close();
      await o.drop();
    }
  });

  async function fresh(dir = REAL_MIGRATIONS) {
    const o = await open(dir);
    if (!o) return null;
    opened.push(o);
    return o.db;
  }

  it('answers driver queries with the same values Prisma reads, timestamps in UTC whatever the local zone', async (ctx) => {
    const db = await fresh();
    if (!db) return ctx.skip();
    await db.migrate();
    const user = await db.prisma.user.create({ data: { email: 'utc@example.com', passwordHash: null } });
    // A zone far from UTC, so reading the timestamp as local time would show.
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    const [row] = await db
      .query<{ id: number; email: string; createdAt: Date }>(
        'SELECT id, email, created_at AS "createdAt" FROM users WHERE email = $1',
        ['utc@example.com'],
      )
      .finally(() => {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      });
    expect(row).toEqual({ id: user.id, email: 'utc@example.com', createdAt: user.createdAt });
    expect(await db.query('SELECT 1 AS one WHERE $1::int IS NULL', [null])).toEqual([{ one: 1 }]);
  });

  it('applies every migration, records Prisma-compatible rows, and is a no-op the second time', async (ctx) => {
    const db = await fresh();
    if (!db) return ctx.skip();
    const migrations = await readMigrations(REAL_MIGRATIONS);
    const first = await db.migrate();
    expect(first.applied).toEqual(migrations.map((m) => m.name));
    expect(await tableExists(db, 'users')).toBe('users');

    const recorded = await rows(db);
    expect(recorded.map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
    for (const [i, r] of recorded.entries()) {
      const sql = migrations[i]?.sql ?? '';
      expect(r.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(r.finished_at).not.toBeNull();
    }

    expect(await db.migrate()).toEqual({ applied: [], modified: [] });
    expect(await rows(db)).toHaveLength(migrations.length);
    expect(await db.pendingMigrations()).toEqual([]);
  });

  it('rolls a failing migration back whole, records why, and applies it once fixed', async (ctx) => {
    const dir = await migrationsWith({
      '29990101000000_broken': 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;',
    });
    const db = await fresh(dir);
    if (!db) return ctx.skip();
    const error = await db.migrate().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).message).toMatch(
      /^Migration 29990101000000_broken failed and was rolled back: .*no_such_table/,
    );
    // Nothing of the broken migration stays behind; the ones before it are applied.
    expect(await tableExists(db, 'half_done')).toBeNull();
    expect(await tableExists(db, 'users')).toBe('users');
    const failed = (await rows(db)).find((r) => r.migration_name === '29990101000000_broken');
    expect(failed).toMatchObject({ finished_at: null, logs: expect.stringContaining('no_such_table') });
    expect(failed?.rolled_back_at).not.toBeNull();
    expect(await db.pendingMigrations()).toEqual(['29990101000000_broken']);

    await writeFile(path.join(dir, '29990101000000_broken', 'migration.sql'), 'CREATE TABLE half_done (id int);');
    expect((await db.migrate()).applied).toEqual(['29990101000000_broken']);
    expect(await tableExists(db, 'half_done')).toBe('half_done');
  });

  it('refuses to run past a migration that started and never finished', async (ctx) => {
    const db = await fresh();
    if (!db) return ctx.skip();
    await db.migrate();
    await db.withConnection((c) =>
      c.query(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ('x', 'y', '29990101000000_crashed')`,
      ),
    );
    await expect(db.migrate()).rejects.toThrow(/29990101000000_crashed started but never finished/);
  });

  it('marks memories learned in onboarding as such, and leaves the others alone', async (ctx) => {
    const SOURCE_MIGRATION = '20261121134500_onboarding_memory_source';
    // The migrations before it, then data as the older code wrote it, then the migration itself.
    const dir = await mkdtemp(path.join(tmpdir(), 'daybook-mig-'));
    await cp(REAL_MIGRATIONS, dir, { recursive: true });
    const held = path.join(tmpdir(), `held-${path.basename(dir)}`);
    await cp(path.join(dir, SOURCE_MIGRATION), held, { recursive: true });
    await rm(path.join(dir, SOURCE_MIGRATION), { recursive: true });
    const db = await fresh(dir);
    if (!db) return ctx.skip();
    await db.migrate();
    const user = await db.prisma.user.create({ data: { email: 'source@example.com', passwordHash: null } });
    const said = async (channel: string) =>
      (
        await db.prisma.chatMessage.create({
          data: { userId: user.id, channel, authorType: 'human', messageType: 'message', rawText: 'hi' },
        })
      ).id;
    const [interview, chat] = [await said('onboarding'), await said('chat')];
    const memory = (key: string, source: string, sourceMessageId: number | null) =>
      db.prisma.memory.create({ data: { userId: user.id, key, data: key, source, sourceMessageId } });
    await memory('from onboarding', 'chat', interview);
    await memory('from chat', 'chat', chat);
    await memory('typed in', 'user', null);
    await cp(held, path.join(dir, SOURCE_MIGRATION), { recursive: true });
    await rm(held, { recursive: true });
    expect((await db.migrate()).applied).toEqual([SOURCE_MIGRATION]);
    const sources = await db.prisma.memory.findMany({ select: { key: true, source: true }, orderBy: { id: 'asc' } });
    expect(sources).toEqual([
      { key: 'from onboarding', source: 'onboarding' },
      { key: 'from chat', source: 'chat' },
      { key: 'typed in', source: 'user' },
    ]);
  });

  it('reports migrations edited after they were applied', async (ctx) => {
    const dir = await migrationsWith({});
    const db = await fresh(dir);
    if (!db) return ctx.skip();
    await db.migrate();
    const [first] = await readMigrations(dir);
    await writeFile(path.join(dir, first?.name ?? '', 'migration.sql'), `${first?.sql}\n-- edited\n`);
    expect(await db.migrate()).toEqual({ applied: [], modified: [first?.name] });
  });
});

describe('readMigrations', () => {
  it('names a missing folder clearly', async () => {
    await expect(readMigrations('/nonexistent/migrations')).rejects.toThrow(
      'Migrations folder not found: /nonexistent/migrations',
    );
  });

  it('lists pending migrations in order', async () => {
    const db = await openDatabase({ dataDir: null, migrationsDir: REAL_MIGRATIONS });
    try {
      const migrations = await readMigrations(REAL_MIGRATIONS);
      await db.withConnection(async (c) => {
        expect(await pendingMigrations(c, migrations)).toEqual(migrations.map((m) => m.name));
        await applyMigrations(c, migrations);
        expect(await pendingMigrations(c, migrations)).toEqual([]);
      });
    } finally {
      await db.close();
    }
  });
});

describe('several instances starting at once', () => {
  it('apply the migrations once between them; the others wait and find nothing left to do', async (ctx) => {
    const created = await createDatabaseUrl();
    if (!created) return ctx.skip();
    const dbs = await Promise.all(
      [1, 2, 3].map(() => openDatabase({ url: created.url, dataDir: null, migrationsDir: REAL_MIGRATIONS })),
    );
    try {
      const [first] = dbs as [Database];
      await first.withConnection((c) => c.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;'));
      const migrations = await readMigrations(REAL_MIGRATIONS);
      const results = await Promise.all(dbs.map((db) => db.migrate()));
      const applied = results.flatMap((r) => r.applied);
      // Each migration applied by exactly one of them, in order, and recorded once.
      expect(applied.sort()).toEqual(migrations.map((m) => m.name).sort());
      expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
      expect((await rows(first)).map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
      for (const db of dbs) expect(await db.pendingMigrations()).toEqual([]);
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
      await created.drop();
    }
  });
});
