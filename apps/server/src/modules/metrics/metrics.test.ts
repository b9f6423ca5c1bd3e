// The metrics module alone: its own registry per app, the counted model, turns, jobs and sockets.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelIdleError } from '../model/model.errors.ts';
import type { Llm, LlmUsage } from '../model/model.types.ts';
import { labelSets, sample } from './metrics.test-helpers.ts';
import { createMetrics, modelErrorKind } from './metrics.ts';

/** A model that answers "a", "b" and reports usage when asked, or fails with `error`. */
function fakeLlm(error?: unknown): Llm {
  return {
    model: 'm',
    async *stream(_messages, _signal, options = {}) {
      yield 'a';
      if (error) throw error;
      yield 'b';
      options.onUsage?.({ prompt: 10, completion: 2 });
    },
    async structured(request) {
      if (error) throw error;
      request.onUsage?.({ prompt: 7, completion: 3 });
      return request.schema.parse({});
    },
    refuses: () => false,
    refusals: () => [],
    async embed(texts) {
      return texts.map(() => [1, 0]);
    },
  };
}

/** A structured answer of an empty object. */
const asked = { messages: [], name: 't', description: '', parameters: {}, schema: z.object({}) };

const read = async (llm: Llm) => {
  let text = '';
  for await (const piece of llm.stream([{ role: 'user', content: 'hi' }])) text += piece;
  return text;
};

