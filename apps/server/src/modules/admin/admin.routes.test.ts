import { ZAdminUser, ZAdminUserPage, ZInviteList, ZSendInviteResponse } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { ADMIN_ERRORS } from './admin.service.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function makeAdmin(app: TestApp, userId: number) {
  await app.app.db.prisma.user.update({ where: { id: userId }, data: { isAdmin: true } });
}

async function admin(app = t) {
  const user = await signedInUser(app, uniqueEmail('admin'));
  await makeAdmin(app, user.userId);
  return user;
}

const signIn = (email: string, password = PASSWORD) =>
  new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password });

describe('GET /api/admin/users/', () => {
  it('lists accounts newest first with their standing, and searches and pages', async () => {
    const { browser, email: adminEmail } = await admin();
    const tag = `find${Date.now()}`;
    const older = await signedInUser(t, uniqueEmail(`${tag}-older`));
    const newer = await signedInUser(t, uniqueEmail(`${tag}-newer`));
    await t.app.db.prisma.user.update({
      where: { id: older.userId },
      data: { createdAt: new Date('2020-01-02T03:04:05Z') },
    });

    const all = ZAdminUserPage.parse((await browser.get('/api/admin/users/')).json());
    expect(all.results.some((u) => u.email === adminEmail && u.is_admin)).toBe(true);

    const found = ZAdminUserPage.parse((await browser.get(`/api/admin/users/?search=${tag.toUpperCase()}`)).json());
    expect(found.count).toBe(2);
    expect(found.results.map((u) => u.email)).toEqual([newer.email, older.email]);
    expect(found.results[1]).toEqual({
      id: older.userId,
      email: older.email,
      date_joined: '2020-01-02T03:04:05.000Z',
      last_login: expect.any(String),
      email_verified: true,
      is_active: true,
      is_admin: false,
    });

    const first = ZAdminUserPage.parse((await browser.get(`/api/admin/users/?search=${tag}&limit=1`)).json());
    expect(first.results.map((u) => u.id)).toEqual([newer.userId]);
    expect(first.previous).toBeNull();
    expect(first.next).toBe(`http://daybook.test/api/admin/users/?limit=1&offset=1&search=${tag}`);
    const second = ZAdminUserPage.parse(
      (await browser.get(new URL(first.next ?? '').pathname + new URL(first.next ?? '').search)).json(),
    );
    expect(second.results.map((u) => u.id)).toEqual([older.userId]);
    expect(second.next).toBeNull();
  });

  it('searches for the text typed, wildcards included', async () => {
    const { browser } = await admin();
    const tag = `w${Date.now()}`;
    const underscore = await signedInUser(t, `${tag}_1@example.com`);
    await signedInUser(t, `${tag}x1@example.com`);
    const found = ZAdminUserPage.parse((await browser.get(`/api/admin/users/?search=${tag}_1`)).json());
    expect(found.results.map((u) => u.id)).toEqual([underscore.userId]);
    const percent = await browser.get(`/api/admin/users/?search=${tag}%25`);
    expect(ZAdminUserPage.parse(percent.json()).count).toBe(0);
  });

  it("shows an unverified account, and a signup's own session as its last sign-in", async () => {
    const { browser } = await admin();
    const signUp = async (path: string, email: string) => {
      const { token } = await t.app.invites.create({ maxUses: 1 });
      const body = { email, password1: PASSWORD, password2: PASSWORD, inviteToken: token };
      const res = await new Browser(t.app, { ip: randomIp() }).post(path, body);
      expect(res.statusCode, res.body).toBeLessThan(402);
      const [row] = ZAdminUserPage.parse((await browser.get(`/api/admin/users/?search=${email}`)).json()).results;
      return row;
    };
    // The product's signup signs the new account in; allauth's waits for the address to be verified.
    const product = await signUp('/api/auth/signup/', uniqueEmail('product'));
    expect(product).toMatchObject({ email_verified: false, is_active: true });
    expect(Date.now() - new Date(product?.last_login ?? 0).getTime()).toBeLessThan(60_000);
    const allauth = await signUp(`${API}/auth/signup`, uniqueEmail('allauth'));
    expect(allauth).toMatchObject({ email_verified: false, last_login: null });
  });

  it('refuses a bad query with 400', async () => {
    const { browser } = await admin();
    const res = await browser.get('/api/admin/users/?limit=0&offset=-1');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_error' });
    expect(Object.keys(res.json().field_errors).sort()).toEqual(['limit', 'offset']);
  });
});

