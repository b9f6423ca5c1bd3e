// The Memories page's count comes from memory_counts, kept by triggers on memories: it must match
// the rows through every kind of change, and a search counts its own matches.
import { ZMemoryPage } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import type { Browser } from '../../test/test-app.ts';
import { createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const M = '/api/memories/';
const page = async (browser: Browser, query = '') => ZMemoryPage.parse((await browser.get(`${M}?${query}`)).json());

/** What the page says against what the table holds. */
async function counts(browser: Browser, userId: number) {
  const [active, deleted] = await Promise.all([page(browser), page(browser, 'show_deleted=true')]);
  const rows = await t.database.db.prisma.memory.groupBy({
    by: ['deletedAt'],
    where: { userId },
    _count: true,
  });
  const actual = {
    active: rows.filter((r) => r.deletedAt === null).reduce((n, r) => n + r._count, 0),
    deleted: rows.filter((r) => r.deletedAt !== null).reduce((n, r) => n + r._count, 0),
  };
  return { shown: { active: active.count, deleted: deleted.count }, actual };
}

describe('the count on the Memories page', () => {
  it('follows adding, importing, deleting, restoring and purging', async () => {
    const { browser, userId } = await signedInUser(t);
    expect(await counts(browser, userId)).toEqual({
      shown: { active: 0, deleted: 0 },
      actual: { active: 0, deleted: 0 },
    });
    const a = (await browser.post(M, { key: 'a', data: 'one' })).json();
    await browser.post(M, { key: 'b', data: 'two' });
    const imported = await browser.post(`${M}import/`, {
      memories: Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, data: `d${i}` })),
    });
    expect(imported.json()).toMatchObject({ created: 40 });
    expect((await counts(browser, userId)).shown).toEqual({ active: 42, deleted: 0 });

    await browser.delete(`${M}${a.id}/`, { reason: 'wrong' });
    expect((await counts(browser, userId)).shown).toEqual({ active: 41, deleted: 1 });
    // Changing a memory's text moves it nowhere.
    const b = (await page(browser, 'search=two')).results[0];
    await browser.patch(`${M}${b?.id}/`, { data: 'two, changed' });
    expect((await counts(browser, userId)).shown).toEqual({ active: 41, deleted: 1 });
    await browser.put(`${M}${a.id}/`, { key: 'a', data: 'one again', restore_deleted: true });
    expect((await counts(browser, userId)).shown).toEqual({ active: 42, deleted: 0 });
    // Deleting a deleted memory removes it for good.
    await browser.delete(`${M}${a.id}/`);
    await browser.delete(`${M}${a.id}/`);
    const after = await counts(browser, userId);
    expect(after.shown).toEqual({ active: 41, deleted: 0 });
    expect(after.shown).toEqual(after.actual);
  });

  it("is each user's own, and goes with the account", async () => {
    const one = await signedInUser(t);
    const two = await signedInUser(t);
    await one.browser.post(M, { key: 'mine', data: 'only mine' });
    expect((await counts(one.browser, one.userId)).shown.active).toBe(1);
    expect((await counts(two.browser, two.userId)).shown.active).toBe(0);
    await t.database.db.prisma.user.delete({ where: { id: one.userId } });
    expect(await t.database.db.prisma.memoryCount.findUnique({ where: { userId: one.userId } })).toBeNull();
  });

  it('past the last page: no results, the count still right', async () => {
    const { browser } = await signedInUser(t);
    await browser.post(M, { key: 'x', data: 'y' });
    const beyond = await page(browser, 'offset=30');
    expect(beyond).toMatchObject({ results: [], count: 1, next: null });
    expect((await page(browser, 'offset=30&search=y')).count).toBe(1);
  });

  it('searches for %, _ and \\ as themselves, not as wildcards', async () => {
    const { browser } = await signedInUser(t);
    await browser.post(M, { key: 'discount', data: 'Saves 100% on tea' });
    await browser.post(M, { key: 'file', data: 'notes_2026.txt' });
    await browser.post(M, { key: 'path', data: 'C:\\Users' });
    await browser.post(M, { key: 'plain', data: 'Saves 1000 on coffee, notes 2026' });
    const keys = async (search: string) =>
      (await page(browser, `search=${encodeURIComponent(search)}`)).results.map((m) => m.key).sort();
    expect(await keys('100%')).toEqual(['discount']);
    expect(await keys('notes_2026')).toEqual(['file']);
    expect(await keys('_')).toEqual(['file']);
    expect(await keys('C:\\')).toEqual(['path']);
    expect(await keys('%')).toEqual(['discount']);
  });

  it('lists newest first, and the deleted view by when each was deleted', async () => {
    const { browser } = await signedInUser(t);
    const ids: number[] = [];
    for (const key of ['first', 'second', 'third']) ids.push((await browser.post(M, { key, data: key })).json().id);
    expect((await page(browser)).results.map((m) => m.key)).toEqual(['third', 'second', 'first']);
    await browser.delete(`${M}${ids[1]}/`);
    await browser.delete(`${M}${ids[0]}/`);
    const deleted = await page(browser, 'show_deleted=true');
    expect(deleted.results.map((m) => m.key)).toEqual(['first', 'second']);
    // The times are the API's ISO 8601 form, as a single memory's are.
    const one = (await browser.get(`${M}${ids[0]}/`)).json();
    expect(deleted.results[0]).toEqual(one);
  });
});
