// TEMPORARY security review attack file. Never commit. Deleted at the end of the review.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type FakeCalendarProviders, startFakeCalendarProviders } from '../../../../../tests/helpers/fake-calendar.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, createTestApp, TEST_SECRET, type TestApp } from '../../test/test-app.ts';

const API = '/_allauth/browser/v1';
const PUBLIC = 'http://daybook.test';
const today = new Date().toISOString().slice(0, 10);
const SECRET_PATH = 'sEcReTpAtH-9f8e7d6c5b4a';
const out: string[] = [];
const log = (...a: unknown[]) => {
  const line = a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' ');
  out.push(line);
  console.log(`RESULT ${line}`);
};

let providers: FakeCalendarProviders;
let t: TestApp;
let closed: TestApp;
let ics: Server;
let icsBase: string;
let icsHits = 0;
const box = createSecretBox([TEST_SECRET], 'calendar connections');

const cal = (name: string, extra = '') => `BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Test//EN\r
X-WR-CALNAME:${name}\r
BEGIN:VEVENT\r
UID:ev-1\r
DTSTAMP:20260101T000000Z\r
DTSTART:${today.replaceAll('-', '')}T170000Z\r
DTEND:${today.replaceAll('-', '')}T180000Z\r
SUMMARY:<b>Title</b><script>alert('title')</script>\r
URL:javascript:alert(1)\r
${extra}END:VEVENT\r
END:VCALENDAR\r
`;

beforeAll(async () => {
  providers = await startFakeCalendarProviders();
  for (const id of ['google', 'microsoft'] as const)
    providers.registerClient(id, {
      clientId: `${id}-client`,
      clientSecret: `${id}-secret`,
      redirectUris: [`${PUBLIC}/accounts/${id}/login/callback/`],
    });
  ics = createServer((req, res) => {
    icsHits++;
    const url = req.url ?? '/';
    const port = (ics.address() as AddressInfo).port;
    if (url.startsWith('/xss')) {
      res.writeHead(200, { 'content-type': 'text/calendar' });
      return res.end(cal(`<script>alert('calname')</script>"'><img src=x onerror=alert(2)>`));
    }
    if (url.startsWith('/redir-localhost'))
      return res.writeHead(302, { location: `http://localhost:${port}/good.ics` }).end();
    if (url.startsWith('/redir-meta'))
      return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (url.startsWith('/redir-v6')) return res.writeHead(302, { location: `http://[::1]:${port}/good.ics` }).end();
    if (url.startsWith('/redir-mapped'))
      return res.writeHead(302, { location: `http://[::ffff:127.0.0.2]:${port}/good.ics` }).end();
    if (url.startsWith('/redir-127-2'))
      return res.writeHead(302, { location: `http://127.0.0.2:${port}/good.ics` }).end();
    if (url.startsWith('/redir-file')) return res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    if (url.startsWith('/redir-gopher')) return res.writeHead(302, { location: 'gopher://127.0.0.1:6379/_INFO' }).end();
    if (url.includes('fail500')) return res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    if (url.startsWith('/html')) return res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    if (url.startsWith('/slow')) {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/calendar' }).end(cal(`Slow ${url}`)), 300);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/calendar' }).end(cal(`Cal ${url.slice(0, 40)}`));
  });
  await new Promise<void>((resolve) => ics.listen(0, '127.0.0.1', resolve));
  icsBase = `http://127.0.0.1:${(ics.address() as AddressInfo).port}`;
  const env = {
    GOOGLE_CLIENT_ID: 'google-client',
    GOOGLE_CLIENT_SECRET: 'google-secret',
    MICROSOFT_CLIENT_ID: 'microsoft-client',
    MICROSOFT_CLIENT_SECRET: 'microsoft-secret',
    LOG_LEVEL: 'trace',
    LOG_FORMAT: 'json',
  };
  t = await createTestApp(
    { ...env, FETCH_ALLOW: '127.0.0.1' },
    { calendar: { endpoints: providers.endpoints, cacheMs: 0 } },
  );
  // Default FETCH_ALLOW (nothing private allowed): the SSRF checks.
  closed = await createTestApp(env, { calendar: { endpoints: providers.endpoints, cacheMs: 0 } });
});

afterAll(async () => {
  for (const app of [t, closed]) {
    try {
      await app?.close();
    } catch (err) {
      log('CLOSE-PROBLEM', (err as Error).message.slice(0, 3000));
    }
  }
  await providers?.close();
  await new Promise((resolve) => ics?.close(resolve));
  writeFileSync('/tmp/atk/results-A.txt', out.join('\n'));
});

