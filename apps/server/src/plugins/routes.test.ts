// A route's declaration (config.auth, zod schemas) is enforced in the order the API has always
// answered: CSRF, then who is calling, then what they sent; and its answer carries only what its
// contract names.
import { ZRowParams } from '@daybook/contracts';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../lib/errors.ts';
import errorsPlugin from './errors.ts';
import routesPlugin from './routes.ts';

const ZNote = z.object({ title: z.string().min(1), body: z.string().max(10) });
const ZNoteOut = z.object({ id: z.number(), title: z.string() });

async function buildApp(): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(errorsPlugin);
  await app.register(routesPlugin);
  // Stand-ins for the session plugin (who is calling) and the CSRF plugin (a global preHandler).
  app.decorateRequest('user', null);
  app.addHook('onRequest', async (request) => {
    const who = request.headers['x-user'];
    request.user = who ? ({ id: 7, isAdmin: who === 'admin' } as NonNullable<typeof request.user>) : null;
  });
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'GET' && request.headers['x-csrftoken'] !== 'ok')
      throw new AppError('forbidden', 'CSRF Failed: CSRF token missing or incorrect.');
  });
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.put(
    '/api/notes/:id/',
    {
      config: { auth: 'user', notFound: 'Note not found.' },
      schema: { params: ZRowParams, body: ZNote, response: { 200: ZNoteOut } },
    },
    // A field the contract does not name never leaves the server.
    async (request) => ({ id: request.params.id, title: request.body.title, secret: 'kept in' }),
  );
  api.get(
    '/api/admin/notes/',
    { config: { auth: 'admin', adminOnly: 'Only administrators can manage notes.' } },
    async () => ({ ok: true }),
  );
  api.get(
    '/api/public/',
    { config: { auth: 'public' }, schema: { querystring: z.object({ n: z.coerce.number().int().default(1) }) } },
    async (request) => ({ n: request.query.n }),
  );
  return app;
}

describe('routes that declare who may call and what they take', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildApp();
  });
  afterAll(() => app.close());

  const put = (headers: Record<string, string>, id: string, payload?: Record<string, string>) =>
    app.inject({ method: 'PUT', url: `/api/notes/${id}/`, headers, ...(payload ? { payload } : {}) });

  it('checks CSRF first, then the caller, then the input', async () => {
    const bad = { title: '', body: 'x'.repeat(20) };
    expect((await put({}, 'abc', bad)).json()).toEqual({
      error: 'CSRF Failed: CSRF token missing or incorrect.',
      code: 'forbidden',
    });
    const anonymous = await put({ 'x-csrftoken': 'ok' }, 'abc', bad);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Authentication credentials were not provided.', code: 'unauthorized' });
  });

  it('answers 404 for an id that names no row, before reading the body', async () => {
    for (const id of ['abc', '0', '1.5', '99999999999']) {
      const res = await put({ 'x-csrftoken': 'ok', 'x-user': 'u' }, id, { title: '' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Note not found.', code: 'not_found' });
    }
  });

  it('answers 400 with the failing fields, naming each missing one when there is no body', async () => {
    const invalid = await put({ 'x-csrftoken': 'ok', 'x-user': 'u' }, '3', { title: '', body: 'x'.repeat(20) });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({
      code: 'validation_error',
      error: 'Some fields are invalid.',
      field_errors: { title: [expect.any(String)], body: [expect.any(String)] },
    });
    const empty = await put({ 'x-csrftoken': 'ok', 'x-user': 'u' }, '3');
    expect(Object.keys(empty.json().field_errors).sort()).toEqual(['body', 'title']);
  });

  it('answers with the contract’s fields only', async () => {
    const res = await put({ 'x-csrftoken': 'ok', 'x-user': 'u' }, '3', { title: 'Plan', body: 'ok' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: 3, title: 'Plan' });
  });

  it('keeps administrators’ routes to administrators, with the route’s own words', async () => {
    expect((await app.inject({ url: '/api/admin/notes/' })).statusCode).toBe(401);
    const user = await app.inject({ url: '/api/admin/notes/', headers: { 'x-user': 'u' } });
    expect(user.statusCode).toBe(403);
    expect(user.json()).toEqual({ error: 'Only administrators can manage notes.', code: 'forbidden' });
    expect((await app.inject({ url: '/api/admin/notes/', headers: { 'x-user': 'admin' } })).json()).toEqual({
      ok: true,
    });
  });

  it('lets anyone call a public route, with its query read through the schema', async () => {
    expect((await app.inject({ url: '/api/public/?n=4' })).json()).toEqual({ n: 4 });
    expect((await app.inject({ url: '/api/public/' })).json()).toEqual({ n: 1 });
    expect((await app.inject({ url: '/api/public/?n=x' })).json()).toMatchObject({
      code: 'validation_error',
      field_errors: { n: [expect.any(String)] },
    });
  });
});
