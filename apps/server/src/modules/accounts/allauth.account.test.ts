// behaviours.md "Account management" and "Providers" items.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser, uniqueEmail, verificationKey } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A password Django finds too similar to the address, though it does not contain the local part. */
const lookalike = (email: string) => `${email.split('@')[0]?.replace('-', '_')}5`;

describe('password change', () => {
  it('refuses a new password too similar to the email address (issue 10)', async () => {
    const { browser, email } = await signedInUser(t);
    const res = await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: lookalike(email),
    });
    expect(res.json()).toEqual({
      status: 400,
      errors: [
        {
          code: 'password_too_similar',
          message: 'The password is too similar to the email address.',
          param: 'new_password',
        },
      ],
    });
  });

  it('behaviour 29: requires the current password, checks it, validates the new one, keeps the session, mails a notice', async () => {
    const { browser, email } = await signedInUser(t);
    const missing = await browser.post(`${API}/account/password/change`, { new_password: 'a new password 1' });
    expect(missing.json()).toEqual({
      status: 400,
      errors: [{ message: 'This field is required.', code: 'required', param: 'current_password' }],
    });
    const wrong = await browser.post(`${API}/account/password/change`, {
      current_password: 'nope nope',
      new_password: 'a new password 1',
    });
    expect(wrong.json()).toEqual({
      status: 400,
      errors: [
        { param: 'current_password', code: 'enter_current_password', message: 'Your current password is incorrect.' },
      ],
    });
    const weak = await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: '12345678',
    });
    expect(weak.json().errors.map((e: { code: string }) => e.code)).toEqual([
      'password_too_common',
      'password_entirely_numeric',
    ]);

    const before = t.smtp.messages.length;
    const ok = await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'a new password 1',
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ status: 200, data: { user: { email } }, meta: { is_authenticated: true } });
    await t.smtp.waitFor(email, { subject: /password was changed/, after: before });
    expect((await browser.get(`${API}/auth/session`)).statusCode).toBe(200);
  });

  it("accepts the spec's names: oldPassword, password1, password2", async () => {
    const { browser } = await signedInUser(t);
    const mismatch = await browser.post(`${API}/account/password/change`, {
      oldPassword: PASSWORD,
      password1: 'new password 22',
      password2: 'other',
    });
    expect(mismatch.json().errors).toEqual([
      { code: 'password_mismatch', message: "The two password fields didn't match.", param: 'password2' },
    ]);
    const ok = await browser.post(`${API}/account/password/change`, {
      oldPassword: PASSWORD,
      password1: 'new password 22',
      password2: 'new password 22',
    });
    expect(ok.statusCode).toBe(200);
  });

  it('signs out other sessions of the account', async () => {
    const { browser, email } = await signedInUser(t);
    const second = new Browser(t.app, { ip: randomIp() });
    await second.post(`${API}/auth/login`, { email, password: PASSWORD });
    expect((await second.get(`${API}/auth/session`)).statusCode).toBe(200);
    await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'rotated password 5',
    });
    expect((await second.get(`${API}/auth/session`)).statusCode).toBe(401);
  });

  it('behaviour 29: 401 when signed out; 5 changes a minute, then 429', async () => {
    expect((await new Browser(t.app).post(`${API}/account/password/change`, {})).statusCode).toBe(401);
    const { browser } = await signedInUser(t);
    for (let i = 0; i < 5; i++)
      await browser.post(`${API}/account/password/change`, { current_password: 'wrong', new_password: 'x' });
    expect(
      (
        await browser.post(`${API}/account/password/change`, {
          current_password: PASSWORD,
          new_password: 'fine password 9',
        })
      ).json(),
    ).toEqual({ status: 429 });
  });
});

