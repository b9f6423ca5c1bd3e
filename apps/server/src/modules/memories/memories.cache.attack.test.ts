// Attacks on the Memories page and search caches (issue 15): a kept page or search must never
// answer for data that changed, nor for another user, nor grow without bound.
import { ZMemoryPage } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { createListCaches } from './memories.service.ts';

const M = '/api/memories/';
const onPostgres = inject('testDb').kind === 'postgres';

const keys = async (browser: Browser, query = '') => {
  const res = await browser.get(`${M}${query}`);
  expect(res.statusCode).toBe(200);
  const page = ZMemoryPage.parse(res.json());
  return { keys: page.results.map((m) => m.key), count: page.count };
};
const create = async (browser: Browser, key: string, data = 'detail') => {
  const res = await browser.post(M, { key, data });
  expect(res.statusCode).toBe(201);
  return res.json().id as number;
};

describe.runIf(onPostgres)('memories caches under attack', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every write path through the API shows in the next page and search', async () => {
    const { browser } = await signedInUser(t);
    const id = await create(browser, 'alpha', 'find me');
    expect(await keys(browser)).toEqual({ keys: ['alpha'], count: 1 });
    expect(await keys(browser, '?search=find')).toEqual({ keys: ['alpha'], count: 1 });
    // Edit: the search's kept ids must not answer for the new text.
    expect((await browser.patch(`${M}${id}/`, { data: 'hidden now' })).statusCode).toBe(200);
    expect(await keys(browser, '?search=find')).toEqual({ keys: [], count: 0 });
    expect(await keys(browser, '?search=hidden')).toEqual({ keys: ['alpha'], count: 1 });
    // Replace.
    expect((await browser.put(`${M}${id}/`, { key: 'beta', data: 'find me again' })).statusCode).toBe(200);
    expect(await keys(browser, '?search=find')).toEqual({ keys: ['beta'], count: 1 });
    // Delete, then the deleted view, then restore.
    expect((await browser.delete(`${M}${id}/`, {})).statusCode).toBeLessThan(300);
    expect(await keys(browser)).toEqual({ keys: [], count: 0 });
    expect(await keys(browser, '?search=find')).toEqual({ keys: [], count: 0 });
    expect(await keys(browser, '?show_deleted=true&search=find')).toEqual({ keys: ['beta'], count: 1 });
    expect((await browser.put(`${M}${id}/`, { key: 'beta', data: 'find me', restore_deleted: true })).statusCode).toBe(
      200,
    );
    expect(await keys(browser, '?show_deleted=true&search=find')).toEqual({ keys: [], count: 0 });
    expect(await keys(browser, '?search=find')).toEqual({ keys: ['beta'], count: 1 });
    // Import.
    const imported = await browser.post(`${M}import/`, { memories: [{ key: 'gamma', data: 'find me too' }] });
    expect(imported.statusCode).toBe(200);
    expect((await keys(browser, '?search=find')).keys.sort()).toEqual(['beta', 'gamma']);
    expect((await keys(browser)).count).toBe(2);
  });

  it('a write from another process (psql, a worker) shows in the next page and search', async () => {
    const { browser, userId } = await signedInUser(t);
    await create(browser, 'one', 'needle');
    expect(await keys(browser, '?search=needle')).toEqual({ keys: ['one'], count: 1 });
    expect(await keys(browser)).toEqual({ keys: ['one'], count: 1 });
    await t.database.db.query(`UPDATE memories SET data = 'hay' WHERE user_id = $1`, [userId]);
    expect(await keys(browser, '?search=needle')).toEqual({ keys: [], count: 0 });
    await t.database.db.query('DELETE FROM memories WHERE user_id = $1', [userId]);
    expect(await keys(browser)).toEqual({ keys: [], count: 0 });
  });

  it("one user's kept page or search never answers for another, whatever the search text", async () => {
    const first = await signedInUser(t);
    const second = await signedInUser(t);
    await create(first.browser, 'secret of first', 'shared word');
    await create(second.browser, 'secret of second', 'shared word');
    for (const search of ['shared', 'shared word', '%', '_', '\\', 'a']) {
      const q = `?search=${encodeURIComponent(search)}`;
      const a = await keys(first.browser, q);
      const b = await keys(second.browser, q);
      expect(a.keys.every((k) => k === 'secret of first')).toBe(true);
      expect(b.keys.every((k) => k === 'secret of second')).toBe(true);
    }
    // Offsets and limits past the kept ids.
    expect(await keys(second.browser, '?search=shared&offset=1')).toEqual({ keys: [], count: 1 });
    expect(await keys(second.browser, '?search=shared&limit=100&offset=100000')).toEqual({ keys: [], count: 1 });
  });

  it('a search text with a NUL byte is refused, not a server error', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.get(`${M}?search=${encodeURIComponent('a\u0000b')}`);
    expect(res.statusCode).toBeLessThan(500);
  });
});

describe.runIf(onPostgres)('memories caches after TRUNCATE', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('after TRUNCATE memories, a new memory does not bring back the page kept before', async () => {
    const { browser } = await signedInUser(t);
    await create(browser, 'before truncate', 'word');
    expect(await keys(browser)).toEqual({ keys: ['before truncate'], count: 1 });
    expect(await keys(browser, '?search=word')).toEqual({ keys: ['before truncate'], count: 1 });
    await t.database.db.query('TRUNCATE memories');
    expect(await keys(browser)).toEqual({ keys: [], count: 0 });
    await create(browser, 'after truncate', 'word');
    expect(await keys(browser)).toEqual({ keys: ['after truncate'], count: 1 });
    expect(await keys(browser, '?search=word')).toEqual({ keys: ['after truncate'], count: 1 });
  });
});

describe.runIf(onPostgres)('memories caches after the user ids start again', () => {
  it("a new user given an old user's id (TRUNCATE ... RESTART IDENTITY, a restore) never sees the old user's page", async () => {
    const t = await createTestApp();
    try {
      const old = await signedInUser(t);
      await create(old.browser, 'the old user secret', 'private');
      expect(await keys(old.browser)).toEqual({ keys: ['the old user secret'], count: 1 });
      expect(await keys(old.browser, '?search=private')).toEqual({ keys: ['the old user secret'], count: 1 });
      await t.database.db.query('TRUNCATE users RESTART IDENTITY CASCADE');
      const fresh = await signedInUser(t);
      expect(fresh.userId).toBe(old.userId);
      await create(fresh.browser, 'mine', 'private');
      expect(await keys(fresh.browser)).toEqual({ keys: ['mine'], count: 1 });
      expect(await keys(fresh.browser, '?search=private')).toEqual({ keys: ['mine'], count: 1 });
    } finally {
      await t.close();
    }
  });
});

describe('memory bounds of the kept searches', () => {
  it('200-character searches with no match cannot fill the process (keys count toward the bound)', () => {
    const { searches } = createListCaches();
    // What one user can send: distinct searches of the longest allowed text, each matching nothing.
    const filler = 'ж'.repeat(190);
    for (let i = 0; i < 500_000; i++) searches.set(`${i}\u0000a\u0000${filler}${i}`, { version: '1', ids: [] });
    // Each key is ~200 UTF-16 characters (400 bytes) before the entry's own overhead: 64 MiB of keys at most.
    expect(searches.size * 400).toBeLessThanOrEqual(64 * 1024 * 1024);
  });
});
