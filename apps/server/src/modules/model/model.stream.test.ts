// A streamed answer stopped part way: what was held back (the reasoning of a model whose server
// passes it through) and half-written tool calls never become the answer. The openai SDK ends a
// stream quietly when its request is aborted; the stream here does the same, so the stop lands
// exactly after the pieces sent.
import { expect, it } from 'vitest';
import { createCapabilities } from './model.capabilities.ts';
import { type StreamDeps, streamAnswer } from './model.stream.ts';
import type { LlmToolCall } from './model.types.ts';

const chunk = (delta: Record<string, unknown>) => ({ choices: [{ index: 0, delta, finish_reason: null }] });

function stoppedAfter(chunks: unknown[], stop: AbortController) {
  const stream = {
    controller: new AbortController(),
    async *[Symbol.asyncIterator]() {
      yield* chunks;
      stop.abort();
    },
  };
  const deps = {
    client: { chat: { completions: { create: async () => stream } } },
    model: 'Qwen/QwQ-32B',
    caps: createCapabilities({ endpoint: 'e', model: 'm' }),
    timeoutMs: 10_000,
    toOpenAI: (m: unknown) => m,
    jsonWithoutNul: (t: string) => t,
    mayThink: true,
  } as unknown as StreamDeps;
  return deps;
}

it('a stopped answer gives out nothing that was held, and no half-written tool call', async () => {
  const stop = new AbortController();
  const deps = stoppedAfter(
    [
      // Reasoning without its opening tag (the template opened it), and a tool call's first half.
      chunk({ role: 'assistant', content: 'The user wants private' }),
      chunk({ content: ' details about' }),
      chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'web_research', arguments: '{"qu' } }] }),
    ],
    stop,
  );
  const calls: LlmToolCall[] = [];
  let text = '';
  const reading = (async () => {
    for await (const piece of streamAnswer(deps, [{ role: 'user', content: 'hi' }], stop.signal, {
      tools: [{ name: 'web_research', description: 'd', parameters: {} }],
      onToolCall: (c) => calls.push(c),
    }))
      text += piece;
  })();
  await expect(reading).rejects.toThrow();
  expect(text).toBe('');
  expect(calls).toEqual([]);
});

it('an answer that ends on its own gives out what was held (no reasoning came)', async () => {
  const never = new AbortController();
  const deps = stoppedAfter([chunk({ role: 'assistant', content: 'A plain' }), chunk({ content: ' answer.' })], {
    abort: () => {},
  } as AbortController);
  let text = '';
  for await (const piece of streamAnswer(deps, [{ role: 'user', content: 'hi' }], never.signal, {})) text += piece;
  expect(text).toBe('A plain answer.');
});
