// The database goes away under a running app (connections cut, new ones refused), then comes back:
// signed-in calls answer 503 in the documented error shape meanwhile, and work again after, with
// nobody restarting anything.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signedInUser } from '../test/factories.ts';
import { createTestApp, type TestApp } from '../test/test-app.ts';

const target = inject('testDb');

describe.runIf(target.kind === 'postgres')('the database going away', () => {
  let t: TestApp;
  let name = '';
  const admin = async (sql: string, params: unknown[] = []) => {
    if (target.kind !== 'postgres') return;
    const c = new pg.Client({ connectionString: target.adminUrl });
    await c.connect();
    await c.query(sql, params).finally(() => c.end());
  };
  const cut = async () => {
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
  };
  const restore = () => admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);

  beforeAll(async () => {
    t = await createTestApp();
    name = new URL(t.database.url ?? '').pathname.slice(1);
  });
  afterAll(async () => {
    await restore();
    await t?.close();
  });

  it('answers 503 in the error shape while it is gone, and works again once it is back', async () => {
    const { browser } = await signedInUser(t);
    expect((await browser.get('/api/memories/')).statusCode).toBe(200);
    await cut();
    try {
      for (const url of ['/api/memories/', '/api/users/me/', '/api/resources/']) {
        const res = await browser.get(url);
        expect(res.statusCode, url).toBe(503);
        expect(res.json()).toEqual({
          error: 'Daybook cannot reach its database just now. Please try again in a moment.',
          code: 'unavailable',
        });
        expect(res.headers['retry-after']).toBe('5');
      }
    } finally {
      await restore();
    }
    // Back without a restart: the pool makes new connections.
    const until = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < until && status !== 200) {
      status = (await browser.get('/api/memories/')).statusCode;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  });
});
