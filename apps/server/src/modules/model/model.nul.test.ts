// Model output with NUL characters (raw, or escaped in JSON) is stored everywhere (answers, reports,
// daily messages), and PostgreSQL text cannot hold NUL: the client drops them as they arrive.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakeOpenAI, startFakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { createLlm } from './model.client.ts';
import type { Llm } from './model.types.ts';

let fake: FakeOpenAI;
let llm: Llm;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const made = createLlm({ baseUrl: fake.baseUrl, model: 'fake-model', timeoutMs: 5000, maxRetries: 0 });
  if (!made) throw new Error('no model');
  llm = made;
});
afterAll(() => fake.close());

it('drops NUL from streamed answers and from tool arguments, raw or JSON-escaped', async () => {
  fake.onChat(() => ({ text: 'Hello\u0000 there\u0000', chunks: 3 }));
  let streamed = '';
  for await (const piece of llm.stream([{ role: 'user', content: 'hi' }])) streamed += piece;
  expect(streamed).toBe('Hello there');

  fake.onJson(() => ({ text: '{"title":"A\\u0000B","body":"C\u0000D"}' }));
  const args = await llm.structured({
    messages: [{ role: 'user', content: 'write' }],
    name: 'write_report',
    description: 'Writes',
    parameters: { type: 'object', properties: {} },
    schema: z.object({ title: z.string(), body: z.string() }),
  });
  expect(args).toEqual({ title: 'AB', body: 'CD' });
});