describe('createMetrics', () => {
  it('gives each app its own registry: two in one process count apart', async () => {
    const one = createMetrics();
    const two = createMetrics();
    one.dailyDelivered();
    one.dailyDelivered();
    expect(sample(await one.render(), 'daybook_daily_messages_delivered_total')).toBe(2);
    expect(sample(await two.render(), 'daybook_daily_messages_delivered_total')).toBe(0);
    // Default process metrics, with the prefix.
    expect(sample(await two.render(), 'daybook_process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
    expect(one.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('counts model calls by operation, the tokens reported, and passes answers and usage through', async () => {
    const metrics = createMetrics();
    const llm = metrics.instrumentLlm(fakeLlm());
    const seen: LlmUsage[] = [];
    let text = '';
    for await (const piece of llm.stream([], undefined, { onUsage: (u) => seen.push(u) })) text += piece;
    expect(text).toBe('ab');
    expect(await llm.structured({ ...asked, onUsage: (u) => seen.push(u) })).toEqual({});
    expect(await llm.embed?.(['x', 'y'])).toEqual([
      [1, 0],
      [1, 0],
    ]);
    expect(seen).toEqual([
      { prompt: 10, completion: 2 },
      { prompt: 7, completion: 3 },
    ]);
    const out = await metrics.render();
    for (const operation of ['chat', 'tool', 'embed'])
      expect(sample(out, 'daybook_model_calls_total', { operation })).toBe(1);
    expect(sample(out, 'daybook_model_tokens_total', { operation: 'chat', type: 'prompt' })).toBe(10);
    expect(sample(out, 'daybook_model_tokens_total', { operation: 'chat', type: 'completion' })).toBe(2);
    expect(sample(out, 'daybook_model_tokens_total', { operation: 'tool', type: 'prompt' })).toBe(7);
    expect(sample(out, 'daybook_model_call_duration_seconds_count', { operation: 'chat' })).toBe(1);
    expect(sample(out, 'daybook_model_errors_total')).toBeUndefined();
  });

  it('counts failed calls by kind and still throws the error', async () => {
    const metrics = createMetrics();
    const limited = Object.assign(new Error('slow down'), { status: 429 });
    await expect(read(metrics.instrumentLlm(fakeLlm(limited)))).rejects.toBe(limited);
    const timeout = new OpenAI.APIConnectionTimeoutError();
    await expect(metrics.instrumentLlm(fakeLlm(timeout)).structured(asked)).rejects.toBe(timeout);
    const out = await metrics.render();
    expect(sample(out, 'daybook_model_errors_total', { operation: 'chat', kind: 'rate_limited' })).toBe(1);
    expect(sample(out, 'daybook_model_errors_total', { operation: 'tool', kind: 'timeout' })).toBe(1);
    expect(sample(out, 'daybook_model_calls_total', { operation: 'chat' })).toBe(1);
  });

  it('a stream the caller stops reading early is a call, not an error', async () => {
    const metrics = createMetrics();
    for await (const _piece of metrics.instrumentLlm(fakeLlm()).stream([])) break;
    const out = await metrics.render();
    expect(sample(out, 'daybook_model_call_duration_seconds_count', { operation: 'chat' })).toBe(1);
    expect(sample(out, 'daybook_model_errors_total')).toBeUndefined();
  });

  it('names error kinds from a small set, never from the message', () => {
    expect(modelErrorKind(new OpenAI.APIConnectionError({ message: 'secret prompt' }))).toBe('connection');
    expect(modelErrorKind(new OpenAI.APIUserAbortError())).toBe('aborted');
    expect(modelErrorKind(Object.assign(new Error('x'), { status: 401 }))).toBe('auth');
    expect(modelErrorKind(Object.assign(new Error('x'), { status: 503 }))).toBe('server');
    expect(modelErrorKind(Object.assign(new Error('x'), { status: 400 }))).toBe('request');
    expect(modelErrorKind(new ModelIdleError(60000))).toBe('timeout');
    expect(modelErrorKind(new Error('my secret question'))).toBe('other');
    expect(modelErrorKind('a string')).toBe('other');
  });

  it('times chat turns by outcome', async () => {
    const metrics = createMetrics();
    metrics.chatTurn()('answered');
    metrics.chatTurn()('answered');
    metrics.chatTurn()('model_error');
    const out = await metrics.render();
    expect(sample(out, 'daybook_chat_turns_total', { outcome: 'answered' })).toBe(2);
    expect(sample(out, 'daybook_chat_turns_total', { outcome: 'model_error' })).toBe(1);
    expect(sample(out, 'daybook_chat_turn_duration_seconds_count', { outcome: 'answered' })).toBe(2);
  });

  it('reads sockets and queue depths at scrape time; a failing database leaves the queues out, not the scrape', async () => {
    const metrics = createMetrics();
    let open = 3;
    let fail = false;
    metrics.collectSockets(() => open);
    metrics.collectJobs(async () => {
      if (fail) throw new Error('database down');
      return [
        { queue: 'research', waiting: 4, active: 1 },
        { queue: 'daily-message', waiting: 0, active: 0 },
      ];
    });
    let out = await metrics.render();
    expect(sample(out, 'daybook_chat_open_sockets')).toBe(3);
    expect(sample(out, 'daybook_jobs_waiting', { queue: 'research' })).toBe(4);
    expect(sample(out, 'daybook_jobs_active', { queue: 'research' })).toBe(1);
    expect(sample(out, 'daybook_jobs_waiting', { queue: 'daily-message' })).toBe(0);
    open = 0;
    fail = true;
    out = await metrics.render();
    expect(sample(out, 'daybook_chat_open_sockets')).toBe(0);
    expect(labelSets(out, 'daybook_jobs_waiting')).toEqual([]);
    expect(out).toContain('daybook_http_request_duration_seconds');
  });

  it('labels HTTP requests by route pattern, and unmatched ones as such', async () => {
    const metrics = createMetrics();
    metrics.httpRequest('GET', '/api/memories/:id/', 200, 0.01);
    metrics.httpRequest('GET', undefined, 404, 0.001);
    const out = await metrics.render();
    expect(
      sample(out, 'daybook_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/memories/:id/',
        status: '200',
      }),
    ).toBe(1);
    expect(sample(out, 'daybook_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
  });

  it('counts failed job runs by queue and whether they were final', async () => {
    const metrics = createMetrics();
    metrics.jobFailed('research', false);
    metrics.jobFailed('research', true);
    metrics.jobFailed('research', true);
    const out = await metrics.render();
    expect(sample(out, 'daybook_jobs_failed_total', { queue: 'research', final: 'false' })).toBe(1);
    expect(sample(out, 'daybook_jobs_failed_total', { queue: 'research', final: 'true' })).toBe(2);
  });
});
