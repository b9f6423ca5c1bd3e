// behaviours.md "Signup" items, and invites at signup (allauth endpoint and product endpoint).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createInvite, PASSWORD, randomIp, signedInUser, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { argon2id } from './passwords.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const countUsers = (email: string) => t.app.db.prisma.user.count({ where: { email } });

describe('allauth signup', () => {
  it('behaviour 17: signup answers 401 with verify_email pending (mandatory verification), methods stay empty', async () => {
    const { token } = await createInvite(t);
    const email = uniqueEmail();
    const browser = new Browser(t.app, { ip: randomIp() });
    const res = await browser.post(`${API}/auth/signup`, { email, password: PASSWORD, inviteToken: token });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      status: 401,
      data: { flows: [{ id: 'login' }, { id: 'signup' }, { id: 'verify_email', is_pending: true }] },
      meta: { is_authenticated: false },
    });
    expect(await countUsers(email)).toBe(1);
    await t.smtp.waitFor(email, { subject: /Confirm your email/ });
  });

  it('accepts password1/password2 and checks they match', async () => {
    const { token } = await createInvite(t);
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/signup`, {
      email: uniqueEmail(),
      password1: PASSWORD,
      password2: 'something else',
      inviteToken: token,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { code: 'password_mismatch', message: "The two password fields didn't match.", param: 'password2' },
    ]);
  });

  it('behaviour 18: an existing address gets the same 401, no new account, and an "account exists" mail', async () => {
    const { email } = await signedInUser(t);
    const { token } = await createInvite(t);
    const before = t.smtp.messages.length;
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/signup`, {
      email,
      password: 'another password 1',
      inviteToken: token,
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
    expect(await countUsers(email)).toBe(1);
    await t.smtp.waitFor(email, { subject: /already have a Daybook account/, after: before });
    // The invite was not used up by the refused signup.
    expect(
      (
        await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/signup`, {
          email: uniqueEmail(),
          password: PASSWORD,
          inviteToken: token,
        })
      ).statusCode,
    ).toBe(401);
  });

  it('behaviour 20: validates the password (Django validators) and requires every field', async () => {
    const { token } = await createInvite(t);
    const browser = new Browser(t.app, { ip: randomIp() });
    const empty = await browser.post(`${API}/auth/signup`, {});
    expect(empty.json().errors.map((e: { param: string; code: string }) => `${e.param}:${e.code}`)).toEqual([
      'email:required',
      'password:required',
      'inviteToken:required',
    ]);
    const weak = await browser.post(`${API}/auth/signup`, {
      email: uniqueEmail(),
      password: '1234567',
      inviteToken: token,
    });
    expect(weak.json().errors).toEqual([
      {
        code: 'password_too_short',
        message: 'This password is too short. It must contain at least 8 characters.',
        param: 'password',
      },
      { code: 'password_entirely_numeric', message: 'This password is entirely numeric.', param: 'password' },
    ]);
    const common = await browser.post(`${API}/auth/signup`, {
      email: uniqueEmail(),
      password: 'Password123',
      inviteToken: token,
    });
    expect(common.json().errors).toEqual([
      { code: 'password_too_common', message: 'This password is too common.', param: 'password' },
    ]);
  });

  it('behaviour 20: signing up while signed in gives 409; 20 signups a minute per IP, then 429', async () => {
    const { browser } = await signedInUser(t);
    expect((await browser.post(`${API}/auth/signup`, {})).json()).toEqual({ status: 409 });
    const ip = randomIp();
    const { token } = await createInvite(t, { maxUses: null });
    for (let i = 0; i < 20; i++) {
      expect(
        (
          await new Browser(t.app, { ip }).post(`${API}/auth/signup`, {
            email: uniqueEmail(),
            password: PASSWORD,
            inviteToken: token,
          })
        ).statusCode,
      ).toBe(401);
    }
    const limited = await new Browser(t.app, { ip }).post(`${API}/auth/signup`, {
      email: uniqueEmail(),
      password: PASSWORD,
      inviteToken: token,
    });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ status: 429 });
  });
});

describe('invites at signup', () => {
  const signup = (token: string, email = uniqueEmail()) =>
    new Browser(t.app, { ip: randomIp() }).post('/api/auth/signup/', {
      email,
      password1: PASSWORD,
      password2: PASSWORD,
      inviteToken: token,
    });

  it('a one-use invite works once, then reports it was used', async () => {
    const { token, invite } = await createInvite(t);
    expect((await signup(token)).statusCode).toBe(201);
    const again = await signup(token);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({
      error: 'This invite has already been used.',
      code: 'validation_error',
      field_errors: { inviteToken: ['This invite has already been used.'] },
    });
    const stored = await t.app.db.prisma.invite.findUniqueOrThrow({
      where: { id: invite.id },
      include: { usedBy: true },
    });
    expect(stored.uses).toBe(1);
    expect(stored.usedBy).toHaveLength(1);
  });

  it('refuses unknown, revoked, expired and wrong-address invites with a clear message', async () => {
    expect((await signup('no-such-token')).json().field_errors.inviteToken).toEqual([
      'This invite token is not valid.',
    ]);
    const revoked = await createInvite(t);
    await t.app.invites.revoke(revoked.invite.id);
    expect((await signup(revoked.token)).json().field_errors.inviteToken).toEqual(['This invite has been revoked.']);
    const expired = await createInvite(t);
    await t.app.db.prisma.invite.update({
      where: { id: expired.invite.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await signup(expired.token)).json().field_errors.inviteToken).toEqual(['This invite has expired.']);
    const bound = await createInvite(t, { email: 'only-this@example.com' });
    expect((await signup(bound.token)).json().field_errors.inviteToken).toEqual([
      'This invite is for a different email address.',
    ]);
    expect((await signup(bound.token, 'Only-This@example.com')).statusCode).toBe(201);
  });

  it('two signups racing for the last use of an invite: exactly one wins', async () => {
    const { token } = await createInvite(t);
    const results = await Promise.all(Array.from({ length: 6 }, () => signup(token)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.statusCode === 400)) {
      expect(r.json().field_errors.inviteToken).toEqual(['This invite has already been used.']);
    }
  });

  it('a multi-use invite records who used it', async () => {
    const { token, invite } = await createInvite(t, { maxUses: 2 });
    const a = uniqueEmail('a');
    const b = uniqueEmail('b');
    await signup(token, a);
    await signup(token, b);
    const [listed] = (await t.app.invites.list()).filter((i) => i.id === invite.id);
    expect(listed?.status).toBe('exhausted');
    expect(listed?.used_by.map((u) => u.email)).toEqual([a, b]);
  });
});

describe('password similar to the address (issue 10)', () => {
  it('both signups refuse it, in their own shapes', async () => {
    const email = uniqueEmail();
    const password = `${email.split('@')[0]?.replace('-', '_')}5`;
    const allauth = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/signup`, {
      email,
      password,
      inviteToken: (await createInvite(t)).token,
    });
    expect(allauth.json()).toEqual({
      status: 400,
      errors: [
        {
          code: 'password_too_similar',
          message: 'The password is too similar to the email address.',
          param: 'password',
        },
      ],
    });
    const product = await new Browser(t.app, { ip: randomIp() }).post('/api/auth/signup/', {
      email,
      password1: password,
      password2: password,
      inviteToken: (await createInvite(t)).token,
    });
    expect(product.statusCode).toBe(400);
    expect(product.json().field_errors).toEqual({ password1: ['The password is too similar to the email address.'] });
    expect(await countUsers(email)).toBe(0);
  });
});

