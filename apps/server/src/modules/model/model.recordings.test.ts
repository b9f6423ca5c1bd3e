// The model client on recorded provider traffic, served byte for byte (tests/fixtures/
// model-providers; each file's source is in its SOURCES.md): what Daybook reads of each stream,
// and how it takes each recorded error. The conformance suite (model.conformance.test.ts) runs
// Daybook's calls end to end on the same recordings.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  documentedError,
  type ErrorRecording,
  errorRecording,
  raw,
  streamText,
} from '../../../../../tests/helpers/model-replay/recordings.ts';
import { createLlm } from './model.client.ts';
import { failureKind, providerError, refusalOf } from './model.errors.ts';
import type { Llm, LlmReasoning, LlmToolCall, LlmUsage } from './model.types.ts';

type Reply = { status: number; contentType: string; body: string };
let server: Server;
let base = '';
let queue: Reply[] = [];
let bodies: Array<Record<string, unknown>> = [];

const stream = (file: string): Reply => ({ status: 200, contentType: 'text/event-stream', body: streamText(file) });
const failure = (e: ErrorRecording): Reply => ({
  status: e.status,
  contentType: e.contentType ?? 'application/json',
  body: e.body,
});

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let raw = '';
    for await (const part of req) raw += part;
    bodies.push(JSON.parse(raw));
    const reply = queue.shift() ?? { status: 599, contentType: 'text/plain', body: 'nothing queued' };
    res.writeHead(reply.status, { 'content-type': reply.contentType }).end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const warnings: Array<Record<string, unknown>> = [];
function model(maxRetries = 0): Llm {
  const llm = createLlm({ baseUrl: base, model: 'm', timeoutMs: 5000, maxRetries }, 'embedder', {
    log: { warn: (fields) => warnings.push(fields) },
  });
  if (!llm) throw new Error('no model');
  return llm;
}

const TOOLS = [{ name: 'weather', description: 'The weather', parameters: { type: 'object', properties: {} } }];

/** Streams `replies` through a fresh client, as the chat does; what it read. */
async function read(replies: Reply[], options: { tools?: boolean; usage?: boolean; llm?: Llm } = {}) {
  queue = [...replies];
  bodies = [];
  const llm = options.llm ?? model();
  let text = '';
  const calls: LlmToolCall[] = [];
  const usage: LlmUsage[] = [];
  let reasoning: LlmReasoning | undefined;
  let resets = 0;
  for await (const piece of llm.stream([{ role: 'user', content: 'hi' }], undefined, {
    tools: options.tools ? TOOLS : undefined,
    onToolCall: (c) => calls.push(c),
    onUsage: options.usage === false ? undefined : (u) => usage.push(u),
    onReasoning: (r) => {
      reasoning = r;
    },
    onReset: () => {
      resets++;
      text = '';
    },
  }))
    text += piece;
  return { text, calls, usage, reasoning, resets, llm };
}

