import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { REPO_ROOT } from '../../config.ts';
import { ERROR_STATUS } from '../../lib/errors.ts';
import { createTestApp, type TestApp } from '../../test/test-app.ts';
import { buildPageView } from './docs.view.ts';
import {
  type ApiOperation,
  buildOpenApiDocument,
  COMPONENTS,
  FIELD_NOTES,
  operationId,
  operationsFromRoutes,
} from './openapi.ts';

type Json = Record<string, unknown>;
type Document = Json & {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
};
// The document of the app's routes as they are declared.
let t: TestApp;
let operations: ApiOperation[];
let doc: Document;
beforeAll(async () => {
  t = await createTestApp();
  operations = operationsFromRoutes(t.app.declaredRoutes);
  doc = buildOpenApiDocument(operations) as Document;
});
afterAll(() => t?.close());
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every value at `$ref` in the document, with where it is. */
function refs(node: unknown, at = '#', out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) for (const [i, item] of node.entries()) refs(item, `${at}/${i}`, out);
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref') out.push([at, String(value)]);
      else refs(value, `${at}/${key}`, out);
    }
  return out;
}

function resolvePointer(pointer: string): unknown {
  let node: unknown = doc;
  for (const raw of pointer.replace(/^#\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

describe('the OpenAPI document', () => {
  it('has what OpenAPI 3.1 requires of a document, its operations and responses', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const info = doc.info as Json;
    expect(typeof info.title).toBe('string');
    expect(typeof info.version).toBe('string');
    const declaredTags = new Set((doc.tags as Json[]).map((t) => t.name));
    const ids = new Set<string>();
    for (const [pathKey, item] of Object.entries(doc.paths)) {
      expect(pathKey.startsWith('/')).toBe(true);
      const templated = [...pathKey.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(item)) {
        const where = `${method} ${pathKey}`;
        expect(METHODS, where).toContain(method);
        expect(typeof op.operationId, where).toBe('string');
        expect(ids.has(op.operationId as string), `${where}: duplicate operationId`).toBe(false);
        ids.add(op.operationId as string);
        for (const tag of op.tags as string[]) expect(declaredTags.has(tag), `${where}: tag ${tag}`).toBe(true);
        const params = (op.parameters ?? []) as Json[];
        const pathParams = params.filter((p) => p.in === 'path');
        // Each {name} in the path is a required path parameter, and there are no others.
        expect(pathParams.map((p) => p.name).sort(), where).toEqual([...templated].sort());
        for (const p of params) {
          expect(['query', 'header', 'path', 'cookie'], where).toContain(p.in);
          if (p.in === 'path') expect(p.required, where).toBe(true);
          expect(p.schema, `${where} ${p.name}`).toBeTypeOf('object');
        }
        const responses = op.responses as Record<string, Json>;
        expect(Object.keys(responses).length, where).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(responses)) {
          expect(status, where).toMatch(/^[1-5](\d\d|XX)$/);
          expect(typeof response.description, `${where} ${status}`).toBe('string');
        }
        for (const requirement of op.security as Json[])
          for (const scheme of Object.keys(requirement)) expect(doc.components.securitySchemes).toHaveProperty(scheme);
      }
    }
  });

  it('resolves every $ref', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(50);
    const broken = all.filter(([, ref]) => !ref.startsWith('#/') || resolvePointer(ref) === undefined);
    expect(broken).toEqual([]);
  });

  it('holds JSON Schema 2020-12 that a strict validator compiles, without $schema or $id noise', () => {
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      expect(schema, name).not.toHaveProperty('$schema');
      expect(schema, name).not.toHaveProperty('$id');
      // OpenAPI 3.0's `nullable` means nothing in 3.1.
      expect(JSON.stringify(schema), name).not.toContain('"nullable"');
    }
    const source = JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'components#/$defs/');
    const schemas = JSON.parse(source) as Record<string, Json>;
    const strict = new Ajv2020({ strict: true, validateFormats: false });
    strict.addSchema({ $id: 'components', $defs: schemas });
    for (const name of Object.keys(schemas))
      expect(() => strict.getSchema(`components#/$defs/${name}`), name).not.toThrow();
  });

  it('names each shared schema once, as a component, and refers to it', () => {
    const memory = doc.components.schemas.MemoryPage as { properties: { results: Json } };
    expect(memory.properties.results).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Memory' } });
    // Only what the operations and the socket reach is in the document.
    expect(doc.components.schemas).not.toHaveProperty('ResearchReport');
    expect(Object.keys(doc.components.schemas).every((name) => name in COMPONENTS)).toBe(true);
  });

  it('reads requests as input: defaults show, transforms are their input, refinements cannot fail conversion', () => {
    const input = doc.components.schemas.MemoryInput as { properties: Record<string, Json>; required: string[] };
    // memory_type has a default, so a client may leave it out.
    expect(input.required).toEqual(['key', 'data']);
    expect(input.properties.memory_type).toMatchObject({ default: 'text' });
    // url is refined and transformed ('' → null): as input it is a string or null of at most 2000.
    expect(input.properties.url).toMatchObject({ anyOf: [{ type: 'string', maxLength: 2000 }, { type: 'null' }] });
    const memories = doc.paths['/api/memories/']?.get as { parameters: Json[] };
    expect(memories.parameters.find((p) => p.name === 'show_deleted')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'string', enum: ['0', '1', 'true', 'false'] },
    });
    // A body with an output transform is refused as output, so the export is described by its input.
    expect(() => z.toJSONSchema(COMPONENTS.MemoryExport)).toThrow(/Transforms/);
    expect(doc.paths['/api/memories/export/']?.get).toMatchObject({
      responses: {
        200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/MemoryExport' } } } },
      },
    });
  });

  it('describes every error in the one documented shape, with the codes each status carries', () => {
    for (const [pathKey, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          if (Number(status) < 400) continue;
          expect(response.content, `${method} ${pathKey} ${status}`).toEqual({
            'application/json': { schema: { $ref: '#/components/schemas/ApiError' } },
          });
          const codes = response['x-codes'] as string[];
          expect(codes.length, `${method} ${pathKey} ${status}`).toBeGreaterThan(0);
          for (const code of codes) expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(Number(status));
        }
    const signedIn = doc.paths['/api/memories/{id}/']?.delete as { responses: Record<string, unknown> };
    expect(Object.keys(signedIn.responses)).toEqual(['204', '400', '401', '403', '404']);
    expect(doc['x-error-codes']).toEqual(Object.entries(ERROR_STATUS).map(([code, status]) => ({ code, status })));
  });

  it('keeps the notes it adds to fields on fields the schemas have', () => {
    for (const [component, notes] of Object.entries(FIELD_NOTES)) {
      const schema = COMPONENTS[component as keyof typeof COMPONENTS] as z.ZodType | undefined;
      expect(schema, component).toBeDefined();
      const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      for (const field of Object.keys(notes)) expect(shape, `${component}.${field}`).toHaveProperty(field);
    }
  });

  it('documents the chat socket, whose messages are components', () => {
    const ws = doc['x-websocket'] as {
      paths: string[];
      clientMessage: Json;
      clientEvents: Json[];
      serverEvents: Json[];
    };
    expect(ws.paths).toContain('/ws/chat/');
    expect(ws.clientMessage).toEqual({ $ref: '#/components/schemas/ClientMessage' });
    expect(ws.serverEvents.map((e) => e.$ref)).toContain('#/components/schemas/StreamEvent');
    expect(ws.clientEvents.map((e) => e.$ref)).toEqual([
      '#/components/schemas/ClientMessage',
      '#/components/schemas/StopRequest',
      '#/components/schemas/RegenerateRequest',
    ]);
    const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
    expect(schemas.StopRequest).toBeDefined();
    expect(schemas.RegenerateRequest).toBeDefined();
  });

  it('refuses a route whose schema is not a named component', () => {
    const stray: ApiOperation = {
      method: 'get',
      path: '/api/stray/',
      tag: 'Site',
      summary: 'Stray',
      auth: 'public',
      responses: { 200: { description: 'x', schema: z.object({ a: z.string() }) } },
    };
    expect(() => buildOpenApiDocument([...operations, stray])).toThrow(
      'GET /api/stray/: its schema is not in COMPONENTS',
    );
  });

  it('refuses a route that declares no docs, or a tag the reference does not have', () => {
    expect(() => operationsFromRoutes([{ method: 'GET', url: '/api/stray/', auth: 'public' }])).toThrow(
      'GET /api/stray/: the route declares no config.docs',
    );
    const docs = { tag: 'Strays', summary: 'Stray', responses: { 200: { description: 'x' } } };
    expect(() => operationsFromRoutes([{ method: 'GET', url: '/api/stray/', auth: 'public', docs }])).toThrow(
      'GET /api/stray/: no tag Strays in TAGS',
    );
    // An asset beside the API is no operation.
    expect(operationsFromRoutes([{ method: 'GET', url: '/api/stray.css', auth: 'public', docs: false }])).toEqual([]);
  });

  it('makes stable operation ids from the method and path', () => {
    expect(operationId({ method: 'get', path: '/api/memories/{id}/' })).toBe('getMemoriesById');
    expect(operationId({ method: 'post', path: '/api/daily-messages/send-now/' })).toBe('postDailyMessagesSendNow');
  });
});

