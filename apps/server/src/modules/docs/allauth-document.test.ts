// The two published OpenAPI documents as tools read them (swagger-parser, openapi-typescript), and the
// allauth one against the routes the account API has: nothing it lists is missing, nothing served is left out.
import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BASE, buildAllauthDocument, PUBLISHED_FILE, UPSTREAM_FILE } from '../../../../../scripts/allauth-openapi.ts';
import { registeredRoutes } from '../../../../../tests/helpers/route-tree.ts';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { DOCUMENT_URL } from './docs.routes.ts';
import { ALLAUTH_DOCUMENT_PATH } from './openapi.ts';

type Json = Record<string, unknown>;
type Operation = Json & { parameters?: Json[] };
type OpenApi = Json & { paths: Record<string, Record<string, Operation>>; components: Json };
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

const operations = (doc: OpenApi) =>
  Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.keys(item)
      .filter((m) => METHODS.has(m))
      .map((m) => `${m.toUpperCase()} ${p}`),
  );

let t: TestApp;
let allauthYaml: string;
let allauth: OpenApi;
let product: OpenApi;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: ALLAUTH_DOCUMENT_PATH });
  expect(res.statusCode).toBe(200);
  allauthYaml = res.body;
  allauth = parse(allauthYaml);
  product = (await t.app.inject({ method: 'GET', url: DOCUMENT_URL })).json();
});
afterAll(() => t.close());

describe('the published documents, as OpenAPI tools read them', () => {
  it('swagger-parser validates both (and refuses upstream’s copy, whose description.md is missing)', async () => {
    // validate() dereferences what it is given in place.
    await expect(SwaggerParser.validate(structuredClone(allauth) as never)).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(structuredClone(product) as never)).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(UPSTREAM_FILE)).rejects.toThrow(/description\.md/);
  });

  it('openapi-typescript generates types from both', async () => {
    const allauthTypes = astToString(await openapiTS(allauthYaml));
    expect(allauthTypes).toContain(`"${BASE}/auth/login": {`);
    expect(allauthTypes).toContain('ProviderAccount: {');
    const productTypes = astToString(await openapiTS(JSON.stringify(product)));
    expect(productTypes).toContain('"/api/memories/": {');
  });

  it('the allauth one is what scripts/allauth-openapi.ts makes of upstream’s', () => {
    expect(allauthYaml).toBe(readFileSync(PUBLISHED_FILE, 'utf8'));
    expect(allauthYaml, 'run npx tsx scripts/allauth-openapi.ts').toBe(buildAllauthDocument());
  });
});