const form = (browser: Browser, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  browser.request(
    'POST',
    path,
    new URLSearchParams({ csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '', ...fields }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  );

async function startConnect(browser: Browser, provider: string, callback = '/accounts/3rdparty/') {
  const res = await form(browser, `${API}/auth/provider/redirect`, {
    provider,
    process: 'connect',
    callback_url: callback,
  });
  return { status: res.statusCode, location: String(res.headers.location) };
}

async function land(browser: Browser, redirect: string) {
  const url = new URL(redirect);
  const res = await browser.get(url.pathname + url.search);
  return { status: res.statusCode, location: String(res.headers.location ?? '') };
}

const cookieHeader = (b: Browser) => [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

describe('1. OAuth', () => {
  it('state forgery / replay / cross-user / anonymous / provider swap / PKCE swap', async () => {
    providers.setAccount('google', { sub: 'g-att', email: 'attacker@gmail.test', name: 'Att' });
    const attacker = await signedInUser(t);
    const victim = await signedInUser(t);

    // Login-CSRF-like: attacker's consent code delivered to the victim.
    const a = await startConnect(attacker.browser, 'google');
    const back = await providers.approve(a.location);
    const victimLands = await land(victim.browser, back);
    log('attacker-code-in-victim-session', victimLands);
    const victimProviders = (await victim.browser.get(`${API}/account/providers`)).json();
    log('victim-accounts-after', victimProviders.data);
    // Does the attacker's own state still work after the victim's browser hit it? (state consumed)
    log('attacker-lands-after-victim', await land(attacker.browser, back));

    // Anonymous landing consumes the state?
    const a2 = await startConnect(attacker.browser, 'google');
    const back2 = await providers.approve(a2.location);
    const anon = await t.app.inject({ url: new URL(back2).pathname + new URL(back2).search });
    log('anonymous-landing', anon.statusCode, anon.headers.location);
    log('owner-after-anonymous-landing', await land(attacker.browser, back2));

    // Provider swap: Google state on the Microsoft callback.
    const a3 = await startConnect(attacker.browser, 'google');
    const back3 = new URL(await providers.approve(a3.location));
    const swapped = await attacker.browser.get(`/accounts/microsoft/login/callback/${back3.search}`);
    log('google-state-on-microsoft-callback', swapped.statusCode, swapped.headers.location);

    // PKCE swap: two flows in one session, codes exchanged between states.
    const f1 = await startConnect(attacker.browser, 'google');
    const f2 = await startConnect(attacker.browser, 'google');
    const b1 = new URL(await providers.approve(f1.location));
    const b2 = new URL(await providers.approve(f2.location));
    const mixed = `/accounts/google/login/callback/?state=${encodeURIComponent(b1.searchParams.get('state') ?? '')}&code=${encodeURIComponent(b2.searchParams.get('code') ?? '')}`;
    const mixedRes = await attacker.browser.get(mixed);
    log('pkce-swap (state1+code2)', mixedRes.statusCode, mixedRes.headers.location, providers.tokenRequests.at(-1));

    // Code injection into the token request body.
    const f3 = await startConnect(attacker.browser, 'google');
    const b3 = new URL(await providers.approve(f3.location));
    const injected = `/accounts/google/login/callback/?state=${encodeURIComponent(b3.searchParams.get('state') ?? '')}&code=${encodeURIComponent(`${b3.searchParams.get('code')}&grant_type=refresh_token&code_verifier=x`)}`;
    const injRes = await attacker.browser.get(injected);
    log('code-injection', injRes.statusCode, injRes.headers.location, providers.tokenRequests.at(-1));
  });

  it('odd callback params', async () => {
    const { browser } = await signedInUser(t);
    const f = await startConnect(browser, 'google');
    const back = new URL(await providers.approve(f.location));
    const state = back.searchParams.get('state') ?? '';
    const code = back.searchParams.get('code') ?? '';
    const cases: Record<string, string> = {
      none: '',
      'state-array': `?state=${state}&state=${state}&code=${code}`,
      'code-array': `?state=${state}&code=${code}&code=${code}`,
      'state-bracket': `?state[]=${state}&code=${code}`,
      'state-obj': `?state[a]=${state}&code=${code}`,
      'huge-state': `?state=${'a'.repeat(100_000)}&code=x`,
      'huge-code': `?state=${'a'.repeat(10)}&code=${'c'.repeat(200_000)}`,
      'error-array': `?state=x&error=a&error=b`,
      'nul-bytes': `?state=%00%00&code=%00`,
      'bad-percent': `?state=%zz&code=%`,
      unicode: `?state=%F0%9F%98%80&code=%E2%80%AE`,
    };
    for (const [name, q] of Object.entries(cases)) {
      const res = await browser.get(`/accounts/google/login/callback/${q}`);
      log(`callback ${name}`, res.statusCode, String(res.headers.location ?? res.body.slice(0, 120)));
    }
    for (const p of ['ics', '__proto__', 'constructor', 'toString', '%00', '..%2F..%2Fapi', 'x'.repeat(5000)]) {
      const res = await browser.get(`/accounts/${p}/login/callback/?state=${state}&code=${code}`);
      log(
        `callback provider=${p.slice(0, 20)}`,
        res.statusCode,
        String(res.headers.location ?? res.body.slice(0, 100)),
      );
    }
    // The real state still usable? (it was not consumed by odd requests with array state)
    log('real state after odd requests', await land(browser, back.href));
    // error with a valid state
    const f2 = await startConnect(browser, 'google');
    const s2 = new URL(f2.location).searchParams.get('state');
    const e = await browser.get(
      `/accounts/google/login/callback/?state=${s2}&error=server_error&error_description=%3Cscript%3E`,
    );
    log('error=server_error', e.statusCode, e.headers.location);

    // Real HTTP: huge query through Node's header limit
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as AddressInfo).port;
    const big = await fetch(`http://127.0.0.1:${port}/accounts/google/login/callback/?state=${'a'.repeat(70_000)}`, {
      redirect: 'manual',
    }).catch((err: Error) => ({ status: `fetch error ${err.message}` }));
    log('real-http huge query', (big as { status: unknown }).status);
  });

  it('open redirect via callback_url', async () => {
    const { browser } = await signedInUser(t);
    const payloads = [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example/',
      '\\/evil.example',
      '/%5Cevil.example',
      '/%2F%2Fevil.example',
      '/%2f/evil.example',
      '/..//evil.example',
      '/.//evil.example',
      '/./%2e/%2F/evil.example',
      '///evil.example',
      'http://daybook.test@evil.example/',
      'http://daybook.test.evil.example/',
      'http://daybook.test:80@evil.example/',
      'http://daybook.test/..//evil.example',
      'http://daybook.test//evil.example',
      'http://daybook.test/\\evil.example',
      'http://daybook.test/%2F%2Fevil.example',
      'HTTP://DAYBOOK.TEST/ok',
      'http:/evil.example',
      'http:evil.example',
      'javascript:alert(1)',
      ' /evil',
      '/\t/evil.example',
      '/%09/evil.example',
      '/%0d%0aSet-Cookie:%20x=1',
      '/\r\nSet-Cookie: x=1',
      '/@evil.example',
      '//\\evil.example',
      '/ /evil.example',
      '/ok#//evil.example',
      '/ok?next=//evil.example',
      '/\u3002/evil.example',
      '/%E2%80%AE',
      '/\u2028//evil.example',
      '/\uFF0F/evil.example',
      `/${'a'.repeat(20000)}`,
    ];
    const bad: string[] = [];
    for (const p of payloads) {
      // process=login fails at once and redirects to the callback; process=connect goes through consent.
      const r1 = await form(browser, `${API}/auth/provider/redirect`, {
        provider: 'google',
        process: 'login',
        callback_url: p,
      });
      const loc1 = String(r1.headers.location ?? '');
      let loc2 = '';
      let status2 = 0;
      const c = await startConnect(browser, 'google', p);
      if (c.status === 302 && c.location.startsWith('http://127.0.0.1')) {
        const denied = await providers.deny(c.location);
        const r = await land(browser, denied);
        loc2 = r.location;
        status2 = r.status;
      }
      const j = await browser.post(`${API}/socialaccount/providers/connect`, { provider: 'google', callback_url: p });
      let loc3 = '';
      if (j.statusCode === 200) {
        const d = await providers.deny(j.json().data.url);
        loc3 = (await land(browser, d)).location;
      }
      for (const loc of [loc1, loc2, loc3]) {
        const resolved = new URL(loc, 'http://daybook.test/');
        // What a browser would do with Location (WHATWG URL): same origin?
        if (resolved.origin !== 'http://daybook.test' || /^[/\\]{2}/.test(loc) || /^\/\\/.test(loc))
          bad.push(`${JSON.stringify(p)} -> ${loc}`);
      }
      log(
        `redirect ${JSON.stringify(p).slice(0, 60)}`,
        r1.statusCode,
        loc1.slice(0, 80),
        '|',
        status2,
        loc2.slice(0, 80),
        '|',
        j.statusCode,
        loc3.slice(0, 80),
      );
    }
    log('OPEN-REDIRECTS', bad);
  });

  it('CSRF on the provider redirect form and the connections page forms', async () => {
    const { browser } = await signedInUser(t);
    await form(browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/csrf-target.ics` });
    const [conn] = (await browser.get('/api/calendar/connections/')).json();
    const token = browser.cookies.get('csrftoken') ?? '';
    const targets: Array<[string, string]> = [
      [`${API}/auth/provider/redirect`, `provider=google&process=connect&callback_url=%2F`],
      ['/accounts/3rdparty/ics/', `url=${encodeURIComponent(`${icsBase}/csrf-added.ics`)}`],
      [`/accounts/3rdparty/${conn.id}/remove/`, ''],
      ['/accounts/logout/', ''],
      [`${API}/account/providers/disconnect`, 'account=x'],
    ];
    const variants: Array<[string, Record<string, string>, (b: string) => string, string]> = [
      ['no token, no origin', {}, (b) => b, 'application/x-www-form-urlencoded'],
      ['no token, same origin', { origin: PUBLIC }, (b) => b, 'application/x-www-form-urlencoded'],
      [
        'wrong token',
        { origin: PUBLIC },
        (b) => `${b}&csrfmiddlewaretoken=${'A'.repeat(32)}`,
        'application/x-www-form-urlencoded',
      ],
      [
        'right token, foreign origin',
        { origin: 'https://evil.example' },
        (b) => `${b}&csrfmiddlewaretoken=${token}`,
        'application/x-www-form-urlencoded',
      ],
      [
        'right token, origin null',
        { origin: 'null' },
        (b) => `${b}&csrfmiddlewaretoken=${token}`,
        'application/x-www-form-urlencoded',
      ],
      [
        'right token, origin daybook.test.evil',
        { origin: 'http://daybook.test.evil.example' },
        (b) => `${b}&csrfmiddlewaretoken=${token}`,
        'application/x-www-form-urlencoded',
      ],
      ['right token in text/plain', { origin: PUBLIC }, (b) => `${b}&csrfmiddlewaretoken=${token}`, 'text/plain'],
      [
        'right token, no origin (control)',
        {},
        (b) => `${b}&csrfmiddlewaretoken=${token}`,
        'application/x-www-form-urlencoded',
      ],
    ];
    for (const [path, body] of targets) {
      for (const [name, headers, make, type] of variants) {
        if (path === '/accounts/logout/' && name.includes('control')) continue;
        if (path.includes('/remove/') && name.includes('control')) continue;
        const res = await t.app.inject({
          method: 'POST',
          url: path,
          payload: make(body),
          headers: { cookie: cookieHeader(browser), 'content-type': type, ...headers },
        });
        log(
          `csrf ${path.replace(API, '').slice(0, 34)} [${name}]`,
          res.statusCode,
          String(res.headers.location ?? res.body.slice(0, 90)),
        );
      }
    }
    const still = (await browser.get('/api/calendar/connections/')).json().map((c: { display: string }) => c.display);
    log('connections after CSRF attempts', still);
    const session = await browser.get(`${API}/auth/session`);
    log('still signed in after logout CSRF attempts', session.statusCode);
    // GET on the remove page must not remove
    await browser.get(`/accounts/3rdparty/${conn.id}/remove/`);
    await t.app.inject({
      method: 'HEAD',
      url: `/accounts/3rdparty/${conn.id}/remove/`,
      headers: { cookie: cookieHeader(browser) },
    });
    log('after GET/HEAD remove page', (await browser.get('/api/calendar/connections/')).json().length);
  });
});

describe('2. IDOR', () => {
  it('another user\u2019s connection id and uid', async () => {
    providers.setAccount('google', { sub: 'g-owner', email: 'owner@gmail.test', name: 'Owner' });
    const owner = await signedInUser(t);
    const other = await signedInUser(t);
    log(
      'owner connects google',
      await land(owner.browser, await providers.approve((await startConnect(owner.browser, 'google')).location)),
    );
    await form(owner.browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/owner-${SECRET_PATH}.ics` });
    const conns = (await owner.browser.get('/api/calendar/connections/')).json();
    const accounts = (await owner.browser.get(`${API}/account/providers`)).json().data;
    for (const c of conns) {
      const g = await other.browser.get(`/accounts/3rdparty/${c.id}/remove/`);
      const p = await form(other.browser, `/accounts/3rdparty/${c.id}/remove/`, {});
      log(
        `other GET/POST remove ${c.provider}#${c.id}`,
        g.statusCode,
        p.statusCode,
        g.body.includes(c.display) || p.body.includes(c.display) ? 'LEAKS DISPLAY' : 'no leak',
      );
    }
    for (const v of [
      '0',
      '-1',
      `0${conns[0].id}`,
      `${conns[0].id}.0`,
      `${conns[0].id}%00`,
      '99999999999',
      '1e3',
      '2147483648',
      ' 1',
      'abc',
      '1/../2',
    ]) {
      const g = await other.browser.get(`/accounts/3rdparty/${v}/remove/`);
      const p = await form(other.browser, `/accounts/3rdparty/${v}/remove/`, {});
      log(`other remove id=${JSON.stringify(v)}`, g.statusCode, p.statusCode);
    }
    for (const a of accounts) {
      const d = await other.browser.delete(`${API}/account/providers`, { provider: a.provider.id, account: a.uid });
      const p = await other.browser.post(`${API}/account/providers/disconnect`, { account: a.uid });
      log(
        `other disconnect ${a.provider.id}`,
        d.statusCode,
        d.json().errors?.[0]?.code,
        p.statusCode,
        p.json().errors?.[0]?.code,
      );
    }
    const weird: unknown[] = [
      { account: ['x'] },
      { account: { $ne: '' } },
      { account: '' },
      {},
      { account: 'x', provider: 5 },
      { account: '__proto__' },
    ];
    for (const b of weird) {
      const r = await other.browser.post(`${API}/account/providers/disconnect`, b);
      log(`disconnect body ${JSON.stringify(b)}`, r.statusCode, r.body.slice(0, 120));
    }
    const ev = (await other.browser.get(`/api/calendar/events/?date=${today}`)).json();
    log('other events', ev.events.length, ev.problems.length);
    log('other connections', (await other.browser.get('/api/calendar/connections/')).json());
    log('owner still has', (await owner.browser.get('/api/calendar/connections/')).json().length);
  });
});

describe('3. SSRF via the ICS form', () => {
  it('refuses private and odd addresses', async () => {
    const { browser } = await signedInUser(closed);
    const port = (ics.address() as AddressInfo).port;
    const urls = [
      `http://127.0.0.1:${port}/good.ics`,
      `http://localhost:${port}/good.ics`,
      `http://LOCALHOST.:${port}/good.ics`,
      `http://[::1]:${port}/good.ics`,
      `http://[::ffff:127.0.0.1]:${port}/good.ics`,
      `http://[::ffff:7f00:1]:${port}/good.ics`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
      `http://[::127.0.0.1]:${port}/`,
      `http://[64:ff9b::127.0.0.1]:${port}/`,
      `http://2130706433:${port}/good.ics`,
      `http://0x7f.1:${port}/good.ics`,
      `http://0177.0.0.1:${port}/good.ics`,
      `http://127.1:${port}/good.ics`,
      `http://0:${port}/good.ics`,
      `http://0.0.0.0:${port}/good.ics`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://100.100.100.200/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://[fe80::1]/',
      'http://127.0.0.1.nip.io/',
      'http://localtest.me/',
      'http://①②⑦.0.0.1/',
      `http://１２７．０．０．１:${port}/good.ics`,
      `http://127\u30020\u30020\u30021:${port}/good.ics`,
      `http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:${port}/good.ics`,
      `webcal://user:pass@127.0.0.1:${port}/good.ics`,
      `webcal://127.0.0.1:${port}/good.ics`,
      `webcals://127.0.0.1:${port}/good.ics`,
      `WEBCAL://localhost:${port}/x`,
      `https://user@example.com/x.ics`,
      `https://:pass@example.com/x.ics`,
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
      'data:text/calendar,BEGIN:VCALENDAR%0D%0AEND:VCALENDAR',
      'ftp://example.com/x.ics',
      'javascript:alert(1)',
      `http://127.0.0.1:${port}/${'a'.repeat(1960)}`,
      `http://example.com/${'a'.repeat(2100)}`,
      `http://${'a'.repeat(300)}.com/`,
      'http://[::1',
      'http://%31%32%37.0.0.1/',
      'http://exa mple.com/',
      `  http://127.0.0.1:${port}/spaces.ics  `,
      'webcal://',
      'http://',
    ];
    for (const u of urls) {
      const before = icsHits;
      const res = await form(browser, '/accounts/3rdparty/ics/', { url: u });
      const err =
        /class="field-error" id="ics-url-error">([^<]*)</.exec(res.body)?.[1] ??
        /banner-error[^>]*><p>([^<]*)</.exec(res.body)?.[1] ??
        '';
      log(
        `ssrf ${JSON.stringify(u).slice(0, 70)}`,
        res.statusCode,
        err.slice(0, 70),
        icsHits > before ? 'HIT-LOCAL-SERVER' : '',
      );
    }
    log('closed-app connections', (await browser.get('/api/calendar/connections/')).json().length);
  }, 120_000);

  it('redirects from an allowed host to private ones', async () => {
    const { browser } = await signedInUser(t);
    for (const p of [
      'redir-localhost',
      'redir-meta',
      'redir-v6',
      'redir-mapped',
      'redir-127-2',
      'redir-file',
      'redir-gopher',
      'html',
      'fail500',
    ]) {
      const before = icsHits;
      const res = await form(browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/${p}` });
      const err = /id="ics-url-error">([^<]*)</.exec(res.body)?.[1] ?? '';
      log(`redirect-ssrf ${p}`, res.statusCode, err.slice(0, 90), `hits=${icsHits - before}`);
    }
  }, 120_000);
});

describe('5/6/7. secrets, XSS, errors', () => {
  it('XSS through calendar names, provider display names, notices and the form echo', async () => {
    providers.setAccount('google', {
      sub: 'g-xss',
      email: `"><svg/onload=alert(4)>@gmail.test`,
      name: '<script>alert(5)</script>',
    });
    const { browser } = await signedInUser(t);
    log(
      'xss google connect',
      await land(browser, await providers.approve((await startConnect(browser, 'google')).location)),
    );
    const add = await form(browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/xss.ics` });
    log('xss ics add', add.statusCode);
    await form(browser, '/accounts/3rdparty/ics/', {
      url: `${icsBase}/xss2.ics`,
      name: `</h3><script>alert(6)</script>`,
    });
    const page = await browser.get(
      '/accounts/3rdparty/?error=<script>alert(7)</script>&connected=<script>x</script>&added=1',
    );
    const raw = page.body.match(/<script|<svg|<img|onerror=|onload=/gi);
    log('page raw tags', raw, 'csp', page.headers['content-security-policy']);
    log('page shows', page.body.match(/connection-name">[^<]*/g));
    const conns = (await browser.get('/api/calendar/connections/')).json();
    for (const c of conns) {
      const r = await browser.get(`/accounts/3rdparty/${c.id}/remove/`);
      log(
        `remove page raw tags #${c.id}`,
        r.body.match(/<script|<svg|<img|onerror=|onload=/gi),
        /<title>[^<]*<\/title>/.exec(r.body)?.[0],
      );
    }
    const echo = await form(browser, '/accounts/3rdparty/ics/', {
      url: `"><script>alert(8)</script>`,
      name: `"><img src=x onerror=alert(9)>`,
    });
    log(
      'form echo',
      echo.statusCode,
      echo.body.match(/<script|<img|onerror=/gi),
      /value="[^"]*"/g.exec(echo.body)?.[0],
    );
    const long = await form(browser, '/accounts/3rdparty/ics/', {
      url: `http://x/${'<'.repeat(1990)}`,
      name: 'n'.repeat(101),
    });
    log('form too long name', long.statusCode, /id="ics-name-error">([^<]*)/.exec(long.body)?.[1]);
    const ev = (await browser.get(`/api/calendar/events/?date=${today}`)).json();
    log(
      'events url/title from hostile ICS',
      ev.events.map((e: { title: string; url: string | null; calendar: string }) => [e.title, e.url, e.calendar]),
    );
  });

  it('secrets: DB, API, pages, error pages, provider list, ICS failure messages', async () => {
    providers.setAccount('google', { sub: 'g-sec', email: 'sec@gmail.test', name: 'Sec' });
    providers.setAccount('microsoft', { sub: 'm-sec', email: 'sec@outlook.test', name: 'Sec' });
    const { browser, userId } = await signedInUser(t);
    await land(browser, await providers.approve((await startConnect(browser, 'google')).location));
    await land(browser, await providers.approve((await startConnect(browser, 'microsoft')).location));
    const secretUrl = `${icsBase}/cal-${SECRET_PATH}.ics?token=QueryTok3n`;
    await form(browser, '/accounts/3rdparty/ics/', { url: secretUrl });
    // An ICS address that fails: what does the user see?
    const failing = await form(browser, '/accounts/3rdparty/ics/', {
      url: `${icsBase}/fail500-${SECRET_PATH}.ics?token=QueryTok3n`,
    });
    log('failing ICS add message', failing.statusCode, /id="ics-url-error">([^<]*)/.exec(failing.body)?.[1]);
    const rows = await t.database.db.query<Record<string, unknown>>(
      'SELECT * FROM calendar_connections WHERE user_id = $1',
      [userId],
    );
    const secrets: string[] = [SECRET_PATH, 'QueryTok3n'];
    for (const r of rows) {
      const s = String(r.secret);
      const opened = box.openJson<Record<string, unknown>>(s);
      for (const v of Object.values(opened)) if (typeof v === 'string' && v.length > 10) secrets.push(v);
      log('db row', {
        provider: r.provider,
        uid: r.uid,
        display: r.display,
        secretPrefix: s.slice(0, 12),
        plaintextKeys: Object.keys(opened),
      });
    }
    const states = await t.database.db.query<Record<string, unknown>>('SELECT * FROM calendar_oauth_states');
    log('oauth state rows', states.length, states.slice(0, 1));
    const dbDump = JSON.stringify(await t.database.db.query('SELECT * FROM calendar_connections'));
    log(
      'plaintext secret in calendar_connections?',
      secrets.filter((s) => dbDump.includes(s)).map((s) => s.slice(0, 8)),
    );
    // Make the stored ICS fail and the Google token refresh go through its paths, with trace logs on.
    providers.setAccessTokenTtl(60, 'google');
    providers.failNextApiRequests('google', 1, 401);
    providers.failNextApiRequests('microsoft', 1, 500);
    const responses: string[] = [];
    for (const p of [
      `/api/calendar/events/?date=${today}`,
      '/api/calendar/connections/',
      `${API}/account/providers`,
      `${API}/config`,
      '/accounts/3rdparty/',
      '/accounts/3rdparty/nope/',
      '/accounts/3rdparty/999999/remove/',
    ]) {
      const r = await browser.get(p);
      responses.push(r.body, JSON.stringify(r.headers));
    }
    providers.revokeAllGrants('google');
    providers.failNextTokenRequests(1, 500, 'google');
    responses.push((await browser.get(`/api/calendar/events/?date=${today}&tz=Europe/Berlin`)).body);
    responses.push((await browser.get(`/api/calendar/events/?date=${today}&tz=Asia/Tokyo`)).body);
    const all = responses.join('\n');
    log(
      'secrets in responses?',
      secrets.filter((s) => all.includes(s)).map((s) => s.slice(0, 8)),
    );
    log('events problems', JSON.parse(responses[0] ?? '{}').problems);
    writeFileSync('/tmp/atk/secrets.txt', secrets.join('\n'));
    // disconnect Google: the revoke call happens; grep the logs later.
    await browser.post(`${API}/account/providers/disconnect`, { account: 'sec@gmail.test' });
    providers.setAccessTokenTtl(3599, 'google');
  });

  it('errors: bodies, dates, zones, outages', async () => {
    const { browser } = await signedInUser(t);
    const tok = browser.cookies.get('csrftoken') ?? '';
    const base = { cookie: cookieHeader(browser), origin: PUBLIC, 'x-csrftoken': tok };
    const bodies: Array<[string, string, string | Buffer]> = [
      ['json object', 'application/json', JSON.stringify({ url: 123, name: ['a'] })],
      ['json malformed', 'application/json', '{"url":'],
      ['json array', 'application/json', '[1,2]'],
      ['json deep', 'application/json', '['.repeat(5000) + ']'.repeat(5000)],
      ['form malformed %', 'application/x-www-form-urlencoded', 'url=%zz%&name=%'],
      ['form 9KB', 'application/x-www-form-urlencoded', `url=${'a'.repeat(9000)}`],
      ['form 2MB', 'application/x-www-form-urlencoded', `url=${'a'.repeat(2_000_000)}`],
      ['json 2MB', 'application/json', JSON.stringify({ url: 'a'.repeat(2_000_000) })],
      [
        'multipart',
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttp://a\r\n--x--\r\n',
      ],
      ['text/plain', 'text/plain', 'url=http://a'],
      ['no content-type', '', 'url=http://a'],
      ['xml', 'application/xml', '<a/>'],
      ['form repeated', 'application/x-www-form-urlencoded', 'url=a&url=b&name=x&name=y'],
      ['form __proto__', 'application/x-www-form-urlencoded', '__proto__=x&constructor=y&url=http%3A%2F%2Fa'],
      ['empty', 'application/x-www-form-urlencoded', ''],
    ];
    for (const path of ['/accounts/3rdparty/ics/', `${API}/auth/provider/redirect`, '/accounts/3rdparty/1/remove/']) {
      for (const [name, type, payload] of bodies) {
        const headers: Record<string, string> = { ...base };
        if (type) headers['content-type'] = type;
        const res = await t.app.inject({ method: 'POST', url: path, payload, headers });
        log(
          `body ${path.replace(API, '').slice(0, 26)} [${name}]`,
          res.statusCode,
          String(res.headers['content-type'] ?? '').slice(0, 24),
          String(
            res.headers.location ??
              res.body.replace(/\s+/g, ' ').match(/<h1>[^<]*<\/h1>|"code":"[^"]*"|^.{0,80}/)?.[0] ??
              '',
          ),
        );
      }
    }
    const queries = [
      '?date=0000-01-01',
      '?date=1969-12-31',
      '?date=1970-01-01',
      '?date=9999-12-31',
      '?date=9999-12-30',
      '?date=9999-12-31&tz=Pacific/Kiritimati',
      '?date=9999-12-30&tz=Pacific/Kiritimati',
      '?date=1970-01-01&tz=Pacific/Pago_Pago',
      '?date=+02026-01-01',
      '?date=2026-1-1',
      `?date=${today}&tz=`,
      `?date=${today}&tz=${'A'.repeat(65)}`,
      `?date=${today}&tz=../../etc/passwd`,
      `?date=${today}&tz=europe/berlin`,
      `?date=${today}&tz=EST5EDT`,
      `?date=${today}&tz=Etc/GMT%2B12`,
      `?date=${today}&tz=%00`,
      `?date=${today}&tz=UTC&tz=UTC`,
      `?date=${today}&date=${today}`,
      `?date[]=${today}`,
      `?date=${today}&tz=America/Argentina/ComodRivadavia`,
      `?date=${today}&tz=Factory`,
      `?date=${today}&tz=+05:00`,
      `?date=${today}&tz=GMT+5`,
    ];
    // with an ICS connection so each window is computed
    await form(browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/errors.ics` });
    for (const q of queries) {
      const res = await browser.get(`/api/calendar/events/${q}`);
      log(`events ${q}`, res.statusCode, res.body.slice(0, 140));
    }
  });

  it('provider outages during connect', async () => {
    providers.setAccount('google', { sub: 'g-out', email: 'out@gmail.test', name: 'Out' });
    const { browser } = await signedInUser(t);
    const a = await startConnect(browser, 'google');
    const back = await providers.approve(a.location);
    providers.failNextTokenRequests(1, 500, 'google');
    log('token endpoint 500 on code exchange', await land(browser, back));
    const b = await startConnect(browser, 'google');
    const back2 = await providers.approve(b.location);
    const release = providers.holdTokenRequests();
    const started = Date.now();
    const r = await land(browser, back2);
    release();
    log('token endpoint hangs on code exchange', r, `after ${Date.now() - started} ms`);
    providers.failNextApiRequests('google', 1, 500);
    const c = await startConnect(browser, 'google');
    log('calendar API 500 on account lookup', await land(browser, await providers.approve(c.location)));
  }, 60_000);
});

describe('8. concurrency', () => {
  it('two tabs, two users, same ICS twice, 11 at once', async () => {
    providers.setAccount('google', { sub: 'g-shared', email: 'shared@gmail.test', name: 'Shared' });
    const u1 = await signedInUser(t);
    const u2 = await signedInUser(t);
    const back = await providers.approve((await startConnect(u1.browser, 'google')).location);
    log('two tabs same consent', await Promise.all([land(u1.browser, back), land(u1.browser, back)]));
    log(
      'second user same google account',
      await land(u2.browser, await providers.approve((await startConnect(u2.browser, 'google')).location)),
    );
    // Two different users finishing consent for the same (new) Google account at the same instant.
    providers.setAccount('google', { sub: 'g-race', email: 'race@gmail.test', name: 'Race' });
    const u3 = await signedInUser(t);
    const u4 = await signedInUser(t);
    const b3 = await providers.approve((await startConnect(u3.browser, 'google')).location);
    const b4 = await providers.approve((await startConnect(u4.browser, 'google')).location);
    log('two users racing same new google account', await Promise.all([land(u3.browser, b3), land(u4.browser, b4)]));
    log(
      'race rows',
      await t.database.db.query("SELECT user_id, uid FROM calendar_connections WHERE uid = 'race@gmail.test'"),
    );
    // Same user, two consents of the same account at once.
    providers.setAccount('google', { sub: 'g-race2', email: 'race2@gmail.test', name: 'Race2' });
    const b5 = await providers.approve((await startConnect(u3.browser, 'google')).location);
    const b6 = await providers.approve((await startConnect(u3.browser, 'google')).location);
    log('same user two consents at once', await Promise.all([land(u3.browser, b5), land(u3.browser, b6)]));

    const u5 = await signedInUser(t);
    const same = await Promise.all(
      [1, 2, 3].map(() => form(u5.browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/slow-same.ics` })),
    );
    log(
      'same ICS x3 at once',
      same.map((r) => r.statusCode),
      (await u5.browser.get('/api/calendar/connections/')).json().length,
    );
    const u6 = await signedInUser(t);
    const many = await Promise.all(
      Array.from({ length: 11 }, (_, i) =>
        form(u6.browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/slow-${i}.ics` }),
      ),
    );
    log(
      '11 ICS at once',
      many.map((r) => r.statusCode),
      (await u6.browser.get('/api/calendar/connections/')).json().length,
    );
    const many2 = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        form(u6.browser, '/accounts/3rdparty/ics/', { url: `${icsBase}/slow-b${i}.ics` }),
      ),
    );
    log(
      '15 more at once (at cap)',
      many2.map((r) => r.statusCode),
      (await u6.browser.get('/api/calendar/connections/')).json().length,
    );
    // cap through OAuth: user at 10 ICS connects google
    log('at cap connect google', await startConnect(u6.browser, 'google'));
  }, 120_000);
});
