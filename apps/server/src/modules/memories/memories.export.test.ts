// The memory export under load: a per-user hourly limit (429 with Retry-After), one export of a
// user at a time, and a file read in bounded batches.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MEMORY_EXPORTS_PER_HOUR, MEMORY_MESSAGES, ZMemoryExport } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { createTestApp, type TestApp } from '../../test/test-app.ts';
import { EXPORT_BATCH } from './memories.repo.ts';
import { EXPORT_REFUSAL_SPACING_MS } from './memories.service.ts';

let t: TestApp;
let base = '';
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

const EXPORT = '/api/memories/export/';

/** `n` memories of `userId` straight into the table (one statement), `size` characters of data each. */
async function insertMemories(userId: number, n: number, size = 20) {
  await t.database.db.query(
    `INSERT INTO memories (user_id, key, data, memory_type, source, created_at, updated_at)
     SELECT $1, 'fact ' || i, rpad('note ' || i || ' ', $3, 'x'), 'text', 'import', now(), now()
     FROM generate_series(1, $2) AS i`,
    [userId, n, size],
  );
}

describe('the export limit', () => {
  it(`allows ${MEMORY_EXPORTS_PER_HOUR} exports an hour, then answers 429 in the error shape with Retry-After`, async () => {
    const { browser } = await signedInUser(t);
    await browser.post('/api/memories/', { key: 'city', data: 'Lisbon' });
    for (let i = 0; i < MEMORY_EXPORTS_PER_HOUR; i++) expect((await browser.get(EXPORT)).statusCode).toBe(200);
    // Refused again and again (an attacker retrying at once), each with the same answer.
    const started = performance.now();
    for (let i = 0; i < 3; i++) {
      const limited = await browser.get(EXPORT);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: MEMORY_MESSAGES.exportLimit, code: 'rate_limited' });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(3500);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(limited.headers['content-disposition']).toBeUndefined();
    }
    // The first refusal comes at once, the next ones a second apart.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * EXPORT_REFUSAL_SPACING_MS - 50);
    expect(MEMORY_MESSAGES.exportLimit).toBe(
      `You can export your memories at most ${MEMORY_EXPORTS_PER_HOUR} times an hour. Try again later.`,
    );
    // The page and the rest of the account still work.
    expect((await browser.get('/api/memories/')).statusCode).toBe(200);
  });

  it("is each user's own: another user exports while one is limited", async () => {
    const limited = await signedInUser(t);
    const other = await signedInUser(t);
    await other.browser.post('/api/memories/', { key: 'city', data: 'Porto' });
    for (let i = 0; i < MEMORY_EXPORTS_PER_HOUR; i++) await limited.browser.get(EXPORT);
    expect((await limited.browser.get(EXPORT)).statusCode).toBe(429);
    const res = await other.browser.get(EXPORT);
    expect(res.statusCode).toBe(200);
    expect(ZMemoryExport.parse(res.json()).memories.map((m) => m.data)).toEqual(['Porto']);
  });

  it('counts in the database, so it holds across restarts and instances', async () => {
    const { browser, userId } = await signedInUser(t);
    for (let i = 0; i < MEMORY_EXPORTS_PER_HOUR; i++) {
      await t.database.db.query(`INSERT INTO rate_limit_hits (key, at) VALUES ($1, now())`, [
        `memory_export:user:${userId}`,
      ]);
    }
    expect((await browser.get(EXPORT)).statusCode).toBe(429);
  });
});