describe('the allauth document and the account API', () => {
  it('reads the route tree right (a check of the reader)', () => {
    const routes = registeredRoutes(t.app);
    expect(routes).toContain(`POST ${BASE}/auth/login`);
    expect(routes).toContain(`PATCH ${BASE}/account/email`);
    expect(routes).not.toContain(`HEAD ${BASE}/config`);
  });

  it(`lists exactly the operations the app routes under ${BASE}`, () => {
    const documented = operations(allauth);
    expect(documented.every((op) => op.split(' ')[1]?.startsWith(`${BASE}/`))).toBe(true);
    const served = [...registeredRoutes(t.app)].filter((r) => r.split(' ')[1]?.startsWith(`${BASE}/`));
    expect(served.length).toBeGreaterThan(20);
    expect(
      served.filter((r) => !documented.includes(r)),
      'served, not in the document',
    ).toEqual([]);
    expect(
      documented.filter((r) => !served.includes(r)),
      'in the document, not served',
    ).toEqual([]);
    for (const op of documented) {
      const [method, url] = op.split(' ') as ['GET', string];
      expect(t.app.hasRoute({ method, url }), op).toBe(true);
    }
  });

  it('lists every upstream operation it leaves out, and Daybook routes none of them', async () => {
    const upstream = parse(readFileSync(UPSTREAM_FILE, 'utf8')) as OpenApi;
    const unsupported = Object.values(allauth['x-daybook-unsupported'] as Record<string, string[]>).flat();
    const kept = new Set(operations(allauth));
    const browser = new Browser(t.app);
    let left = 0;
    for (const op of operations(upstream)) {
      const [method = '', upstreamPath = ''] = op.split(' ');
      const url = upstreamPath.replace(/^\/_allauth\/\{client\}\/v1/, BASE);
      expect(kept.has(`${method} ${url}`) || unsupported.includes(op), op).toBe(true);
      if (kept.has(`${method} ${url}`)) {
        expect(unsupported, op).not.toContain(op);
        continue;
      }
      left++;
      expect(t.app.hasRoute({ method: method as 'GET', url }), op).toBe(false);
      // What the description says they answer. Not asked: the app client's paths (not the account
      // API's, so not its envelope) and operations upstream documents a 404 for, whose 404 body
      // test-app's check of every account API response would hold to upstream's schema.
      const responses = upstream.paths[upstreamPath]?.[method.toLowerCase()]?.responses as Json;
      if (!url.startsWith(`${BASE}/`) || '404' in responses) continue;
      const res = await browser.request(method as 'GET', url, method === 'GET' ? undefined : {});
      // The account API knows these two paths (405), though it serves none of their methods.
      const known = /\/auth\/provider\/(token|signup)$/.test(url);
      expect(res.statusCode, op).toBe(known ? 405 : 404);
    }
    expect(left).toBe(unsupported.length);
    expect(t.app.hasRoute({ method: 'GET', url: '/_allauth/app/v1/config' })).toBe(false);
  });

  it('keeps upstream’s operations and components as they are, less the app client’s parameters', () => {
    const upstream = parse(readFileSync(UPSTREAM_FILE, 'utf8')) as OpenApi;
    expect(allauth.components).toEqual(upstream.components);
    const appClient = new Set(['#/components/parameters/Client', '#/components/parameters/SessionToken']);
    let compared = 0;
    for (const [upstreamPath, item] of Object.entries(upstream.paths)) {
      const ours = allauth.paths[upstreamPath.replace(/^\/_allauth\/\{client\}\/v1/, BASE)];
      for (const [method, op] of Object.entries(item)) {
        if (!ours?.[method]) continue;
        const { 'x-daybook-note': _note, ...kept } = ours[method] as Operation;
        const { parameters = [], ...rest } = op;
        const own = parameters.filter((p) => !appClient.has(String(p.$ref)));
        expect(kept, `${method} ${upstreamPath}`).toEqual(own.length ? { ...rest, parameters: own } : rest);
        compared++;
      }
    }
    // The rest are Daybook's additions, marked as such.
    const added = Object.entries(allauth.paths).filter(
      ([p]) => !Object.keys(upstream.paths).some((u) => u.replace(/^\/_allauth\/\{client\}\/v1/, BASE) === p),
    );
    expect(added.map(([p]) => p.replace(BASE, ''))).toEqual([
      '/account/providers/disconnect',
      '/socialaccount/providers/connect',
    ]);
    for (const [p, item] of added)
      for (const op of Object.values(item)) expect(op['x-daybook-extension'], p).toBe(true);
    expect(compared).toBe(operations(allauth).length - added.length);
  });

  it('describes what the calls Daybook adds answer', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema({ ...allauth, $id: 'allauth.json' });
    const validators = new Map<string, ValidateFunction>();
    const check = (rel: string, status: number, body: unknown) => {
      const response = allauth.paths[`${BASE}${rel}`]?.post?.responses as Record<string, Json>;
      const ref = (response[String(status)]?.$ref as string | undefined)?.replace('#/', '');
      const pointer = ref
        ? `${ref}/content/application~1json/schema`
        : `paths/${`${BASE}${rel}`.replace(/\//g, '~1')}/post/responses/${status}/content/application~1json/schema`;
      if (!validators.has(pointer)) validators.set(pointer, ajv.compile({ $ref: `allauth.json#/${pointer}` }));
      const validate = validators.get(pointer) as ValidateFunction;
      expect(validate(body), `${rel} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    const { browser } = await signedInUser(t);
    for (const [rel, payload] of [
      ['/account/providers/disconnect', {}],
      ['/account/providers/disconnect', { account: 'nothing-connected' }],
      ['/socialaccount/providers/connect', {}],
      ['/socialaccount/providers/connect', { provider: 'nowhere' }],
    ] as const) {
      const res = await browser.post(`${BASE}${rel}`, payload);
      expect(res.statusCode, rel).toBe(400);
      check(rel, 400, res.json());
    }
    const anonymous = await new Browser(t.app).post(`${BASE}/socialaccount/providers/connect`, { provider: 'google' });
    expect(anonymous.statusCode).toBe(401);
    check('/socialaccount/providers/connect', 401, anonymous.json());
    // A check of the check: a body the schema does not describe.
    expect(() => check('/socialaccount/providers/connect', 400, { status: 400, errors: [{ param: 'x' }] })).toThrow();
  });
});
