// behaviours.md "Envelope and protocol" and "Session and CSRF" items, plus CSRF failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('envelope and protocol', () => {
  it('behaviour 1: body status equals the HTTP status; 409 is exactly {"status":409}', async () => {
    const { browser, email } = await signedInUser(t);
    const res = await browser.post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ status: 409 });
    expect(res.headers['cache-control']).toBe('max-age=0, no-cache, no-store, must-revalidate, private');
  });

  it('behaviour 2: 400 lists errors in field order, param only on field errors', async () => {
    const res = await new Browser(t.app).post(`${API}/auth/login`, {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      status: 400,
      errors: [
        { message: 'This field is required.', code: 'required', param: 'email' },
        { message: 'This field is required.', code: 'required', param: 'password' },
      ],
    });
    const bad = await new Browser(t.app).post(`${API}/auth/login`, { email: 'not-an-email', password: 'x' });
    expect(bad.json().errors).toEqual([{ message: 'Enter a valid email address.', code: 'invalid', param: 'email' }]);
  });

  it('behaviour 3: a 401 lists flows in allauth order, with no pending flow for a plain visitor', async () => {
    const res = await new Browser(t.app).get(`${API}/auth/session`);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      status: 401,
      data: { flows: [{ id: 'login' }, { id: 'signup' }] },
      meta: { is_authenticated: false },
    });
  });

  it('behaviour 4: a 200 authentication response carries the user and a password method', async () => {
    const { browser, email, userId } = await signedInUser(t);
    const res = await browser.get(`${API}/auth/session`);
    const body = res.json();
    expect(body).toMatchObject({
      status: 200,
      data: { user: { id: userId, display: email, email, has_usable_password: true } },
      meta: { is_authenticated: true },
    });
    expect(body.data.methods).toEqual([{ method: 'password', at: expect.any(Number), email }]);
    expect(body.data.user).not.toHaveProperty('username');
  });

  it('behaviour 6: invalid JSON gives 400, a wrong method 405, an unknown path 404', async () => {
    const browser = new Browser(t.app);
    const invalid = await browser.request('POST', `${API}/auth/login`, '{"email":', {
      'content-type': 'application/json',
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ status: 400 });
    const wrongMethod = await browser.request('PATCH', `${API}/auth/login`, {});
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json()).toEqual({ status: 405 });
    const unknown = await browser.get(`${API}/no/such/endpoint`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ status: 404 });
  });

  it('behaviour 11: GET /config reports email login, open signup, and the CSRF token', async () => {
    const res = await new Browser(t.app).get(`${API}/config`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.account).toEqual({
      login_methods: ['email'],
      is_open_for_signup: true,
      email_verification_by_code_enabled: false,
      login_by_code_enabled: false,
      password_reset_by_code_enabled: false,
      authentication_method: 'email',
    });
    const cookie = res.cookies.find((c) => c.name === 'csrftoken');
    expect(body.meta.csrf_token).toBe(cookie?.value);
  });
});

