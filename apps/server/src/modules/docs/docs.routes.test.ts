import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { documentPath, registeredRoutes } from '../../../../../tests/helpers/route-tree.ts';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { DOCS_STYLESHEET } from './docs.routes.ts';
import { operationId, operationsFromRoutes } from './openapi.ts';

type Json = Record<string, unknown>;

let t: TestApp;
let doc: Json & { paths: Record<string, Record<string, Json>> };
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
});
afterAll(() => t.close());

describe('the document and the app', () => {
  it('reads the route tree right (a check of the reader below)', () => {
    const routes = registeredRoutes(t.app);
    expect(routes).toContain('PUT /api/memories/{id}');
    expect(routes).toContain('GET /api/memories/categories');
    expect(routes).toContain('GET /healthz');
    expect(routes).toContain('POST /_allauth/browser/v1/auth/login');
  });

  it('documents every route under /api/, and no route the app does not have', () => {
    const routes = [...registeredRoutes(t.app)].filter((r) => r.split(' ')[1]?.startsWith('/api/'));
    const assets = new Set([`GET ${documentPath(DOCS_STYLESHEET)}`]);
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([p, item]) =>
        Object.keys(item).map((m) => `${m.toUpperCase()} ${documentPath(p)}`),
      ),
    );
    const undocumented = routes.filter((r) => !documented.has(r) && !assets.has(r));
    expect(undocumented, 'give these routes config.docs').toEqual([]);
    const missing = [...documented].filter((r) => !routes.includes(r));
    expect(missing, 'documented, but the app has no such route').toEqual([]);
    // And through the router itself, by the document's own paths.
    for (const op of operationsFromRoutes(t.app.declaredRoutes))
      expect(
        // The router keeps routes without their trailing slash (ignoreTrailingSlash), and so does hasRoute.
        t.app.hasRoute({
          method: op.method.toUpperCase() as 'GET',
          url: op.path.replace(/\{(\w+)\}/g, ':$1').replace(/(.)\/$/, '$1'),
        }),
        op.path,
      ).toBe(true);
  });
});

