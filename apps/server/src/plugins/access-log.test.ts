// One access line per request, as an operator's fail2ban or CrowdSec reads it: the client's
// address as TRUST_PROXY resolves it, the path without its query, the status, and a level name.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureLogs } from '../modules/chat/chat.test-client.ts';
import { createTestApp, type TestApp } from '../test/test-app.ts';

let t: TestApp;
let raw: string[] = [];
let logs: ReturnType<typeof captureLogs>;
beforeAll(async () => {
  t = await createTestApp({ TRUST_PROXY: '1', LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
  logs = captureLogs(t.app, (line) => raw.push(line));
});
afterAll(() => t?.close());

it('names the client behind the trusted proxy, never what the client wrote left of it', async () => {
  raw = [];
  const res = await t.app.inject({
    url: '/api/memories/?search=private',
    remoteAddress: '10.0.0.2',
    headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' },
  });
  expect(res.statusCode).toBe(401);
  const line = logs.findLast((l) => l.url === '/api/memories/');
  expect(line).toMatchObject({
    ip: '203.0.113.7',
    method: 'GET',
    status: 401,
    msg: expect.stringMatching(/^203\.0\.113\.7 GET \/api\/memories\/ 401 \d+ms$/),
  });
  expect(raw.join('')).toContain('"level":"info"');
  expect(raw.join('')).not.toContain('private');
  expect(raw.join('')).not.toContain('198.51.100.9');
});
