import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { BOOT_ELEMENT_ID } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { signedInUser, signUp } from '../test/factories.ts';
import { Browser, createTestApp, TEST_SECRET, type TestApp } from '../test/test-app.ts';
import { BOOT_ACCOUNT, BOOT_SESSION, BOOT_SITE } from './web-app.ts';

const INDEX =
  '<!doctype html><html><body><div id="root"></div><script type="module" src="/assets/app-abc123.js"></script></body></html>';
const BOOT = new RegExp(`<script type="application/json" id="${BOOT_ELEMENT_ID}">([^<]*)</script>`);

/** The page as sent, with the answers it carries taken out (and parsed). */
function splitPage(body: string): { page: string; answers: Record<string, { status: number; body: unknown }> | null } {
  const match = BOOT.exec(body);
  return { page: body.replace(BOOT, ''), answers: match ? JSON.parse(match[1] as string) : null };
}

async function fakeDist() {
  const dir = await mkdtemp(path.join(tmpdir(), 'daybook-dist-'));
  await mkdir(path.join(dir, 'assets'));
  await writeFile(path.join(dir, 'index.html'), INDEX);
  await writeFile(path.join(dir, 'assets', 'app-abc123.js'), 'console.log("app")');
  // The build's compressed copies (apps/web/vite.config.ts precompress).
  await writeFile(path.join(dir, 'assets', 'app-abc123.js.br'), brotliCompressSync('console.log("app")'));
  await writeFile(path.join(dir, 'assets', 'app-abc123.js.gz'), gzipSync('console.log("app")'));
  await writeFile(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

describe('serving the web app in production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ NODE_ENV: 'production', WEB_DIST_DIR: await fakeDist() });
  });
  afterAll(() => t.close());

  it.each(['/', '/memories', '/resources/research/5', '/auth/login?next=%2Fchat', '/some-creator', '/no/such/page'])(
    'answers the client route %s with index.html',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      // It carries the visitor's own answers: no shared cache may keep it.
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers.vary).toBe('Cookie');
      expect(splitPage(res.body).page).toBe(INDEX);
    },
  );

  it("carries a visitor's answers to the app's first requests, the same as the API gives, just before </body>", async () => {
    const browser = new Browser(t.app);
    const res = await browser.get('/chat');
    const { answers } = splitPage(res.body);
    expect(res.body).toMatch(
      new RegExp(`</script><script type="application/json" id="${BOOT_ELEMENT_ID}">.*</script></body>`),
    );
    expect(Object.keys(answers ?? {}).sort()).toEqual([BOOT_SESSION, BOOT_SITE].sort());
    expect(answers?.[BOOT_SESSION]?.status).toBe(401);
    expect(answers?.[BOOT_SESSION]?.body).toEqual((await browser.get(BOOT_SESSION)).json());
    expect(answers?.[BOOT_SITE]).toEqual({ status: 200, body: (await browser.get(BOOT_SITE)).json() });
  });

  it("carries a signed-in user's session and account, the same as the API gives", async () => {
    const { browser, email } = await signedInUser(t);
    const { answers } = splitPage((await browser.get('/memories')).body);
    expect(answers?.[BOOT_SESSION]).toEqual({ status: 200, body: (await browser.get(BOOT_SESSION)).json() });
    expect(answers?.[BOOT_ACCOUNT]).toEqual({ status: 200, body: (await browser.get(BOOT_ACCOUNT)).json() });
    expect(answers?.[BOOT_ACCOUNT]?.body).toMatchObject({ email, email_verified: true });
  });

  it('reads a cookie named twice as the API does: the first counts', async () => {
    const { browser } = await signedInUser(t);
    const cookie = `sessionid=${browser.cookies.get('sessionid')}; sessionid=someone-elses; csrftoken=${browser.cookies.get('csrftoken')}`;
    const page = await t.app.inject({ method: 'GET', url: '/chat', headers: { cookie } });
    const api = await t.app.inject({ method: 'GET', url: BOOT_SESSION, headers: { cookie } });
    expect(api.statusCode).toBe(200);
    expect(splitPage(page.body).answers?.[BOOT_SESSION]).toEqual({ status: 200, body: api.json() });
  });

  it("carries an unverified new user's account (the reminder shows at once)", async () => {
    const { browser } = await signUp(t);
    const { answers } = splitPage((await browser.get('/')).body);
    expect(answers?.[BOOT_SESSION]?.status).toBe(200);
    expect(answers?.[BOOT_ACCOUNT]?.body).toMatchObject({ email_verified: false });
  });

  it('gives a first visit one CSRF cookie, the one the answers were made with', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    const csrf = (res.cookies as Array<{ name: string; value: string }>).filter((c) => c.name === 'csrftoken');
    expect(csrf).toHaveLength(1);
    expect(csrf[0]?.value).toMatch(/^[A-Za-z0-9]{32}$/);
    // A visitor who has one keeps it.
    const again = await t.app.inject({ method: 'GET', url: '/', headers: { cookie: `csrftoken=${csrf[0]?.value}` } });
    const kept = (again.cookies as Array<{ name: string; value: string }>).filter((c) => c.name === 'csrftoken');
    expect(kept.every((c) => c.value === csrf[0]?.value)).toBe(true);
  });

  it('answers HEAD with the page alone', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/chat' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe('');
  });

  it('serves hashed assets with a year-long immutable cache', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toBe('console.log("app")');
  });

  it.each([
    ['br', 'gzip, deflate, br', brotliDecompressSync],
    ['gzip', 'gzip, deflate', gunzipSync],
  ])("sends the build's %s copy of an asset to a browser that accepts it", async (encoding, accept, decode) => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/assets/app-abc123.js',
      headers: { 'accept-encoding': accept },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe(encoding);
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers.vary).toContain('accept-encoding');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(decode(res.rawPayload).toString()).toBe('console.log("app")');
  });

  it('sends an asset uncompressed to a client that accepts no encoding', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/assets/app-abc123.js',
      headers: { 'accept-encoding': 'identity' },
    });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body).toBe('console.log("app")');
  });

  it('serves other static files with a short cache', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
  });

  it.each([
    ['GET', '/api/nothing-here/'],
    ['GET', '/api'],
    ['POST', '/api/nothing-here/'],
    ['GET', '/assets/missing-123.js'],
    ['POST', '/memories'],
  ])('answers %s %s with a JSON 404, never the page', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET' | 'POST', url });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: expect.stringContaining('No route for'), code: 'not_found' });
  });

  it('sends the security headers with every response', async () => {
    for (const url of ['/', '/api/site/', '/assets/app-abc123.js']) {
      const res = await t.app.inject({ method: 'GET', url });
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
  });
});