describe('email addresses', () => {
  it('behaviour 30: signed out, GET is 401 and POST 409', async () => {
    const browser = new Browser(t.app);
    expect((await browser.get(`${API}/account/email`)).statusCode).toBe(401);
    expect((await browser.post(`${API}/account/email`, { email: 'x@example.com' })).json()).toEqual({ status: 409 });
    expect((await browser.put(`${API}/account/email`, { email: 'x@example.com' })).statusCode).toBe(401);
    expect((await browser.patch(`${API}/account/email`, { email: 'x@example.com', primary: true })).statusCode).toBe(
      401,
    );
    expect((await browser.delete(`${API}/account/email`, { email: 'x@example.com' })).statusCode).toBe(401);
  });

  it('behaviour 31: add, verify, make primary, remove; each answers the whole list', async () => {
    const { browser, email } = await signedInUser(t);
    expect((await browser.get(`${API}/account/email`)).json()).toEqual({
      status: 200,
      data: [{ email, primary: true, verified: true }],
    });
    const second = uniqueEmail('second');
    const added = await browser.post(`${API}/account/email`, { email: second });
    expect(added.json().data).toEqual([
      { email, primary: true, verified: true },
      { email: second, primary: false, verified: false },
    ]);
    const dup = await browser.post(`${API}/account/email`, { email: second });
    expect(dup.json().errors).toEqual([
      {
        code: 'duplicate_email',
        message: 'This email address is already associated with this account.',
        param: 'email',
      },
    ]);

    const unverified = await browser.patch(`${API}/account/email`, { email: second, primary: true });
    expect(unverified.json().errors).toEqual([
      { code: 'unverified_primary_email', message: 'Your primary email address must be verified.', param: 'email' },
    ]);
    expect((await browser.patch(`${API}/account/email`, { email: second })).json().errors[0]).toMatchObject({
      code: 'required',
      param: 'primary',
    });

    const key = await verificationKey(t, second);
    expect((await browser.post(`${API}/auth/email/verify`, { key })).statusCode).toBe(200);
    const primary = await browser.patch(`${API}/account/email`, { email: second, primary: true });
    expect(primary.json().data).toEqual([
      { email: second, primary: true, verified: true },
      { email, primary: false, verified: true },
    ]);
    expect((await browser.get('/api/users/me/')).json().email).toBe(second);

    const cannot = await browser.delete(`${API}/account/email`, { email: second });
    expect(cannot.json().errors).toEqual([
      { code: 'cannot_remove_primary_email', message: 'You cannot remove your primary email address.', param: 'email' },
    ]);
    const removed = await browser.delete(`${API}/account/email`, { email });
    expect(removed.json().data).toEqual([{ email: second, primary: true, verified: true }]);
    const unknown = await browser.delete(`${API}/account/email`, { email: 'not-mine@example.com' });
    expect(unknown.json().errors).toEqual([
      { code: 'unknown_email', message: 'Unknown email address.', param: 'email' },
    ]);
  });

  it('behaviour 32: PUT resends (200), then the 180 s cooldown answers 403; manage_email allows 10 a minute', async () => {
    const { browser } = await signedInUser(t);
    const extra = uniqueEmail('extra');
    await browser.post(`${API}/account/email`, { email: extra });
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${extra}` } });
    expect((await browser.put(`${API}/account/email`, { email: extra })).json()).toEqual({ status: 200 });
    expect((await browser.put(`${API}/account/email`, { email: extra })).json()).toEqual({ status: 403 });
    for (let i = 0; i < 7; i++) await browser.put(`${API}/account/email`, { email: extra });
    expect((await browser.put(`${API}/account/email`, { email: extra })).json()).toEqual({ status: 429 });
  });

  it('behaviour 33: an address another account owns is accepted silently', async () => {
    const owner = await signedInUser(t);
    const { browser } = await signedInUser(t);
    const res = await browser.post(`${API}/account/email`, { email: owner.email });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toContainEqual({ email: owner.email, primary: false, verified: false });
  });

  it('allows at most 5 addresses', async () => {
    const { browser } = await signedInUser(t);
    for (let i = 0; i < 4; i++)
      expect((await browser.post(`${API}/account/email`, { email: uniqueEmail(`n${i}`) })).statusCode).toBe(200);
    const sixth = await browser.post(`${API}/account/email`, { email: uniqueEmail('six') });
    expect(sixth.json().errors[0].code).toBe('max_email_addresses');
  });
});

describe('reauthentication', () => {
  it('behaviour 34: the right password adds a reauthenticated method; a wrong one is incorrect_password', async () => {
    const { browser } = await signedInUser(t);
    const wrong = await browser.post(`${API}/auth/reauthenticate`, { password: 'nope' });
    expect(wrong.json().errors).toEqual([
      { code: 'incorrect_password', message: 'Incorrect password.', param: 'password' },
    ]);
    const ok = await browser.post(`${API}/auth/reauthenticate`, { password: PASSWORD });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.methods.at(-1)).toMatchObject({ method: 'password', reauthenticated: true });
  });
});

describe('providers', () => {
  it('behaviour 35/36: lists no accounts yet; disconnecting needs both fields and reports an unknown account without a param', async () => {
    expect((await new Browser(t.app).get(`${API}/account/providers`)).statusCode).toBe(401);
    const { browser } = await signedInUser(t);
    expect((await browser.get(`${API}/account/providers`)).json()).toEqual({ status: 200, data: [] });
    const missing = await browser.delete(`${API}/account/providers`, {});
    expect(missing.json().errors.map((e: { param: string }) => e.param)).toEqual(['provider', 'account']);
    const unknown = await browser.delete(`${API}/account/providers`, { provider: 'google', account: '123' });
    expect(unknown.json()).toEqual({
      status: 400,
      errors: [{ code: 'account_not_found', message: 'Unknown account.' }],
    });
    const spec = await browser.post(`${API}/account/providers/disconnect`, { account: '123' });
    expect(spec.json().errors).toEqual([{ code: 'account_not_found', message: 'Unknown account.' }]);
    const connect = await browser.post(`${API}/socialaccount/providers/connect`, { provider: 'google' });
    expect(connect.json().errors).toEqual([
      { code: 'unknown_provider', message: 'Unknown provider.', param: 'provider' },
    ]);
  });

  it('behaviour 37: the provider redirect form post checks the CSRF field and redirects back with an error', async () => {
    const browser = new Browser(t.app);
    await browser.get(`${API}/config`);
    const csrf = browser.cookies.get('csrftoken') ?? '';
    const form = new URLSearchParams({
      provider: 'google',
      process: 'connect',
      callback_url: '/accounts/3rdparty/',
      csrfmiddlewaretoken: csrf,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/provider/redirect`,
      payload: form.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://daybook.test' },
      cookies: { csrftoken: csrf },
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/accounts/3rdparty/?error=unknown&error_process=connect');
    const offsite = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/provider/redirect`,
      payload: new URLSearchParams({
        provider: 'google',
        process: 'login',
        callback_url: 'https://evil.example/',
        csrfmiddlewaretoken: csrf,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      cookies: { csrftoken: csrf },
    });
    expect(offsite.headers.location).toBe('/?error=unknown&error_process=login');
    const noToken = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/provider/redirect`,
      payload: 'provider=google',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      cookies: { csrftoken: csrf },
    });
    expect(noToken.statusCode).toBe(403);
  });
});
