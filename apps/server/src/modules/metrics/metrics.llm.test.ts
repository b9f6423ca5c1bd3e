// The model's token usage in streamed answers, against a local OpenAI-compatible endpoint: asked for
// (stream_options.include_usage) only when someone counts it, and dropped once if the endpoint refuses it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLlm } from '../model/model.client.ts';
import type { LlmUsage } from '../model/model.types.ts';

let server: Server;
let baseUrl = '';
let bodies: Array<Record<string, unknown>> = [];
/** Refuse requests that carry stream_options, as older servers do. */
let refuseUsage = false;

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let raw = '';
    for await (const part of req) raw += part;
    const body = JSON.parse(raw) as Record<string, unknown>;
    bodies.push(body);
    if (refuseUsage && body.stream_options) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"message":"Unrecognized request argument supplied: stream_options"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse(chunk({ role: 'assistant', content: 'Hel' })));
    res.write(sse(chunk({ content: 'lo' })));
    res.write(sse(chunk({}, 'stop')));
    // What OpenAI sends last with include_usage: no choices, the usage.
    if (body.stream_options)
      res.write(
        sse({ ...chunk({}), choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }),
      );
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  bodies = [];
  refuseUsage = false;
});

const llm = () => createLlm({ baseUrl, model: 'm', timeoutMs: 5000, maxRetries: 0 });

async function answer(onUsage?: (usage: LlmUsage) => void) {
  const model = llm();
  if (!model) throw new Error('no model');
  let text = '';
  for await (const piece of model.stream([{ role: 'user', content: 'hi' }], undefined, { onUsage })) text += piece;
  return { model, text };
}

describe('streamed token usage', () => {
  it('is asked for and reported when someone counts it', async () => {
    const seen: LlmUsage[] = [];
    const { text } = await answer((u) => seen.push(u));
    expect(text).toBe('Hello');
    expect(seen).toEqual([{ prompt: 12, completion: 5 }]);
    expect(bodies[0]?.stream_options).toEqual({ include_usage: true });
  });

  it('is not asked for otherwise: the request stays as it was', async () => {
    const { text } = await answer();
    expect(text).toBe('Hello');
    expect(bodies[0]).not.toHaveProperty('stream_options');
  });

  it('an endpoint that refuses stream_options still answers, and is not asked again', async () => {
    refuseUsage = true;
    const seen: LlmUsage[] = [];
    const { model, text } = await answer((u) => seen.push(u));
    expect(text).toBe('Hello');
    expect(seen).toEqual([]);
    expect(bodies.map((b) => 'stream_options' in b)).toEqual([true, false]);
    for await (const _ of model.stream([{ role: 'user', content: 'again' }], undefined, { onUsage: () => {} })) {
      // read it all
    }
    expect(bodies.map((b) => 'stream_options' in b)).toEqual([true, false, false]);
  });
});