describe('recorded streams: the answer, never the reasoning; tool calls and usage as sent', () => {
  it.each([
    ['openai/gpt-4.1-nano-text.excerpt.chunks.txt', '**Holiday', { prompt: 16, completion: 300, cached: 0 }],
    ['azure/azure-text.chunks.txt', 'Hello World', { prompt: 15, completion: 5, cached: 0 }],
    ['cerebras/cerebras-llama3.1-8b-text-no-done.sse', 'Hello.', { prompt: 43, completion: 3, cached: 0 }],
    ['deepseek/deepseek-chat-text.sse', 'Hello', { prompt: 11, completion: 1, cached: 0 }],
    ['mistral/ministral-3b-text.sse', 'Hello!', { prompt: 11, completion: 3 }],
    ['togetherai/together-llama-3.2-3b-text.sse', 'Hello.', { prompt: 43, completion: 3, cached: 0 }],
    ['groq/groq-llama-3.3-text.excerpt.chunks.txt', 'Introducing light.', { prompt: 45, completion: 662 }],
  ])('%s', async (file, text, usage) => {
    const got = await read([stream(file)]);
    expect(got.text).toBe(text);
    expect(got.usage).toEqual([usage]);
    expect(got.reasoning).toBeUndefined();
  });

  it.each([
    ['deepseek/deepseek-v4-pro-length-during-reasoning.chunks.txt', '', 'reasoning_content', 'We need'],
    ['groq/groq-qwen3-32b-reasoning.excerpt.chunks.txt', '3}$', 'reasoning', 'Okay, let'],
    ['llamacpp/llamacpp-b8180-qwen3-thinking-reasoning-content.excerpt.sse', 'hello', 'reasoning_content', 'Hmm'],
    ['ollama/ollama-0.34-qwen-reasoning-field.excerpt.chunks.txt', '', 'reasoning', 'We need answer'],
    ['openai-compatible/issue-20203-empty-tool-calls.chunks.txt', 'Hello', 'reasoning_content', 'Think more...'],
    ['qwen/dashscope-qwen3-max-reasoning.excerpt.chunks.txt', '**Answer: 3**', 'reasoning_content', 'We are asked:'],
    ['vllm/vllm-0.17-qwen3.5-reasoning-field-only.excerpt.chunks.txt', '', 'reasoning', 'Thinking Process'],
    ['xai/grok-3-mini-text.excerpt.chunks.txt', 'Grok', 'reasoning_content', 'First,'],
    ['mistral/magistral-thinking-content-array.chunks.txt', '391', 'parts', 'Okay, the user is asking for the product'],
    ['lmstudio/lmstudio-0.3.17-qwen3-no-think-stream-first-chunk.excerpt.chunks.txt', '', 'think', ''],
  ])('%s: reasoning kept apart', async (file, text, field, reasoning) => {
    const got = await read([stream(file)]);
    expect(got.text).toBe(text);
    expect(got.text).not.toMatch(/\[object Object\]|<\/?think>/);
    if (reasoning) expect(got.reasoning).toMatchObject({ field, text: expect.stringContaining(reasoning) });
  });

  it.each([
    [
      'openai/gpt-4.1-nano-tool-call.sse',
      'square_root',
      '{"number":132413}',
      { prompt: 74, completion: 15, cached: 0 },
    ],
    ['openai/gpt-4o-text-then-tool-call.chunks.txt', 'weather', '{}', { prompt: 58, completion: 12, cached: 0 }],
    ['llamacpp/llamacpp-b8180-gemma3-jinja-tool-call.sse', 'square_root', '{"number":132413}', undefined],
    [
      'mistral/mistral-tool-call-no-index.chunks.txt',
      'weather',
      '{"location": "San Francisco"}',
      { prompt: 124, completion: 22 },
    ],
    ['groq/groq-llama-3.3-tool-call.chunks.txt', 'weather', '{}', { prompt: 210, completion: 15 }],
    [
      'qwen/dashscope-qwen3-max-tool-call.chunks.txt',
      'weather',
      '{"location": "San Francisco"}',
      { prompt: 295, completion: 22, cached: 0 },
    ],
    [
      'deepseek/deepseek-v4-flash-tool-call.chunks.txt',
      'weather',
      '{"location": "San Francisco"}',
      { prompt: 374, completion: 61, cached: 256 },
    ],
    [
      'xai/grok-3-mini-tool-call.excerpt.chunks.txt',
      'weather',
      '{"location":"San Francisco"}',
      { prompt: 307, completion: 26, cached: 306 },
    ],
    [
      'vllm/vllm-v1-named-tool-choice-name-repeated.excerpt.chunks.txt',
      'System-knowledge_base_search',
      '你好！',
      undefined,
    ],
  ])('%s: one call, its name once', async (file, name, args, usage) => {
    const got = await read([stream(file)], { tools: true });
    expect(got.calls).toEqual([{ id: expect.any(String), name, arguments: args }]);
    expect(got.calls[0]?.id).not.toBe('');
    if (usage) expect(got.usage).toEqual([usage]);
  });

  it("vLLM's parser bug (vllm#29408): reasoning in both fields, then leaked into the content without a tag", async () => {
    // Nothing marks the leaked text as reasoning, so it cannot be told from an answer: it is shown
    // as sent. The fields' reasoning is read once (both carry the same text).
    const got = await read([stream('vllm/vllm-qwen3-vl-thinking-reasoning-both-fields.excerpt.chunks.txt')]);
    expect(got.reasoning).toEqual({ field: 'reasoning_content', text: '好的' });
    expect(got.text).toBe('，用户让我');
  });

  it('DeepSeek: the tool round carries the reasoning back in reasoning_content', async () => {
    const got = await read([stream('deepseek/deepseek-v4-flash-tool-call.chunks.txt')], { tools: true });
    expect(got.reasoning).toEqual({
      field: 'reasoning_content',
      text: 'The user asks about the weather in San Francisco. I should use the weather tool.',
    });
    queue = [stream('deepseek/deepseek-chat-text.sse')];
    bodies = [];
    const call = got.calls[0] as LlmToolCall;
    for await (const _ of got.llm.stream([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [call], reasoning: got.reasoning },
      { role: 'tool', tool_call_id: call.id, content: '{"sunny":true}' },
    ])) {
      // read it all
    }
    const sent = (bodies[0]?.messages as Array<Record<string, unknown>> | undefined)?.[1];
    expect(sent).toMatchObject({ role: 'assistant', reasoning_content: got.reasoning?.text });
  });
});

