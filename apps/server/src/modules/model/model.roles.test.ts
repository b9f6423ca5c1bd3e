// Chat templates that take one system message, first: the chat's per-turn notes go at the head of
// the user's message instead, found out from the server's refusal and remembered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { createLlm } from './model.client.ts';
import { refusalOf } from './model.errors.ts';
import { foldLateSystem } from './model.roles.ts';
import type { LlmMessage } from './model.types.ts';

const prompt: LlmMessage[] = [
  { role: 'system', content: 'You are Daybook.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello!' },
  { role: 'system', content: 'Current date and time: Sunday.' },
  { role: 'user', content: 'What day is it?' },
];

describe('refusals of a late system message', () => {
  it.each([
    // llama.cpp with Mistral's chat template (a Jinja raise_exception), as a 500.
    [500, 'After the optional system message, conversation roles must alternate user/assistant/user/assistant/...'],
    // Gemma's template.
    [500, 'System role not supported'],
    // Qwen3's template.
    [400, 'System message must be at the beginning.'],
    // mistral_common behind vLLM.
    [400, "Unexpected role 'system' after role 'assistant'"],
  ])('%i %s', (status, message) => {
    expect(refusalOf(status, message, { lateSystem: true })).toBe('lateSystem');
    expect(refusalOf(status, message, {})).toBeNull();
  });

  it('are not other errors that mention the system', () => {
    expect(refusalOf(400, 'This model’s maximum context length is 8192 tokens', { lateSystem: true })).toBeNull();
    expect(refusalOf(503, 'The system is overloaded', { lateSystem: true })).toBeNull();
  });
});

describe('foldLateSystem', () => {
  it('puts each later system message at the head of the next user message, marked as context', () => {
    expect(foldLateSystem(prompt)).toEqual([
      { role: 'system', content: 'You are Daybook.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: '<context>\nCurrent date and time: Sunday.\n</context>\n\nWhat day is it?' },
    ]);
  });

  it('adds a note with no user message after it to the first system message', () => {
    expect(
      foldLateSystem([
        { role: 'system', content: 'A' },
        { role: 'user', content: 'q' },
        { role: 'system', content: 'B' },
      ]),
    ).toEqual([
      { role: 'system', content: 'A\n\nB' },
      { role: 'user', content: 'q' },
    ]);
  });
});

describe('a server whose template takes one system message', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.onChat((req) =>
      req.messages.some((m, i) => i > 0 && m.role === 'system')
        ? {
            status: 500,
            body: JSON.stringify({
              error: {
                code: 500,
                message:
                  'After the optional system message, conversation roles must alternate user/assistant/user/assistant/...',
                type: 'server_error',
              },
            }),
          }
        : { text: 'It is Sunday.' },
    );
  });
  afterAll(() => fake.close());

  it('gets the notes in the user message, and later answers are asked that way at once', async () => {
    const warnings: string[] = [];
    const llm = createLlm({ baseUrl: fake.baseUrl, model: 'mistral', timeoutMs: 5000, maxRetries: 0 }, undefined, {
      log: { warn: (_fields, message) => warnings.push(message) },
    });
    if (!llm) throw new Error('no model');
    const answer = async () => {
      let text = '';
      for await (const piece of llm.stream(prompt)) text += piece;
      return text;
    };
    expect(await answer()).toBe('It is Sunday.');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.messages.at(-1)?.content).toBe(
      '<context>\nCurrent date and time: Sunday.\n</context>\n\nWhat day is it?',
    );
    expect(llm.refuses('lateSystem')).toBe(true);
    expect(warnings.join('\n')).toMatch(/system message after the first/);

    expect(await answer()).toBe('It is Sunday.');
    expect(fake.requests).toHaveLength(3);
  });
});