describe('responses match the document', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  let added = false;
  const validators = new Map<string, ValidateFunction>();

  /** The document's schema for one operation's answer, or a failure naming what is missing. */
  function validatorFor(method: string, pathKey: string, status: number): ValidateFunction {
    if (!added) {
      ajv.addSchema({ ...doc, $id: 'openapi.json' });
      added = true;
    }
    const key = `${method} ${pathKey} ${status}`;
    const op = doc.paths[pathKey]?.[method] as { responses: Record<string, Json> } | undefined;
    const content = op?.responses[String(status)]?.content as Record<string, Json> | undefined;
    if (!content?.['application/json']) throw new Error(`${key} is not documented with a JSON body`);
    if (!validators.has(key)) {
      const pointer = ['paths', pathKey, method, 'responses', String(status), 'content', 'application/json', 'schema']
        .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      validators.set(key, ajv.compile({ $ref: `openapi.json#/${pointer}` }));
    }
    return validators.get(key) as ValidateFunction;
  }

  async function expectDocumented(browser: Browser, method: string, url: string, pathKey: string, payload?: unknown) {
    const res = await browser.request(method.toUpperCase() as 'GET', url, payload);
    const validate = validatorFor(method, pathKey, res.statusCode);
    const body = res.json();
    expect(validate(body), `${method} ${url} → ${res.statusCode}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    return { status: res.statusCode, body };
  }

  it('for a signed-in user: settings, memories, history, chat, calendar, site', async () => {
    const { browser } = await signedInUser(t);
    await expectDocumented(browser, 'get', '/api/users/me/', '/api/users/me/');
    await expectDocumented(browser, 'patch', '/api/users/me/', '/api/users/me/', { time_zone: 'europe/berlin' });
    const created = await expectDocumented(browser, 'post', '/api/memories/', '/api/memories/', {
      key: 'favourite_cuisine',
      data: 'Sichuan',
      url: '',
    });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    const list = await expectDocumented(browser, 'get', '/api/memories/?limit=1', '/api/memories/');
    expect((list.body as { count: number }).count).toBe(1);
    await expectDocumented(browser, 'get', `/api/memories/${id}/`, '/api/memories/{id}/');
    await expectDocumented(browser, 'patch', `/api/memories/${id}/`, '/api/memories/{id}/', { data: 'Sichuan, spicy' });
    await expectDocumented(browser, 'get', '/api/memories/categories/', '/api/memories/categories/');
    await expectDocumented(browser, 'get', '/api/memories/export/', '/api/memories/export/');
    await expectDocumented(browser, 'get', '/api/resources/', '/api/resources/');
    await expectDocumented(browser, 'get', '/api/chat/messages/', '/api/chat/messages/');
    await expectDocumented(browser, 'get', '/api/calendar/connections/', '/api/calendar/connections/');
    await expectDocumented(browser, 'get', '/api/calendar/events/?date=2026-05-04', '/api/calendar/events/');
    await expectDocumented(browser, 'get', '/api/site/', '/api/site/');
    await expectDocumented(browser, 'get', '/api/users/me/export/', '/api/users/me/export/');
  });

  it('for errors: invalid fields, another user’s id, no session, no CSRF token', async () => {
    const { browser } = await signedInUser(t);
    const invalid = await expectDocumented(browser, 'post', '/api/memories/', '/api/memories/', { key: '' });
    expect(invalid.status).toBe(400);
    const other = await signedInUser(t);
    const theirs = await other.browser.post('/api/memories/', { key: 'k', data: 'd' });
    const hidden = await expectDocumented(browser, 'get', `/api/memories/${theirs.json().id}/`, '/api/memories/{id}/');
    expect(hidden.status).toBe(404);
    const anonymous = await expectDocumented(new Browser(t.app), 'get', '/api/users/me/', '/api/users/me/');
    expect(anonymous.status).toBe(401);
    const noToken = await t.app.inject({ method: 'POST', url: '/api/memories/', payload: {} });
    expect(noToken.statusCode).toBe(403);
    expect(validatorFor('post', '/api/memories/', 403)(noToken.json())).toBe(true);
  });

  it('catches a response that differs from its schema (a check of the check)', () => {
    const validate = validatorFor('get', '/api/users/me/', 200);
    expect(validate({ id: 1 })).toBe(false);
    expect(validatorFor('get', '/api/memories/{id}/', 404)({ error: 'x', code: 'not_found', extra: true })).toBe(false);
  });
});

describe('GET /api/openapi.json', () => {
  it('is public JSON, cacheable, and holds no configuration', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    // Nothing of this installation's configuration: its address, keys, mail server.
    expect(res.body).not.toContain('daybook.test');
    expect(res.body).not.toContain(t.smtp.url);
    expect(res.body).not.toContain('test-secret-key');
  });
});

describe("allauth's document", () => {
  it('is served beside ours, and describes the browser client the account API follows', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/allauth-openapi.yaml' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8');
    const allauth = parse(res.body) as { info: { description: unknown }; paths: Record<string, unknown> };
    expect(allauth.paths).toHaveProperty(['/_allauth/browser/v1/auth/login']);
    // Not upstream's copy: its description is in the document, and what Daybook does not serve is left out.
    expect(allauth.info.description).toEqual(expect.stringContaining('Daybook'));
    expect(allauth.paths).not.toHaveProperty(['/_allauth/{client}/v1/auth/login']);
    expect(allauth.paths).not.toHaveProperty(['/_allauth/browser/v1/auth/2fa/authenticate']);
  });
});

describe('GET /api/docs, with the web app served as in production', () => {
  let prod: TestApp;
  const INDEX = '<!doctype html><html><body><div id="root"></div></body></html>';
  beforeAll(async () => {
    const dist = await mkdtemp(path.join(tmpdir(), 'daybook-dist-'));
    await writeFile(path.join(dist, 'index.html'), INDEX);
    prod = await createTestApp({
      NODE_ENV: 'production',
      WEB_DIST_DIR: dist,
      PUBLIC_URL: 'https://docs-check.invalid',
    });
  });
  afterAll(() => prod.close());

  it('is the reference page, not the web app, with the app’s own Content-Security-Policy', async () => {
    const csp = (await prod.app.inject({ method: 'GET', url: '/' })).headers['content-security-policy'];
    for (const url of ['/api/docs', '/api/docs/']) {
      const res = await prod.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(csp);
      expect(res.body).not.toBe(INDEX);
      expect(res.body).toContain('<h1>Daybook API</h1>');
    }
  });

  it('shows every operation, grouped by tag, each reachable from the contents', async () => {
    const html = (await prod.app.inject({ method: 'GET', url: '/api/docs' })).body;
    for (const op of operationsFromRoutes(t.app.declaredRoutes)) {
      const id = operationId(op);
      expect(html, op.path).toContain(`<article class="op" id="${id}"`);
      expect(html).toContain(`<span class="method method-${op.method}">${op.method.toUpperCase()}</span>`);
      expect(html).toContain(`<code class="op-path">${op.path}</code>`);
      expect(html).toContain(`href="#${id}"`);
    }
    for (const tag of ['Memories', 'History', 'Calendar'])
      expect(html).toContain(`<h2 id="tag-${tag.toLowerCase()}-title">`);
    expect(html).toContain('/ws/chat/');
    expect(html).toContain('href="/api/docs/allauth-openapi.yaml"');
    expect(html).toContain('<code>/_allauth/browser/v1</code>');
  });

  it('runs under the CSP: no script, no inline style, nothing loaded from elsewhere', async () => {
    const html = (await prod.app.inject({ method: 'GET', url: '/api/docs' })).body;
    expect(html).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    const loaded = [...html.matchAll(/<(?:link|img|iframe)[^>]+(?:href|src)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(loaded.length).toBeGreaterThan(0);
    for (const url of loaded) expect(url.startsWith('/'), url).toBe(true);
    const css = loaded.find((u) => u.startsWith(DOCS_STYLESHEET)) ?? '';
    const sheet = await prod.app.inject({ method: 'GET', url: css });
    expect(sheet.statusCode).toBe(200);
    expect(sheet.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(sheet.body).toContain('.op-path');
    expect(sheet.body).toContain('--color-primary');
  });

  it('says nothing of this installation: no address, no keys', async () => {
    const html = (await prod.app.inject({ method: 'GET', url: '/api/docs' })).body;
    expect(html).not.toContain('docs-check.invalid');
    expect(html).not.toContain('test-secret-key');
  });
});
