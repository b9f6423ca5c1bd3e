// The session cache (issue 15): reads reuse a signed-in session for a few seconds, yet a sign-out,
// a password change, a deactivation or a settings change made anywhere is seen by every instance.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { PASSWORD, signedInUser } from '../../test/factories.ts';
import { Browser, sameBrowserOn, type TestApp, type TwoInstances, twoInstances, within } from '../../test/test-app.ts';
import type { SessionWithUser } from './accounts.repo.ts';
import { applyNotice, createSessionStore } from './session-cache.ts';

const API = '/_allauth/browser/v1';
const onPostgres = inject('testDb').kind === 'postgres';

const row = (id: string, userId: number | null): SessionWithUser => ({
  id,
  userId,
  data: { methods: [{ method: 'password', at: 1 }] },
  expiresAt: new Date('2030-01-01T00:00:00Z'),
  user: null,
});

describe('the store', () => {
  it('keeps a row for its lifetime and hands out copies', () => {
    let now = 0;
    const store = createSessionStore({ ttlMs: 1000, maxEntries: 10, now: () => now });
    store.put(store.ticket(), 'a', row('a', 1));
    const first = store.get('a');
    expect(first?.data).toEqual({ methods: [{ method: 'password', at: 1 }] });
    // A request that changes its copy changes nobody else's.
    (first as SessionWithUser).data = { methods: [] };
    ((store.get('a') as SessionWithUser).data as { methods: unknown[] }).methods.push('x');
    expect(store.get('a')?.data).toEqual({ methods: [{ method: 'password', at: 1 }] });
    now = 999;
    expect(store.get('a')).toBeDefined();
    now = 1000;
    expect(store.get('a')).toBeUndefined();
  });

  it('does not store a load that started before something was forgotten', () => {
    const store = createSessionStore({ ttlMs: 1000, maxEntries: 10 });
    const ticket = store.ticket();
    // Meanwhile the user signed out elsewhere: the row read before that must not come back.
    store.forgetUser(1);
    store.put(ticket, 'a', row('a', 1));
    expect(store.get('a')).toBeUndefined();
    store.put(store.ticket(), 'a', row('a', 1));
    expect(store.get('a')).toBeDefined();
  });

  it("forgets by session, by user and everything, as the database's notices say", () => {
    const store = createSessionStore({ ttlMs: 1000, maxEntries: 10 });
    const fill = () => {
      for (const [id, user] of [
        ['a', 1],
        ['b', 1],
        ['c', 2],
        ['d', null],
      ] as const)
        store.put(store.ticket(), id, row(id, user));
    };
    fill();
    applyNotice(store, 's:c');
    expect(['a', 'b', 'c', 'd'].map((id) => Boolean(store.get(id)))).toEqual([true, true, false, true]);
    applyNotice(store, 'u:1');
    expect(['a', 'b', 'c', 'd'].map((id) => Boolean(store.get(id)))).toEqual([false, false, false, true]);
    fill();
    applyNotice(store, '*');
    expect(store.size).toBe(0);
    fill();
    // Anything it does not understand forgets everything rather than nothing.
    applyNotice(store, 'u:not-a-number');
    expect(store.size).toBe(0);
  });

  it('stays within its size, and caches nothing while inactive', () => {
    const store = createSessionStore({ ttlMs: 1000, maxEntries: 3 });
    for (const id of ['a', 'b', 'c', 'd']) store.put(store.ticket(), id, row(id, 1));
    expect(store.size).toBe(3);
    expect(store.get('a')).toBeUndefined();
    store.setActive(false);
    expect(store.size).toBe(0);
    store.put(store.ticket(), 'e', row('e', 1));
    expect(store.get('e')).toBeUndefined();
  });
});

describe.runIf(onPostgres)('two instances with the cache on', () => {
  let two: TwoInstances;
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  const onB = (browser: Browser) => sameBrowserOn(b.app, browser);
  const status = async (browser: Browser, url = '/api/users/me/') => (await browser.get(url)).statusCode;

  beforeAll(async () => {
    two = await twoInstances({ SESSION_CACHE_SECONDS: '60' });
    ({ a, b, database } = two);
  });
  afterAll(() => two?.close());

  it('a sign-out on A ends the session on B, which had it cached', async () => {
    const { browser } = await signedInUser(a);
    const tabB = onB(browser);
    expect(await status(tabB)).toBe(200);
    expect(await status(tabB)).toBe(200);
    expect((await browser.delete(`${API}/auth/session`)).statusCode).toBe(401);
    // A change is refused at once: it never trusts the cache.
    expect((await tabB.patch('/api/users/me/', { learn_from_chats: false })).statusCode).toBe(401);
    expect(await within(1000, async () => (await status(tabB)) === 401)).toBe(true);
  });

  it('a password change on A ends the other sessions on B', async () => {
    const { browser, email } = await signedInUser(a);
    const otherDevice = new Browser(b.app);
    expect((await otherDevice.post(`${API}/auth/login`, { email, password: PASSWORD })).statusCode).toBe(200);
    expect(await status(otherDevice)).toBe(200);
    const changed = await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'a much newer passphrase',
    });
    expect(changed.statusCode).toBe(200);
    expect(await within(1000, async () => (await status(otherDevice)) === 401)).toBe(true);
    expect(await status(browser)).toBe(200);
  });

  it('a deactivation written by another process (psql, the admin script) reaches both instances', async () => {
    const { browser, userId } = await signedInUser(a);
    const tabB = onB(browser);
    expect(await status(browser)).toBe(200);
    expect(await status(tabB)).toBe(200);
    await database.db.query('UPDATE users SET is_active = false WHERE id = $1', [userId]);
    expect(await within(1000, async () => (await status(browser)) === 401 && (await status(tabB)) === 401)).toBe(true);
  });

  it("a settings change is in the very next read on the same instance, and soon on the other's", async () => {
    const { browser } = await signedInUser(a);
    const tabB = onB(browser);
    for (const tab of [browser, tabB]) expect((await tab.get('/api/users/me/')).json().learn_from_chats).toBe(true);
    expect((await browser.patch('/api/users/me/', { learn_from_chats: false })).statusCode).toBe(200);
    expect((await browser.get('/api/users/me/')).json().learn_from_chats).toBe(false);
    expect(await within(1000, async () => (await tabB.get('/api/users/me/')).json().learn_from_chats === false)).toBe(
      true,
    );
  });
});