describe('session and CSRF', () => {
  it('behaviour 7: every response sets a JS-readable csrftoken cookie; unsafe requests need it', async () => {
    const res = await t.app.inject({ method: 'GET', url: `${API}/auth/session` });
    const cookie = res.cookies.find((c) => c.name === 'csrftoken');
    expect(cookie?.value).toMatch(/^[a-zA-Z0-9]{32}$/);
    expect(cookie?.httpOnly).toBeFalsy();
    expect(cookie?.sameSite).toBe('Lax');

    const noHeader = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { email: 'a@example.com', password: 'x' },
      cookies: { csrftoken: cookie?.value ?? '' },
    });
    expect(noHeader.statusCode).toBe(403);
    expect(noHeader.json()).toEqual({
      status: 403,
      errors: [{ code: 'csrf_failed', message: 'CSRF Failed: CSRF token missing or incorrect.' }],
    });

    const wrong = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { email: 'a@example.com', password: 'x' },
      cookies: { csrftoken: cookie?.value ?? '' },
      headers: { 'x-csrftoken': 'A'.repeat(32) },
    });
    expect(wrong.statusCode).toBe(403);

    const noCookie = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: {},
      headers: { 'x-csrftoken': cookie?.value ?? '' },
    });
    expect(noCookie.statusCode).toBe(403);
    expect(noCookie.json().errors[0].message).toBe('CSRF Failed: CSRF cookie not set.');
  });

  it("behaviour 7: accepts Django's 64-character masked token", async () => {
    const secret = 'abcdefghijklmnopqrstuvwxyzABCDEF';
    const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const mask = 'Z'.repeat(32);
    const cipher = [...secret]
      .map((c, i) => chars[(chars.indexOf(c) + chars.indexOf(mask[i] ?? '')) % chars.length])
      .join('');
    const res = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: {},
      cookies: { csrftoken: secret },
      headers: { 'x-csrftoken': mask + cipher },
    });
    expect(res.statusCode).toBe(400);
  });

  it('behaviour 7: a foreign Origin is refused even with the right token', async () => {
    const browser = new Browser(t.app, { origin: 'https://evil.example' });
    const res = await browser.post(`${API}/auth/login`, { email: 'a@example.com', password: 'x' });
    expect(res.statusCode).toBe(403);
    expect(res.json().errors[0].message).toMatch(/Origin checking failed - https:\/\/evil.example/);
  });

  it('the product API enforces CSRF too, in its own error shape', async () => {
    const { browser } = await signedInUser(t);
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/api/users/me/',
      payload: { is_daily_message_paused: true },
      cookies: Object.fromEntries(browser.cookies),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'CSRF Failed: CSRF token missing or incorrect.', code: 'csrf_failed' });
  });

  it('behaviour 8: HttpOnly sessionid; login rotates the session key and the CSRF token', async () => {
    const { browser, email } = await signedInUser(t);
    await browser.delete(`${API}/auth/session`);
    // An anonymous session holding a pending flow, then a login.
    const before = { ...Object.fromEntries(browser.cookies) };
    const res = await browser.post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(res.statusCode).toBe(200);
    const session = res.cookies.find((c) => c.name === 'sessionid');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');
    expect(browser.cookies.get('csrftoken')).not.toBe(before.csrftoken);
    expect(browser.cookies.get('sessionid')).not.toBe(before.sessionid);
  });

  it('behaviour 8: a password change rotates the key and the old one stops working', async () => {
    const { browser, email } = await signedInUser(t);
    const oldKey = browser.cookies.get('sessionid') ?? '';
    await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'another fine secret',
    });
    const stale = await t.app.inject({ method: 'GET', url: `${API}/auth/session`, cookies: { sessionid: oldKey } });
    expect(stale.statusCode).toBe(401);
    expect((await browser.get(`${API}/auth/session`)).json().data.user.email).toBe(email);
  });

  it('behaviour 9: a pending verify_email flow stays visible on later GETs', async () => {
    const { browser: creator } = await signedInUser(t);
    await creator.delete(`${API}/auth/session`);
    const { email } = await (await import('../../test/factories.ts')).signUp(t);
    const browser = new Browser(t.app);
    await browser.post(`${API}/auth/login`, { email, password: PASSWORD });
    const res = await browser.get(`${API}/auth/session`);
    expect(res.statusCode).toBe(401);
    expect(res.json().data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
  });

  it('behaviour 10: logout always answers 401 and drops pending flows', async () => {
    const browser = new Browser(t.app);
    const anonymous = await browser.delete(`${API}/auth/session`);
    expect(anonymous.statusCode).toBe(401);
    const { email } = await (await import('../../test/factories.ts')).signUp(t);
    const pending = new Browser(t.app);
    await pending.post(`${API}/auth/login`, { email, password: PASSWORD });
    const out = await pending.delete(`${API}/auth/session`);
    expect(out.statusCode).toBe(401);
    expect(out.json().data.flows.some((f: { is_pending?: boolean }) => f.is_pending)).toBe(false);
    expect((await pending.get(`${API}/auth/session`)).json().data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
  });
});