describe('signup with a taken address (issue 10)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('the allauth signup hashes the password whether or not the address is taken', async () => {
    const { email } = await signedInUser(t);
    const hash = vi.spyOn(argon2id, 'hash');
    const taken = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/signup`, {
      email,
      password: 'another password 1',
      inviteToken: (await createInvite(t)).token,
    });
    expect(taken.statusCode).toBe(401);
    expect(hash).toHaveBeenCalledTimes(1);
    hash.mockClear();
    const fresh = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/signup`, {
      email: uniqueEmail(),
      password: 'another password 1',
      inviteToken: (await createInvite(t)).token,
    });
    expect(fresh.statusCode).toBe(401);
    expect(hash).toHaveBeenCalledTimes(1);
  });

  it('the product signup answers a taken address as a new one, mails its owner, and keeps the invite', async () => {
    const { email } = await signedInUser(t);
    const { token, invite } = await createInvite(t);
    const before = t.smtp.messages.length;
    const browser = new Browser(t.app, { ip: randomIp() });
    const taken = await browser.post('/api/auth/signup/', {
      email: email.toUpperCase(),
      password1: 'another password 1',
      password2: 'another password 1',
      inviteToken: token,
    });
    const fresh = await new Browser(t.app, { ip: randomIp() }).post('/api/auth/signup/', {
      email: uniqueEmail(),
      password1: 'another password 1',
      password2: 'another password 1',
      inviteToken: (await createInvite(t)).token,
    });
    expect(taken.statusCode).toBe(201);
    expect(taken.json()).toEqual({ verification_sent: true });
    expect(fresh.statusCode).toBe(201);
    expect(taken.json()).toEqual(fresh.json());
    expect(taken.cookies.map((c) => c.name).sort()).toEqual(fresh.cookies.map((c) => c.name).sort());

    // The owner hears of it, with a way in; nobody is signed in to their account.
    const mail = await t.smtp.waitFor(email, { subject: /already have a Daybook account/, after: before });
    expect(mail.text).toContain('http://daybook.test/auth/forgot-password');
    expect((await browser.get('/api/users/me/')).statusCode).toBe(401);
    expect((await browser.get(`${API}/auth/session`)).json().data.flows).toContainEqual({
      id: 'verify_email',
      is_pending: true,
    });
    const stored = await t.app.db.prisma.invite.findUniqueOrThrow({ where: { id: invite.id } });
    expect(stored.uses).toBe(0);
    expect(await countUsers(email)).toBe(1);
  });
});
