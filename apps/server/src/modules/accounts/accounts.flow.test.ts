import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, signedInUser, signUp, uniqueEmail, verificationKey } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the whole account journey', () => {
  it('signup → verification mail → verify → login → session → logout', async () => {
    const email = uniqueEmail('journey');
    const { browser } = await signUp(t, email);
    // The new account's first session starts at signup.
    const me = await browser.get('/api/users/me/');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ email, email_verified: false, is_daily_message_paused: false });

    const key = await verificationKey(t, email);
    const other = new Browser(t.app);
    // An unverified address cannot sign in: 401 with verify_email pending.
    const blocked = await other.post('/_allauth/browser/v1/auth/login', { email, password: PASSWORD });
    expect(blocked.statusCode).toBe(401);
    expect(blocked.json()).toEqual({
      status: 401,
      data: { flows: [{ id: 'login' }, { id: 'signup' }, { id: 'verify_email', is_pending: true }] },
      meta: { is_authenticated: false },
    });

    const check = await other.get('/_allauth/browser/v1/auth/email/verify', { 'x-email-verification-key': key });
    expect(check.statusCode).toBe(200);
    expect(check.json()).toMatchObject({
      status: 200,
      data: { email, user: { email } },
      meta: { is_authenticating: true },
    });

    const confirm = await other.post('/_allauth/browser/v1/auth/email/verify', { key });
    expect(confirm.statusCode).toBe(401);

    const login = await other.post('/_allauth/browser/v1/auth/login', { email, password: PASSWORD });
    expect(login.statusCode).toBe(200);
    expect(login.json()).toMatchObject({
      status: 200,
      data: { user: { email, display: email, has_usable_password: true }, methods: [{ method: 'password', email }] },
      meta: { is_authenticated: true },
    });
    const session = await other.get('/_allauth/browser/v1/auth/session');
    expect(session.statusCode).toBe(200);

    const logout = await other.delete('/_allauth/browser/v1/auth/session');
    expect(logout.statusCode).toBe(401);
    expect((await other.get('/_allauth/browser/v1/auth/session')).statusCode).toBe(401);
  });

  it('a signed-in user can change their password, and the old one stops working', async () => {
    const { browser, email } = await signedInUser(t);
    const res = await browser.post('/_allauth/browser/v1/account/password/change', {
      current_password: PASSWORD,
      new_password: 'a brand new secret',
    });
    expect(res.statusCode).toBe(200);
    expect((await browser.get('/_allauth/browser/v1/auth/session')).statusCode).toBe(200);
    const fresh = new Browser(t.app);
    expect((await fresh.post('/_allauth/browser/v1/auth/login', { email, password: PASSWORD })).statusCode).toBe(400);
    expect(
      (await fresh.post('/_allauth/browser/v1/auth/login', { email, password: 'a brand new secret' })).statusCode,
    ).toBe(200);
  });
});