it('carries answers that cannot end their script element, whatever text they hold', async () => {
  const bio = 'I write </script><script>alert(1)</script> & <!-- notes -->';
  const t = await createTestApp({ NODE_ENV: 'production', WEB_DIST_DIR: await fakeDist(), CREATOR_BIO: bio });
  try {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.body).not.toContain('<script>alert');
    expect(res.body).not.toContain('<!--');
    expect(res.body.match(/<\/script>/g)).toHaveLength(2);
    const { answers, page } = splitPage(res.body);
    expect(page).toBe(INDEX);
    expect(answers?.[BOOT_SITE]?.body).toMatchObject({ creator: { bio } });
  } finally {
    await t.close();
  }
});

describe('outside production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ NODE_ENV: 'development' });
  });
  afterAll(() => t.close());

  it('leaves pages to the Vite dev server and answers unknown paths with JSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/memories' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });
});

it('refuses to start in production when the web app is not built', async () => {
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    SECRET_KEY: TEST_SECRET,
    WEB_DIST_DIR: '/nonexistent/dist',
  });
  const t = await createTestApp();
  try {
    await expect(buildApp(config, { db: t.database.db })).rejects.toThrow(
      'The web app is not built (/nonexistent/dist/index.html is missing). Run "npm run build" first.',
    );
  } finally {
    await t.close();
  }
});