describe('one export of a user at a time', () => {
  /** Starts an export over real HTTP and reads only its headers: the rest waits in the socket. */
  function startExport(cookie: string) {
    return new Promise<{ status: number; stop: () => Promise<void> }>((resolve, reject) => {
      const req = http.get(`${base}${EXPORT}`, { headers: { cookie } }, (res) => {
        res.pause();
        resolve({
          status: res.statusCode ?? 0,
          stop: () =>
            new Promise((done) => {
              res.once('close', () => done());
              req.destroy();
            }),
        });
      });
      req.on('error', reject);
    });
  }
  const cookieOf = (browser: { cookies: Map<string, string> }) =>
    [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  it('refuses a second export while the first is still being written, without counting it', async () => {
    const big = await signedInUser(t);
    // 40 MB: more than the sockets hold, so the first download stays open until it is read.
    await insertMemories(big.userId, 4000, 10_000);
    const first = await startExport(cookieOf(big.browser));
    expect(first.status).toBe(200);

    const second = await big.browser.get(EXPORT);
    expect(second.statusCode).toBe(429);
    expect(second.json()).toEqual({ error: MEMORY_MESSAGES.exportRunning, code: 'rate_limited' });
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);

    // Another user is not held back by it.
    const other = await signedInUser(t);
    expect((await other.browser.get(EXPORT)).statusCode).toBe(200);

    // A download given up half-way frees the slot.
    await first.stop();
    await expect.poll(async () => (await big.browser.get(EXPORT)).statusCode, { timeout: 10_000 }).toBe(200);
    // The refusals did not count: two exports so far, the rest of the hour's allowance is left.
    const [row] = await t.database.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM rate_limit_hits WHERE key = $1`,
      [`memory_export:user:${big.userId}`],
    );
    expect(row?.n).toBe(2);
  });

  it('answers a client that asks again at once one refusal a second, however many connections it uses', async () => {
    const { browser } = await signedInUser(t);
    for (let i = 0; i < MEMORY_EXPORTS_PER_HOUR; i++) await browser.get(EXPORT);
    const started = performance.now();
    const answered: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const res = await browser.get(EXPORT);
        expect(res.statusCode).toBe(429);
        answered.push(performance.now() - started);
      }),
    );
    answered.sort((a, b) => a - b);
    for (let i = 1; i < answered.length; i++) {
      expect((answered[i] as number) - (answered[i - 1] as number)).toBeGreaterThan(EXPORT_REFUSAL_SPACING_MS - 100);
    }
  });

  it('lets many parallel requests through one at a time at most', async () => {
    const { browser, userId } = await signedInUser(t);
    await insertMemories(userId, 3 * EXPORT_BATCH);
    const answers = await Promise.all(Array.from({ length: 6 }, () => browser.get(EXPORT)));
    const statuses = answers.map((res) => res.statusCode);
    expect(statuses).toContain(200);
    for (const res of answers.filter((r) => r.statusCode !== 200)) {
      expect(res.statusCode).toBe(429);
      expect(res.json().error).toBe(MEMORY_MESSAGES.exportRunning);
    }
    for (const res of answers.filter((r) => r.statusCode === 200)) {
      expect(ZMemoryExport.parse(res.json()).memories).toHaveLength(3 * EXPORT_BATCH);
    }
  });
});

describe('the file', () => {
  it('is read in batches, oldest first, active memories only, and imports back whole', async () => {
    const { browser, userId } = await signedInUser(t);
    const n = 2 * EXPORT_BATCH + 7;
    // One statement: every row has the same created_at, so the order falls to the id.
    await insertMemories(userId, n);
    await t.database.db.query(
      `UPDATE memories SET deleted_at = now() WHERE user_id = $1 AND key IN ('fact 3', 'fact ${EXPORT_BATCH}')`,
      [userId],
    );
    // A type from before the fixed set reads as text, as on the Memories page.
    await t.database.db.query(
      `UPDATE memories SET memory_type = 'hobby', url = 'https://a.example' WHERE user_id = $1 AND key = 'fact 2'`,
      [userId],
    );
    const res = await browser.get(EXPORT);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="daybook-memories-\d{4}-\d{2}-\d{2}\.json"$/,
    );
    const file = ZMemoryExport.parse(res.json());
    const keys = Array.from({ length: n }, (_, i) => `fact ${i + 1}`).filter(
      (k) => k !== 'fact 3' && k !== `fact ${EXPORT_BATCH}`,
    );
    expect(file.memories.map((m) => m.key)).toEqual(keys);
    expect(res.json().memories[1]).toEqual({
      key: 'fact 2',
      data: expect.stringMatching(/^note 2 x+$/),
      memory_type: 'text',
      url: 'https://a.example',
      frequency_description: null,
    });
    expect(Object.keys(res.json())).toEqual(['format', 'version', 'exported_at', 'memories']);

    const to = await signedInUser(t);
    expect((await to.browser.post('/api/memories/import/', res.json())).json()).toEqual({
      created: n - 2,
      updated: 0,
      unchanged: 0,
    });
  });

  it('is an empty list for a user without memories', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.get(EXPORT);
    expect(res.statusCode).toBe(200);
    expect(ZMemoryExport.parse(res.json()).memories).toEqual([]);
  });
});
