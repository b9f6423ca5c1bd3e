// The operator's model check against the replay profiles (recorded framing and refusals): what it
// reports, the advice it gives, through POST /api/admin/model-check/ and `npm run check-model`.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ZModelCheck } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReplayServer, startReplayServer } from '../../../../../tests/helpers/model-replay/server.ts';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { checkModel } from './model.probe.ts';

let replay: ReplayServer;
beforeAll(async () => {
  replay = await startReplayServer();
});
afterAll(() => replay?.close());

const check = (profile: string, model = 'replayed-model') =>
  checkModel({ baseUrl: replay.url(profile), model, timeoutMs: 5000, maxRetries: 0 }, 'embedder');
const byName = (c: Awaited<ReturnType<typeof check>>) => Object.fromEntries(c.checks.map((i) => [i.name, i]));

describe('checkModel', () => {
  it('OpenAI: everything works, through a forced tool call', async () => {
    const c = await check('openai');
    expect(c.ok).toBe(true);
    expect(c.checks.map((i) => [i.name, i.status])).toEqual([
      ['Answers', 'ok'],
      ['Token usage', 'ok'],
      ['Reasoning', 'ok'],
      ['Tools in the chat', 'ok'],
      ['Forced tool call', 'ok'],
      ['JSON schema output', 'ok'],
      ['JSON from instructions', 'ok'],
      ['Embeddings', 'ok'],
    ]);
    expect(c.uses).toEqual([
      'Chat: streamed answers with tools (research, calendars).',
      'Learning, research and settings: structured answers through a forced tool call.',
    ]);
  });

  it.each([
    ['vllm-old', 'Tools in the chat', '--enable-auto-tool-choice --tool-call-parser'],
    ['llamacpp-no-jinja', 'Tools in the chat', 'start llama-server with --jinja'],
    ['ollama-no-tools', 'Forced tool call', "choose one with the 'tools' tag"],
    ['ollama-prose', 'Forced tool call', 'Daybook asks for JSON instead'],
    ['azure-ai-inference', 'Token usage', ''],
  ])('%s: "%s" is worked around, with what to change', async (profile, name, advice) => {
    const c = await check(profile);
    expect(c.ok).toBe(true);
    const item = byName(c)[name];
    expect(item?.status).toBe('degraded');
    if (advice) expect(item?.advice).toContain(advice);
  });

  it('a server without tools: structured answers through its JSON schema response format', async () => {
    const c = await check('llamacpp-no-jinja');
    expect(c.uses[1]).toBe(
      'Learning, research and settings: structured answers through a JSON schema response format.',
    );
  });

  it('vLLM without a reasoning parser: the reasoning is no answer, and the parser is advised', async () => {
    const c = await check('vllm-no-parser');
    const items = byName(c);
    // A model name that does not look like a reasoner: the answer is streamed, and its reasoning taken back.
    expect(items.Answers?.detail).toMatch(/^Streamed "You said: Reply with the single word: re" in \d+\.\d s\.$/);
    expect(items.Reasoning).toMatchObject({
      status: 'degraded',
      advice: expect.stringContaining('--reasoning-parser'),
    });
  });

  it('an endpoint that is not there, or has no such model: the check says which, and what to set', async () => {
    const down = await checkModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 2000, maxRetries: 0 });
    expect(down.ok).toBe(false);
    expect(down.checks).toEqual([
      expect.objectContaining({ name: 'Answers', status: 'failed', advice: expect.stringContaining('LLM_BASE_URL') }),
    ]);
    const none = await checkModel({ timeoutMs: 2000, maxRetries: 0 });
    expect(none).toMatchObject({ ok: false, model: null, checks: [expect.objectContaining({ status: 'failed' })] });
  });
});

describe('POST /api/admin/model-check/', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LLM_BASE_URL: replay.url('vllm-old'), LLM_MODEL: 'm', LLM_MAX_RETRIES: '0' });
  });
  afterAll(() => t?.close());

  it('administrators get the check; others 403; signed out 401', async () => {
    const admin = await signedInUser(t);
    const other = await signedInUser(t);
    await t.app.db.query('UPDATE users SET is_admin = true WHERE id = $1', [admin.userId]);
    const res = await admin.browser.post('/api/admin/model-check/');
    expect(res.statusCode).toBe(200);
    const body = ZModelCheck.parse(res.json());
    expect(body).toMatchObject({ ok: true, model: 'm', endpoint: replay.url('vllm-old') });
    expect(body.checks.find((c) => c.name === 'Tools in the chat')?.advice).toContain('--enable-auto-tool-choice');
    expect((await other.browser.post('/api/admin/model-check/')).statusCode).toBe(403);
    expect((await new Browser(t.app).post('/api/admin/model-check/')).statusCode).toBe(401);
  });
});

describe('npm run check-model', () => {
  const ROOT = path.resolve(import.meta.dirname, '../../../../..');
  const run = (env: Record<string, string>) =>
    promisify(execFile)(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'scripts/check-model.ts')], {
      env: { PATH: process.env.PATH ?? '', ...env },
    }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );

  it('prints each check, its advice and what Daybook will use; exits 0 when the model works', async () => {
    const { code, out } = await run({ LLM_BASE_URL: replay.url('llamacpp-no-jinja'), LLM_MODEL: 'qwen3' });
    expect(code).toBe(0);
    expect(out).toContain(`Daybook model check: qwen3 at ${replay.url('llamacpp-no-jinja')}`);
    expect(out).toMatch(
      /^ {2}! Tools in the chat +The server refused them: tools param requires --jinja flag\. Instead/m,
    );
    expect(out).toMatch(/^ +→ llama\.cpp: start llama-server with --jinja/m);
    expect(out).toContain(
      '  - Learning, research and settings: structured answers through a JSON schema response format.',
    );
  });

  it('exits 1 and says what to set when the endpoint cannot be reached', async () => {
    const { code, out } = await run({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'm', LLM_TIMEOUT_MS: '2000' });
    expect(code).toBe(1);
    expect(out).toMatch(/✖ Answers +Could not connect to http:\/\/127\.0\.0\.1:9\/v1/);
    expect(out).toContain('Daybook cannot use this model as configured.');
  });
});