describe("allauth's document for the account API", () => {
  it('describes responses with the schemas the account API tests validate against', () => {
    const served = parse(readFileSync(path.join(import.meta.dirname, 'allauth-openapi.yaml'), 'utf8'));
    const fixture = parse(readFileSync(path.join(REPO_ROOT, 'tests/fixtures/allauth-openapi.yaml'), 'utf8'));
    expect(served.components).toEqual(fixture.components);
  });
});

describe('the page model', () => {
  let page: ReturnType<typeof buildPageView>;
  beforeAll(() => {
    page = buildPageView(doc);
  });

  it('shows fields as rows, nested ones under their parent, with constraints', () => {
    const create = page.tags.flatMap((t) => t.operations).find((op) => op.id === 'postMemories');
    const rows = create?.body?.schema.fields ?? [];
    expect(rows.find((r) => r.name === 'key')).toMatchObject({
      type: 'string',
      required: true,
      notesHtml: expect.stringContaining('1–200 characters'),
    });
    expect(rows.find((r) => r.name === 'memory_type')).toMatchObject({
      required: false,
      type: expect.stringContaining('"interest"'),
      notesHtml: expect.stringContaining('default <code>&#34;text&#34;</code>'),
    });
    const page2 = page.tags.flatMap((t) => t.operations).find((op) => op.id === 'getMemories');
    const fields = page2?.responses[0]?.schema?.fields.map((f) => [f.name, f.depth]);
    expect(fields).toContainEqual(['results[].memory_type', 1]);
  });

  it('gives short bodies an example that parses', () => {
    const me = page.tags.flatMap((t) => t.operations).find((op) => op.id === 'getUsersMe');
    const example = JSON.parse(me?.responses[0]?.schema?.example ?? 'null');
    expect(example).toMatchObject({
      daily_message_time: '07:00',
      time_zone: 'Europe/Berlin',
      email: 'ada@example.com',
    });
  });

  it('escapes what it shows', () => {
    const evil = structuredClone(doc) as typeof doc;
    (evil.paths['/api/site/']?.get as Json).summary = '<img src=x onerror=alert(1)>';
    (evil.paths['/api/site/']?.get as Json).description = '<script>x</script> `<b>`';
    const op = buildPageView(evil).tags[0]?.operations[0];
    expect(op?.descriptionHtml).toBe('&#60;script&#62;x&#60;/script&#62; <code>&#60;b&#62;</code>');
  });
});
