// GET /metrics through the real app: off by default, behind a bearer token when on, and what it
// counts of real requests, a real chat turn over a WebSocket with the fake model, and a daily message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { signedInUser } from '../../test/factories.ts';
import { createTestApp, type TestApp } from '../../test/test-app.ts';
import { type ChatApp, connect, startChatApp, type } from '../chat/chat.test-client.ts';
import { until } from '../daily/daily.test-helpers.ts';
import { labelSets, sample } from './metrics.test-helpers.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('metrics off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('/metrics is an unknown path, with or without a token', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
  });
});

describe('metrics on', () => {
  let chatApp: ChatApp;
  let t: TestApp;
  let fake: FakeOpenAI;
  beforeAll(async () => {
    chatApp = await startChatApp({ METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN });
    ({ t, fake } = chatApp);
  });
  afterAll(() => chatApp.close());

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    return res.body;
  };

  it('refuses requests without the token, or with a wrong one, with 401 and a Bearer challenge', async () => {
    for (const authorization of [
      undefined,
      '',
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`,
      TOKEN,
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
      expect(res.json()).toMatchObject({ code: 'unauthorized' });
      expect(res.body).not.toContain('daybook_');
    }
  });

  it('answers the token with the text format: HTTP, chat, model, job, daily and process metrics', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `bearer  ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8/);
    expect(res.headers['cache-control']).toBe('no-store');
    for (const name of [
      'daybook_http_request_duration_seconds',
      'daybook_chat_open_sockets',
      'daybook_chat_turns_total',
      'daybook_chat_turn_duration_seconds',
      'daybook_model_calls_total',
      'daybook_model_tokens_total',
      'daybook_model_errors_total',
      'daybook_jobs_waiting',
      'daybook_jobs_active',
      'daybook_jobs_failed_total',
      'daybook_daily_messages_delivered_total',
      'daybook_process_resident_memory_bytes',
      'daybook_nodejs_eventloop_lag_seconds',
    ])
      expect(res.body).toContain(`# TYPE ${name} `);
    // Every queue, read from the database, empty or not.
    expect(sample(res.body, 'daybook_jobs_waiting', { queue: 'research' })).toBeGreaterThanOrEqual(0);
    expect(sample(res.body, 'daybook_jobs_active', { queue: 'daily-message' })).toBeGreaterThanOrEqual(0);
    expect(labelSets(res.body, 'daybook_jobs_waiting')).toContain('queue="daily-message__failed"');
  });

  it('labels requests with the route pattern, never the URL: no ids, no query, no unknown paths', async () => {
    const { browser } = await signedInUser(t);
    expect((await browser.get('/api/memories/987654321/')).statusCode).toBe(404);
    expect((await browser.get('/api/memories/?search=my-secret-term')).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/no/such/page-24680' })).statusCode).toBe(404);
    const out = await scrape();
    const routes = labelSets(out, 'daybook_http_request_duration_seconds_count');
    expect(routes).toContain('method="GET",route="/api/memories/:id/",status="404"');
    expect(routes).toContain('method="GET",route="/api/memories/",status="200"');
    expect(routes).toContain('method="GET",route="unmatched",status="404"');
    for (const leak of ['987654321', 'my-secret-term', 'page-24680']) expect(out).not.toContain(leak);
  });

  it('a chat turn over a WebSocket: open sockets, the turn, the model calls and the tokens it reports', async () => {
    const before = await scrape();
    const count = (text: string, name: string, labels: Record<string, string> = {}) => sample(text, name, labels) ?? 0;
    const { browser } = await signedInUser(t);
    const client = await connect(chatApp.wsBase, browser);
    await client.next(type('history'));
    expect(sample(await scrape(), 'daybook_chat_open_sockets')).toBe(1);
    const learned = fake.requests.length;
    client.say('What is on today?');
    await client.next(type('markdown'), 10_000);
    // Learning from the message (a tool call, which reports usage) follows the answer.
    await until('learning to call the model', () => fake.requests.slice(learned).some((r) => !r.stream));
    // A call is counted when it starts and its tokens when its answer arrives: wait for both.
    const after = await until('the tool call and its tokens to be counted', async () => {
      const out = await scrape();
      const grew = (name: string, labels: Record<string, string>) =>
        count(out, name, labels) > count(before, name, labels);
      return grew('daybook_model_calls_total', { operation: 'tool' }) &&
        grew('daybook_model_tokens_total', { operation: 'tool', type: 'completion' })
        ? out
        : null;
    });
    const delta = (name: string, labels: Record<string, string>) =>
      count(after, name, labels) - count(before, name, labels);
    expect(delta('daybook_chat_turns_total', { outcome: 'answered' })).toBe(1);
    expect(delta('daybook_chat_turn_duration_seconds_count', { outcome: 'answered' })).toBe(1);
    expect(delta('daybook_model_calls_total', { operation: 'chat' })).toBe(1);
    expect(delta('daybook_model_calls_total', { operation: 'tool' })).toBe(1);
    // The fake model reports 1 prompt and 1 completion token per tool call (its streams report none).
    expect(delta('daybook_model_tokens_total', { operation: 'tool', type: 'prompt' })).toBe(1);
    expect(delta('daybook_model_tokens_total', { operation: 'tool', type: 'completion' })).toBe(1);
    // Counting asked the endpoint for the stream's usage.
    const streamed = fake.requests.slice(learned).find((r) => r.stream) as unknown as Record<string, unknown>;
    expect(streamed.stream_options).toEqual({ include_usage: true });
    client.ws.close();
    await client.closed;
    await until('the socket to be gone', async () => sample(await scrape(), 'daybook_chat_open_sockets') === 0);
    // An accepted socket is no HTTP request to time (its reply is hijacked): its lifetime never skews latencies.
    expect(labelSets(await scrape(), 'daybook_http_request_duration_seconds_count').join()).not.toContain('/ws/');
  });

  it("a model failure: the turn's outcome and the error's kind", async () => {
    const before = await scrape();
    const count = (text: string, labels: Record<string, string>, name = 'daybook_model_errors_total') =>
      sample(text, name, labels) ?? 0;
    fake.onChat(() => ({ status: 503 }));
    try {
      const { browser } = await signedInUser(t);
      const client = await connect(chatApp.wsBase, browser);
      await client.next(type('history'));
      client.say('Hello?');
      await client.next(type('system_message'), 10_000);
      client.ws.close();
    } finally {
      fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3 }));
    }
    const after = await scrape();
    expect(
      count(after, { operation: 'chat', kind: 'server' }) - count(before, { operation: 'chat', kind: 'server' }),
    ).toBe(1);
    const turns = (text: string) => count(text, { outcome: 'model_error' }, 'daybook_chat_turns_total');
    expect(turns(after) - turns(before)).toBe(1);
  });

  it('a daily message sent now: delivered once, counted once', async () => {
    const before = sample(await scrape(), 'daybook_daily_messages_delivered_total') ?? 0;
    const { browser } = await signedInUser(t);
    const res = await browser.post('/api/daily-messages/send-now/');
    expect(res.statusCode).toBe(202);
    await until(
      'the daily message to be counted',
      async () => (sample(await scrape(), 'daybook_daily_messages_delivered_total') ?? 0) > before,
    );
    expect(sample(await scrape(), 'daybook_daily_messages_delivered_total')).toBe(before + 1);
  });
});
