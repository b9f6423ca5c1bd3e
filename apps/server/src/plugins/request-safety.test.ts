// What the security probe of issue 10 reproduced at the HTTP layer, each now refused: CSRF skipped for
// a percent-encoded path, a spoofed X-Forwarded-For, an open redirect, deeply nested JSON, ids past
// int4, and no HSTS over https.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser, uniqueEmail } from '../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../test/test-app.ts';
import { MAX_JSON_DEPTH } from './input.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const sessionCookie = (res: { cookies: Array<{ name: string; value: string }> }) =>
  res.cookies.find((c) => c.name === 'sessionid' && c.value);

describe('CSRF and sessions judge the route a request reaches, not how its path is spelled', () => {
  it('refuses a cross-site form login sent to a percent-encoded account path', async () => {
    const attacker = await signedInUser(t);
    for (const url of [`/%5Fallauth/browser/v1/auth/login`, `/_allauth/browser/v1/auth/%6Cogin`]) {
      const res = await t.app.inject({
        method: 'POST',
        url,
        remoteAddress: randomIp(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        payload: new URLSearchParams({ email: attacker.email, password: PASSWORD }).toString(),
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().errors[0].code).toBe('csrf_failed');
      expect(sessionCookie(res)).toBeUndefined();
    }
    // Without an Origin header the missing token still stops it.
    const noOrigin = await t.app.inject({
      method: 'POST',
      url: '/%5Fallauth/browser/v1/auth/login',
      remoteAddress: randomIp(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: attacker.email, password: PASSWORD }).toString(),
    });
    expect(noOrigin.statusCode).toBe(403);
    expect(sessionCookie(noOrigin)).toBeUndefined();
  });

  it('needs the token on a percent-encoded product API path, and loads the session there too', async () => {
    const { browser } = await signedInUser(t);
    const forged = await t.app.inject({
      method: 'POST',
      url: '/%61pi/memories/',
      headers: { cookie: `sessionid=${browser.cookies.get('sessionid')}`, 'content-type': 'application/json' },
      payload: { key: 'planted', data: 'written by another site' },
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toMatchObject({ code: 'csrf_failed' });
    const list = await browser.get('/%61pi/memories/');
    expect(list.statusCode).toBe(200);
    expect(list.json().results).toEqual([]);
  });
});

describe('TRUST_PROXY', () => {
  let proxied: TestApp;
  beforeAll(async () => {
    proxied = await createTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(() => proxied.close());

  /** A failed login as the proxy would forward it: the client wrote `spoofed`, the proxy appended `client`. */
  const failedLogin = (client: string, spoofed: string) =>
    new Browser(proxied.app, { ip: '127.0.0.1' }).post(
      `${API}/auth/login`,
      { email: uniqueEmail(), password: 'not the password' },
      { 'x-forwarded-for': `${spoofed}, ${client}` },
    );

  it('limits a client by the address its proxy saw, whatever it wrote in X-Forwarded-For', async () => {
    const refusal = async (client: string, spoofed: string) =>
      (await failedLogin(client, spoofed)).json().errors[0].code;
    const client = randomIp();
    for (let i = 0; i < 10; i++) expect(await refusal(client, randomIp())).toBe('email_password_mismatch');
    // Ten failures a minute from one address: a fresh spoofed entry does not make a new client.
    expect(await refusal(client, randomIp())).toBe('too_many_login_attempts');
    // Another client behind the same proxy is not affected.
    expect(await refusal(randomIp(), client)).toBe('email_password_mismatch');
  });
});

describe('redirects stay on this site', () => {
  it.each(['/..//evil.example', '//evil.example', '/\\evil.example', '/%2F%2Fevil.example', '/./..//evil.example/x'])(
    'provider redirect callback %s',
    async (callback) => {
      const browser = new Browser(t.app, { ip: randomIp() });
      await browser.get(`${API}/config`);
      const res = await browser.request(
        'POST',
        `${API}/auth/provider/redirect`,
        new URLSearchParams({
          provider: 'google',
          process: 'login',
          callback_url: callback,
          csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '',
        }).toString(),
        { 'content-type': 'application/x-www-form-urlencoded' },
      );
      expect(res.statusCode).toBe(302);
      const location = String(res.headers.location);
      expect(location).toMatch(/^\/(?![/\\])/);
      expect(new URL(location, 'https://daybook.example').host).toBe('daybook.example');
    },
  );

  it('keeps a local callback path', async () => {
    const browser = new Browser(t.app, { ip: randomIp() });
    await browser.get(`${API}/config`);
    const res = await browser.request(
      'POST',
      `${API}/auth/provider/redirect`,
      `provider=google&process=connect&callback_url=${encodeURIComponent('/accounts/3rdparty/?x=1')}&csrfmiddlewaretoken=${browser.cookies.get('csrftoken')}`,
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect(res.headers.location).toBe('/accounts/3rdparty/?x=1&error=unknown&error_process=connect');
  });
});

describe('hostile inputs answer 4xx, never 500', () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('refuses JSON nested 10,000 levels deep with 400 on the product and account APIs', async () => {
    const { browser } = await signedInUser(t);
    const headers = { 'content-type': 'application/json' };
    for (const [method, url] of [
      ['POST', '/api/memories/'],
      ['POST', '/api/memories/import/'],
      ['POST', '/api/auth/signup/'],
      ['PATCH', '/api/users/me/'],
    ] as const) {
      const res = await browser.request(method, url, nested(10_000), headers);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual({ error: 'The request body is nested too deeply.', code: 'bad_request' });
    }
    // Before the CSRF check: a client without a token gets the same clear 400.
    const anonymous = await t.app.inject({ method: 'POST', url: '/api/memories/', headers, payload: nested(10_000) });
    expect(anonymous.statusCode).toBe(400);
    const account = await browser.request('POST', `${API}/auth/login`, nested(10_000), headers);
    expect(account.statusCode).toBe(400);
    expect(account.json()).toEqual({
      status: 400,
      errors: [{ code: 'invalid', message: 'The request body is nested too deeply.' }],
    });
    // Real payloads are nowhere near the limit.
    const shallow = await browser.request('POST', '/api/memories/', nested(MAX_JSON_DEPTH), headers);
    expect(shallow.statusCode).toBe(400);
    expect(shallow.json().code).toBe('validation_error');
  });

  it('answers ids past the database integer range as 400 or 404', async () => {
    const { browser, userId } = await signedInUser(t);
    const history = await browser.get('/api/chat/messages/?before=2147483648');
    expect(history.statusCode).toBe(400);
    expect(history.json().code).toBe('validation_error');
    expect((await browser.get('/api/chat/messages/?before=2147483647')).statusCode).toBe(200);

    await t.app.db.prisma.user.update({ where: { id: userId }, data: { isAdmin: true } });
    for (const id of ['2147483648', '99999999999999999999', '1e3', '-1']) {
      const res = await browser.delete(`/api/admin/invites/${id}/`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json(), id).toEqual({ error: 'Invite not found', code: 'not_found' });
    }
  });
});

describe('HSTS', () => {
  it('is sent when PUBLIC_URL is https, and not over plain http', async () => {
    const secure = await createTestApp({ PUBLIC_URL: 'https://daybook.example' });
    try {
      const res = await secure.app.inject({ method: 'GET', url: '/healthz' });
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
    } finally {
      await secure.close();
    }
    const plain = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(plain.headers['strict-transport-security']).toBeUndefined();
  });
});
