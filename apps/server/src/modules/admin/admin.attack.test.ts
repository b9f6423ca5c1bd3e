// Attacks on the admin area: cross-site requests, bodies that try to set more than they may,
// searches and pages that try to make the database work hard, invite addresses that try to add
// mail headers, and first-run signups racing for the administrator's seat.
import { ZAdminUserPage } from '@daybook/contracts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

describe('the admin API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  async function admin() {
    const user = await signedInUser(t, uniqueEmail('admin'));
    await t.app.db.prisma.user.update({ where: { id: user.userId }, data: { isAdmin: true } });
    return user;
  }
  const isAdmin = async (id: number) =>
    (await t.app.db.prisma.user.findUniqueOrThrow({ where: { id }, select: { isAdmin: true } })).isAdmin;

  it('refuses a cross-site PATCH or invite: no token, a foreign origin, a token from another cookie', async () => {
    const { browser } = await admin();
    const user = await signedInUser(t);
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const attempts = [
      // A form or fetch from another site: the session cookie rides along, the token cannot.
      { cookie, origin: 'http://daybook.test' },
      { cookie, origin: 'https://evil.example', 'x-csrftoken': browser.cookies.get('csrftoken') ?? '' },
      { cookie, origin: 'http://daybook.test', 'x-csrftoken': 'a'.repeat(32) },
    ];
    for (const headers of attempts) {
      const patch = await t.app.inject({
        method: 'PATCH',
        url: `/api/admin/users/${user.userId}/`,
        payload: { is_admin: true },
        headers,
      });
      expect(patch.statusCode, JSON.stringify(headers)).toBe(403);
      expect(patch.json().code).toBe('csrf_failed');
      const invite = await t.app.inject({
        method: 'POST',
        url: '/api/admin/invites/send/',
        payload: { email: uniqueEmail('victim') },
        headers,
      });
      expect(invite.statusCode).toBe(403);
    }
    expect(await isAdmin(user.userId)).toBe(false);
  });

  it('takes only is_active and is_admin: other fields and prototype tricks are refused', async () => {
    const { browser } = await admin();
    const user = await signedInUser(t);
    for (const body of [
      { is_active: true, email: 'taken@example.com' },
      { is_active: true, password_hash: 'x' },
      { is_active: true, id: 1 },
    ]) {
      const res = await browser.patch(`/api/admin/users/${user.userId}/`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    const proto = await browser.request(
      'PATCH',
      `/api/admin/users/${user.userId}/`,
      '{"__proto__":{"is_admin":true}}',
      {
        'content-type': 'application/json',
      },
    );
    expect(proto.statusCode).toBe(400);
    const row = await t.app.db.prisma.user.findUniqueOrThrow({ where: { id: user.userId } });
    expect(row).toMatchObject({ email: user.email, isAdmin: false, isActive: true });
  });

  it('a plain user cannot make themselves an administrator through their own settings', async () => {
    const user = await signedInUser(t);
    for (const body of [{ is_admin: true }, { isAdmin: true }]) {
      const res = await user.browser.patch('/api/users/me/', body);
      expect(res.statusCode).toBeLessThan(500);
    }
    expect((await user.browser.patch(`/api/admin/users/${user.userId}/`, { is_admin: true })).statusCode).toBe(403);
    expect(await isAdmin(user.userId)).toBe(false);
  });

  it('searches for what was typed, however odd, and refuses pages past the limit', async () => {
    const { browser } = await admin();
    const tag = `odd${Date.now()}`;
    const plain = await signedInUser(t, `${tag}@example.com`);
    for (const search of ['\\', '\\%', '%_%', "'; DROP TABLE users; --", '.*', '[a-z]', `${tag}\\`]) {
      const res = await browser.get(`/api/admin/users/?search=${encodeURIComponent(search)}`);
      expect(res.statusCode, search).toBe(200);
      expect(ZAdminUserPage.parse(res.json()).count, search).toBe(0);
    }
    const found = await browser.get(`/api/admin/users/?search=${tag.toUpperCase()}`);
    expect(ZAdminUserPage.parse(found.json()).results.map((u) => u.id)).toEqual([plain.userId]);

    const far = await browser.get('/api/admin/users/?offset=1000000');
    expect(far.statusCode).toBe(200);
    expect(far.json().results).toEqual([]);
    for (const query of ['offset=1000001', 'limit=101', `search=${'a'.repeat(255)}`, 'offset=1e9', 'limit=NaN']) {
      const res = await browser.get(`/api/admin/users/?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('validation_error');
    }
  });

  it('refuses invite addresses that would add mail headers, and mails nothing for them', async () => {
    const { browser } = await admin();
    const before = t.smtp.messages.length;
    for (const email of [
      'friend@example.com\r\nBcc: everyone@example.net',
      'friend@example.com\nSubject: Reset your password',
      '"friend\r\nBcc: x@example.net"@example.com',
      'friend@example.com, other@example.net',
      'Friend <friend@example.com>',
    ]) {
      const res = await browser.post('/api/admin/invites/send/', { email });
      expect(res.statusCode, email).toBe(400);
      expect(res.json().code).toBe('validation_error');
    }
    // An invite sent after them arrives, and nothing else is still on its way: any mail for the
    // refused ones would have gone out before it.
    const later = uniqueEmail('later');
    expect((await browser.post('/api/admin/invites/send/', { email: later })).statusCode).toBe(201);
    await t.smtp.waitFor(later, { after: before });
    await t.mailSettled();
    expect(t.smtp.messages.slice(before).map((m) => m.to)).toEqual([later]);
  });
});

describe('first-run signups at the same moment', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const signUp = (token: string) =>
    new Browser(t.app, { ip: randomIp() }).post('/api/auth/signup/', {
      email: uniqueEmail(),
      password1: PASSWORD,
      password2: PASSWORD,
      inviteToken: token,
    });

  it('make one administrator, whichever invite each uses', async () => {
    const first = await t.app.accounts.bootstrapInvite();
    const leftover = await t.app.accounts.bootstrapInvite();
    if (!first || !leftover) throw new Error('no first-run invite');
    const results = await Promise.all([signUp(first.token), signUp(leftover.token)]);
    expect(results.map((r) => r.statusCode)).toEqual([201, 201]);
    expect(await t.app.db.prisma.user.count()).toBe(2);
    expect(await t.app.db.prisma.user.count({ where: { isAdmin: true } })).toBe(1);
  });

  it('a first-run invite used twice at once makes one account', async () => {
    const first = await t.app.accounts.bootstrapInvite();
    if (!first) throw new Error('no first-run invite');
    const results = await Promise.all([signUp(first.token), signUp(first.token)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400]);
    expect(await t.app.db.prisma.user.count()).toBe(1);
    expect(await t.app.db.prisma.user.count({ where: { isAdmin: true } })).toBe(1);
  });
});
