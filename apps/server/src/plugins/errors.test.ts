import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestDatabase, type TestDatabase } from '../../../../tests/helpers/test-db.ts';
import { buildApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { AppError } from '../lib/errors.ts';
import { Browser, TEST_SECRET } from '../test/test-app.ts';
import { DATABASE_DOWN, isDatabaseDown, toApiError } from './errors.ts';

// Routes that fail on purpose, registered beside the real app, to see what clients receive.
describe('the error handler', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await buildApp(
      loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', SECRET_KEY: TEST_SECRET, PUBLIC_URL: 'http://daybook.test' }),
      { db: database.db },
    );
    // A handler's own parse, as routes without a body schema still do (the signup form).
    // Test routes, no part of the API's reference (docs: false).
    const PUBLIC = { config: { auth: 'public', docs: false } } as const;
    app.post('/api/test/echo/', PUBLIC, async (request) =>
      z.object({ name: z.string().min(1, 'Name is required') }).parse(request.body),
    );
    app.get('/api/test/conflict/', PUBLIC, async () => {
      throw new AppError('conflict', 'That key is already used', { key: ['That key is already used'] });
    });
    app.get('/api/test/crash/', PUBLIC, async () => {
      throw new Error('database password is hunter2');
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  it('maps a domain error code to its status, with field errors', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/test/conflict/' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      error: 'That key is already used',
      code: 'conflict',
      field_errors: { key: ['That key is already used'] },
    });
  });

  it('turns validation failures into a 400 naming each field', async () => {
    const res = await new Browser(app).post('/api/test/echo/', { name: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Some fields are invalid.',
      code: 'validation_error',
      field_errors: { name: ['Name is required'] },
    });
  });

  it('answers malformed JSON with a 400, not a 500', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/test/echo/',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'The request body is not valid JSON.', code: 'bad_request' });
  });

  it('answers an unsupported body type with 415', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/test/echo/',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('answers an oversized body with 413', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/test/echo/',
      payload: { name: 'x'.repeat(2 * 1024 * 1024) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('hides the details of unexpected failures', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/test/crash/' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Something went wrong on our side. Please try again.', code: 'internal' });
    expect(res.body).not.toContain('hunter2');
  });
});

describe('isDatabaseDown', () => {
  it('tells a lost or refused database from a failed query, through wrapped causes', () => {
    const wrapped = (cause: unknown) =>
      Object.assign(new Error('Invalid `prisma.memory.findMany()` invocation'), { cause });
    expect(isDatabaseDown(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
    expect(
      isDatabaseDown(
        wrapped(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
      ),
    ).toBe(true);
    expect(isDatabaseDown(Object.assign(new Error("Can't reach database server"), { code: 'P1001' }))).toBe(true);
    expect(isDatabaseDown(wrapped(new Error('Connection terminated unexpectedly')))).toBe(true);
    expect(isDatabaseDown(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
    expect(isDatabaseDown(wrapped(Object.assign(new Error('syntax error'), { code: '42601' })))).toBe(false);
    expect(toApiError(wrapped(new Error('Connection terminated unexpectedly')))).toEqual({
      status: 503,
      body: { error: DATABASE_DOWN, code: 'unavailable' },
    });
  });
});
