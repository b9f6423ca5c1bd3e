import { cp, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ZHealth, ZReadiness } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.ts';
import { loadConfig } from '../../config.ts';
import { openDatabase } from '../../db/database.ts';
import { applyMigrations, readMigrations } from '../../db/migrations.ts';
import { createTestApp, TEST_SECRET, type TestApp } from '../../test/test-app.ts';

describe('health and readiness', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('GET /healthz answers while the process is up', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(ZHealth.parse(res.json()).status).toBe('ok');
  });

  it('GET /readyz is ready when the database answers and every migration is applied', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(ZReadiness.parse(res.json())).toEqual({ status: 'ready', database: 'ok', migrations: { pending: [] } });
  });

  it('GET /readyz is 503 and names the migration when one is pending', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'daybook-mig-'));
    await cp(t.config.db.migrationsDir, dir, { recursive: true });
    await mkdir(path.join(dir, '29990101000000_future'));
    await writeFile(path.join(dir, '29990101000000_future', 'migration.sql'), 'SELECT 1;');
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', SECRET_KEY: TEST_SECRET, MIGRATIONS_DIR: dir });
    const db = await openDatabase({ url: t.database.url, dataDir: null, migrationsDir: dir });
    // The PGlite fallback starts empty: apply the real migrations, not the future one.
    if (!t.database.url)
      await db.withConnection(async (c) => applyMigrations(c, await readMigrations(t.config.db.migrationsDir)));
    const app = await buildApp(config, { db });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'not_ready', database: 'ok' });
      expect(res.json().migrations.pending).toContain('29990101000000_future');
    } finally {
      await app.close();
      await db.close();
    }
  });

  it('GET /readyz is 503 when the database does not answer', async () => {
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', SECRET_KEY: TEST_SECRET });
    const db = await openDatabase({
      url: 'postgres://nobody@127.0.0.1:1/none?connect_timeout=1',
      dataDir: null,
      migrationsDir: config.db.migrationsDir,
    });
    const app = await buildApp(config, { db });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'not_ready', database: 'unreachable', migrations: { pending: [] } });
    } finally {
      await app.close();
      await db.close();
    }
  });
});