describe('PATCH /api/admin/users/{id}/', () => {
  it('deactivates: their sessions end at once and they cannot sign in; reactivating lets them back', async () => {
    const { browser } = await admin();
    const user = await signedInUser(t);
    expect((await user.browser.get('/api/users/me/')).statusCode).toBe(200);

    const off = await browser.patch(`/api/admin/users/${user.userId}/`, { is_active: false });
    expect(off.statusCode).toBe(200);
    expect(ZAdminUser.parse(off.json())).toMatchObject({ id: user.userId, is_active: false });
    expect(await t.app.db.prisma.session.count({ where: { userId: user.userId } })).toBe(0);
    expect((await user.browser.get('/api/users/me/')).statusCode).toBe(401);
    const refused = await signIn(user.email);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().meta?.is_authenticated).toBe(false);

    const on = await browser.patch(`/api/admin/users/${user.userId}/`, { is_active: true });
    expect(on.json()).toMatchObject({ is_active: true });
    expect((await signIn(user.email)).statusCode).toBe(200);
  });

  it('makes and unmakes administrators, who then can and cannot use the admin area', async () => {
    const { browser } = await admin();
    const user = await signedInUser(t);
    expect((await user.browser.get('/api/admin/users/')).statusCode).toBe(403);
    const promoted = await browser.patch(`/api/admin/users/${user.userId}/`, { is_admin: true });
    expect(promoted.json()).toMatchObject({ is_admin: true, is_active: true });
    expect((await user.browser.get('/api/admin/users/')).statusCode).toBe(200);
    expect((await user.browser.get('/api/users/me/')).json().is_admin).toBe(true);
    await browser.patch(`/api/admin/users/${user.userId}/`, { is_admin: false });
    expect((await user.browser.get('/api/admin/users/')).statusCode).toBe(403);
  });

  it('refuses to deactivate or demote yourself', async () => {
    const { browser, userId } = await admin();
    const deactivate = await browser.patch(`/api/admin/users/${userId}/`, { is_active: false });
    expect(deactivate.statusCode).toBe(400);
    expect(deactivate.json()).toEqual({ error: ADMIN_ERRORS.deactivateSelf, code: 'bad_request' });
    const demote = await browser.patch(`/api/admin/users/${userId}/`, { is_admin: false });
    expect(demote.statusCode).toBe(400);
    expect(demote.json()).toEqual({ error: ADMIN_ERRORS.demoteSelf, code: 'bad_request' });
    expect((await browser.get('/api/users/me/')).json().is_admin).toBe(true);
  });

  it('validates the body', async () => {
    const { browser } = await admin();
    const user = await signedInUser(t);
    for (const body of [{}, { is_active: 'no' }, { is_admin: true, role: 'owner' }]) {
      const res = await browser.patch(`/api/admin/users/${user.userId}/`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('validation_error');
    }
    expect((await user.browser.get('/api/users/me/')).json().is_admin).toBe(false);
  });

  it('answers 404 for an unknown user or an id no user could have', async () => {
    const { browser } = await admin();
    for (const id of ['999999', '0', 'abc', '2147483648']) {
      const res = await browser.patch(`/api/admin/users/${id}/`, { is_active: false });
      expect(res.statusCode, id).toBe(404);
      expect(res.json(), id).toEqual({ error: ADMIN_ERRORS.userNotFound, code: 'not_found' });
    }
  });

  it('is for administrators only: 403 for others, 401 without a session', async () => {
    const user = await signedInUser(t);
    const other = await signedInUser(t);
    const patch = await user.browser.patch(`/api/admin/users/${other.userId}/`, { is_active: false });
    expect(patch.statusCode).toBe(403);
    expect(patch.json()).toEqual({ error: 'Only administrators can manage users.', code: 'forbidden' });
    expect((await user.browser.get('/api/admin/users/')).statusCode).toBe(403);
    expect((await user.browser.post('/api/admin/invites/send/', { email: uniqueEmail() })).json()).toEqual({
      error: 'Only administrators can manage invites.',
      code: 'forbidden',
    });
    expect((await other.browser.get('/api/users/me/')).statusCode).toBe(200);

    const anonymous = new Browser(t.app);
    expect((await anonymous.get('/api/admin/users/')).json()).toEqual({
      error: 'Authentication credentials were not provided.',
      code: 'unauthorized',
    });
    expect((await anonymous.patch(`/api/admin/users/${other.userId}/`, { is_active: false })).statusCode).toBe(401);
    expect((await anonymous.post('/api/admin/invites/send/', { email: uniqueEmail() })).statusCode).toBe(401);
  });
});