describe('recorded refusals: recognised whatever the envelope and status, the answer sent again without', () => {
  const ok = stream('mistral/ministral-3b-text.sse');
  it.each([
    ['ollama/ollama-v1-model-without-tools.error.json', 'tools'],
    ['llamacpp/llamacpp-tools-without-jinja.error.json', 'tools'],
    ['llamacpp/llamacpp-b4369-unsupported-param-tools.error.json', 'tools'],
    ['llamacpp/llamacpp-jinja-tools-with-stream-unsupported.error.json', 'streamedTools'],
    ['vllm/vllm-auto-tool-choice-old-envelope.error.json', 'autoToolChoice'],
    // Mistral refusing a `tools` field (an empty one there), its message an array of pydantic errors.
    ['mistral/mistral-error-message-is-array-2025-11.error.json', 'tools'],
  ] as const)('%s', async (file, capability) => {
    warnings.length = 0;
    // Three retries allowed: a 500 that refuses tools is still not retried.
    const got = await read([failure(errorRecording(file)), ok], { tools: true, llm: model(3) });
    expect(got.text).toBe('Hello!');
    expect(bodies.map((b) => 'tools' in b)).toEqual([true, false]);
    expect(got.llm.refuses(capability)).toBe(true);
    // One line says what was refused, why, and what Daybook does instead.
    expect(warnings).toEqual([expect.objectContaining({ refused: capability, reason: expect.any(String) })]);
    // And the next answer does not ask again.
    await read([ok], { tools: true, llm: got.llm });
    expect(bodies.map((b) => 'tools' in b)).toEqual([false]);
  });

  it('the new vLLM envelope, as its source writes it', async () => {
    const e = documentedError('vllm protocol.py', 400, {
      error: {
        message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    });
    const got = await read([failure(e), ok], { tools: true });
    expect(got.text).toBe('Hello!');
    expect(got.llm.refuses('autoToolChoice')).toBe(true);
  });

  it("Azure AI inference's {detail} refusal of stream_options: answered without usage, not asked again", async () => {
    const refused = failure(errorRecording('azure/azure-ai-inference-stream-options-extra-parameters.error.json'));
    const got = await read([refused, ok]);
    expect(got.text).toBe('Hello!');
    expect(bodies.map((b) => 'stream_options' in b)).toEqual([true, false]);
    expect(got.llm.refuses('streamUsage')).toBe(true);
  });

  it("Groq's tool_use_failed, as a 400 or inside the stream: this answer goes without tools, later ones still offer them", async () => {
    const got = await read([failure(errorRecording('groq/groq-tool-use-failed.error.json')), ok], { tools: true });
    expect(got.text).toBe('Hello!');
    expect(bodies.map((b) => 'tools' in b)).toEqual([true, false]);
    expect(got.llm.refuses('tools')).toBe(false);
    const inStream = await read([stream('groq/groq-kimi-k2-tool-use-failed-in-stream.sse'), ok], { tools: true });
    expect(inStream.text).toBe('Hello!');
    expect(bodies.map((b) => 'tools' in b)).toEqual([true, false]);
  });
});

describe('recorded errors that are not refusals: kinds a user can be told', () => {
  async function fail(e: ErrorRecording) {
    queue = [failure(e)];
    try {
      for await (const _ of model().stream([{ role: 'user', content: 'hi' }], undefined, { tools: TOOLS })) {
        // nothing arrives
      }
    } catch (err) {
      return err as Error & { status?: number };
    }
    throw new Error('it answered');
  }

  it.each([
    [
      'vllm/vllm-model-not-found-old-envelope.error.json',
      'not-found',
      'The model `Qwen1.5-14B-Chat-GPTQ-Int8` does not exist.',
    ],
    ['lmstudio/lmstudio-0.3.14-unexpected-endpoint-http200.error.json', 'not-found', 'Unexpected endpoint or method.'],
    ['azure/azure-content-filter-prompt.error.json', 'content-filter', 'content management policy'],
    ['deepseek/deepseek-v4-thinking-reasoning-content-not-passed-back.error.json', 'rejected', 'must be passed back'],
    ['mistral/mistral-400-tool-call-id-format-2024.error.json', 'rejected', 'Tool call id was null'],
    [
      'mistral/mistral-422-extra-forbidden-max-completion-tokens.error.json',
      'rejected',
      'Extra inputs are not permitted',
    ],
    ['qwen/dashscope-qwen-plus-malformed-tool-arguments.error.json', 'rejected', 'must be in JSON format'],
    ['openai/max-tokens-unsupported-reasoning-model.error.json', 'rejected', "Unsupported parameter: 'max_tokens'"],
  ])('%s: %s', async (file, kind, words) => {
    const err = await fail(errorRecording(file));
    expect(failureKind(err)).toBe(kind);
    // The provider's words reach the error (for the debug log), never "(no body)" or [object Object].
    expect(err.message).toContain(words);
    expect(err.message).not.toMatch(/no body|\[object Object\]/);
  });

  it("Mistral's error messages as an object, a JSON string or an array read as words", () => {
    for (const file of [
      'mistral/mistral-422-extra-forbidden-max-completion-tokens.error.json',
      'mistral/mistral-422-message-is-json-string-2024-01.error.json',
      'mistral/mistral-error-message-is-array-2025-11.error.json',
    ]) {
      const { message } = providerError(errorRecording(file).body);
      expect(message.length).toBeGreaterThan(10);
      expect(message).not.toMatch(/\[object Object\]/);
    }
  });

  it('a refusal of stream_options without stream (OpenAI) is about usage, not tools', () => {
    const { message } = providerError(errorRecording('openai/openai-stream-options-without-stream.error.json').body);
    expect(refusalOf(400, message, { tools: true, streamUsage: true })).toBe('streamUsage');
  });
});

describe('recorded whole answers and embeddings', () => {
  it("Mistral's whole tool call without type", async () => {
    const schema = z.object({ location: z.string() });
    queue = [{ status: 200, contentType: 'application/json', body: raw('mistral/mistral-tool-call-no-type.json') }];
    const request = {
      messages: [{ role: 'user' as const, content: 'w' }],
      name: 'weather',
      description: 'd',
      parameters: {},
      schema,
    };
    expect(await model().structured(request)).toEqual({ location: 'San Francisco' });
  });

  it("llama.cpp's base64 embeddings decode to its 768 floats; floats are asked for", async () => {
    const recorded = JSON.parse(raw('embeddings/llamacpp-embeddinggemma-base64.json')) as {
      data: Array<{ embedding: string }>;
    };
    queue = [{ status: 200, contentType: 'application/json', body: JSON.stringify(recorded) }];
    bodies = [];
    const llm = model();
    const vectors = await llm.embed?.(recorded.data.map(() => 'text'));
    expect(bodies[0]).toMatchObject({ encoding_format: 'float' });
    expect(vectors?.[0]).toHaveLength(768);
    const first = Buffer.from(recorded.data[0]?.embedding ?? '', 'base64').readFloatLE(0);
    expect(vectors?.[0]?.[0]).toBeCloseTo(first, 6);
  });

  it.each(['embeddings/openai-text-embedding-3-small-float.json', 'embeddings/mistral-embed.json'])(
    '%s: floats as sent, in index order',
    async (file) => {
      const recorded = JSON.parse(raw(file)) as { data: Array<{ embedding: number[] }> };
      queue = [{ status: 200, contentType: 'application/json', body: JSON.stringify(recorded) }];
      const vectors = await model().embed?.(recorded.data.map(() => 'text'));
      expect(vectors).toEqual(recorded.data.map((d) => d.embedding));
    },
  );

  it('an OpenAI SDK error keeps its kind', () => {
    expect(failureKind(new OpenAI.APIConnectionTimeoutError())).toBe('timeout');
    expect(failureKind(new OpenAI.APIConnectionError({ message: 'refused' }))).toBe('unreachable');
  });
});