describe('the last active administrator', () => {
  // A database of its own: the rule counts every administrator of the installation.
  let solo: TestApp;
  beforeAll(async () => {
    solo = await createTestApp();
  });
  afterAll(() => solo.close());

  it('stays one when two administrators demote or deactivate each other at the same moment', async () => {
    const a = await admin(solo);
    const b = await admin(solo);
    const [toB, toA] = await Promise.all([
      a.browser.patch(`/api/admin/users/${b.userId}/`, { is_admin: false }),
      b.browser.patch(`/api/admin/users/${a.userId}/`, { is_active: false }),
    ]);
    const statuses = [toB.statusCode, toA.statusCode].sort();
    expect(statuses).toEqual([200, 400]);
    const refused = toB.statusCode === 400 ? toB : toA;
    expect(refused.json()).toEqual({ error: ADMIN_ERRORS.lastAdmin, code: 'bad_request' });
    const activeAdmins = await solo.app.db.prisma.user.count({ where: { isAdmin: true, isActive: true } });
    expect(activeAdmins).toBe(1);
  });
});

describe('POST /api/admin/invites/send/', () => {
  it('makes an invite bound to the address and mails its link there; the link signs them up', async () => {
    const { browser, email: adminEmail } = await admin();
    const to = uniqueEmail('Friend');
    const before = t.smtp.messages.length;
    const res = await browser.post('/api/admin/invites/send/', { email: to, max_uses: 1, expires_in_days: 3 });
    expect(res.statusCode).toBe(201);
    const body = ZSendInviteResponse.parse(res.json());
    expect(body.sent_to).toBe(to.toLowerCase());
    expect(body.invite).toMatchObject({ email: to.toLowerCase(), max_uses: 1, uses: 0, status: 'active' });

    const mail = await t.smtp.waitFor(to.toLowerCase(), { subject: /invited to Daybook/, after: before });
    expect(mail.text).toContain(`${adminEmail} invited you`);
    expect(mail.text).toContain('The link works for 3 days.');
    expect(mail.links).toContain(body.signup_url);
    const list = ZInviteList.parse((await browser.get('/api/admin/invites/')).json());
    expect(list.results.find((i) => i.id === body.invite.id)?.email).toBe(to.toLowerCase());

    const token = new URL(body.signup_url).searchParams.get('itoken') ?? '';
    const signup = (email: string) =>
      new Browser(t.app, { ip: randomIp() }).post('/api/auth/signup/', {
        email,
        password1: PASSWORD,
        password2: PASSWORD,
        inviteToken: token,
      });
    const wrong = await signup(uniqueEmail('someone-else'));
    expect(wrong.statusCode).toBe(400);
    expect((await signup(to)).statusCode).toBe(201);
  });

  it('validates the request: an address is required', async () => {
    const { browser } = await admin();
    for (const body of [{}, { email: 'nope' }, { email: uniqueEmail(), max_uses: 0 }, { email: uniqueEmail(), x: 1 }]) {
      const res = await browser.post('/api/admin/invites/send/', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('validation_error');
    }
  });

  it('limits how many invites one address receives', async () => {
    const { browser } = await admin();
    const to = uniqueEmail('popular');
    for (let i = 0; i < 3; i++) {
      expect((await browser.post('/api/admin/invites/send/', { email: to })).statusCode).toBe(201);
    }
    const limited = await browser.post('/api/admin/invites/send/', { email: to });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: ADMIN_ERRORS.inviteMailLimit, code: 'rate_limited' });
    // Refused before the invite is made: no fourth invite for the address.
    const invites = await t.app.db.prisma.invite.count({ where: { email: to } });
    expect(invites).toBe(3);
  });
});
