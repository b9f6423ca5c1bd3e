// The dialect reader on the shapes servers send, piece by piece (recorded streams are replayed
// whole in model.recordings.test.ts).
import { describe, expect, it } from 'vitest';
import { contentOf, readAnswer, type Split, ThinkSplitter, ToolCallAssembler, usageOf } from './model.dialect.ts';

/** Feeds `pieces` to a splitter and gathers what it gives out. */
function split(pieces: string[], hold = false) {
  const s = new ThinkSplitter(hold);
  const shown: string[] = [];
  let reasoning = '';
  let resets = 0;
  const take = (out: Split) => {
    if (out.reset) {
      resets++;
      shown.length = 0;
    }
    if (out.text) shown.push(out.text);
    reasoning += out.reasoning;
  };
  for (const piece of pieces) take(s.push(piece));
  take(s.end());
  return { text: shown.join(''), reasoning, resets, pieces: shown.length };
}

describe('ThinkSplitter', () => {
  it('keeps a <think> block out of the answer, tags split across pieces included', () => {
    expect(split(['<th', 'ink>Let me', ' see.</thi', 'nk>\n\nHello', ' there'])).toEqual({
      text: 'Hello there',
      reasoning: 'Let me see.',
      resets: 0,
      pieces: 2,
    });
  });

  it("LM Studio's empty block leaves the answer as it is", () => {
    expect(split(['<think>\n\n</think>\n\n', 'Hi!']).text).toBe('Hi!');
  });

  it('a closing tag without its opening one: what came before was reasoning, and the caller is told', () => {
    const out = split(['Okay, the user', ' greets me.', '\n</think>\n\n', 'Hello!']);
    expect(out).toMatchObject({ text: 'Hello!', reasoning: 'Okay, the user greets me.\n', resets: 1 });
  });

  it('held until the closing tag once the endpoint is known for it; released whole when none comes', () => {
    expect(split(['Thinking', ' hard</think>', 'Answer'], true)).toMatchObject({ text: 'Answer', resets: 0 });
    expect(split(['A plain', ' answer'], true)).toMatchObject({ text: 'A plain answer', reasoning: '', resets: 0 });
  });

  it('a hold ends when the server shows it parses reasoning out: what was held goes out at once', () => {
    const s = new ThinkSplitter(true);
    expect(s.push('Hello').text).toBe('');
    expect(s.stopHolding().text).toBe('Hello');
    expect(s.push(' there').text).toBe(' there');
  });

  it('reasoning comes first and once: tags later in the answer are its own text', () => {
    expect(split(['Use the <think> tag like this: <think>x</think>.'])).toMatchObject({
      text: 'Use the <think> tag like this: <think>x</think>.',
      resets: 0,
    });
    const out = split(['Hmm.</think>', 'Answer with a stray ', '</think> in it.']);
    expect(out).toMatchObject({ text: 'Answer with a stray </think> in it.', reasoning: 'Hmm.', resets: 0 });
    expect(split(['<think>a</think>B', ' <think>c</think>'])).toMatchObject({
      text: 'B <think>c</think>',
      reasoning: 'a',
    });
  });

  it('text that only looks like a tag goes out as written', () => {
    expect(split(['a <b> and <thin', 'king about it'])).toMatchObject({ text: 'a <b> and <thinking about it' });
    expect(split(['3 < 4 and x <', '/b>']).text).toBe('3 < 4 and x </b>');
  });
});

describe('ToolCallAssembler', () => {
  const assemble = (...chunks: unknown[][]) => {
    const a = new ToolCallAssembler();
    for (const c of chunks) a.add(c);
    return a.done();
  };

  it('OpenAI: by index, name first, arguments in pieces', () => {
    expect(
      assemble(
        [{ index: 0, id: 'call_1', type: 'function', function: { name: 'web_research', arguments: '' } }],
        [{ index: 0, function: { arguments: '{"query":' } }],
        [{ index: 0, function: { arguments: '"e-bikes"}' } }],
      ),
    ).toEqual([{ id: 'call_1', name: 'web_research', arguments: '{"query":"e-bikes"}' }]);
  });

  it('a name sent again in every piece (NIM) is not repeated', () => {
    expect(
      assemble(
        [{ index: 0, id: 'a', function: { name: 'calendar_events', arguments: '{"da' } }],
        [{ index: 0, id: 'a', function: { name: 'calendar_events', arguments: 'te":"2026-11-28"}' } }],
      ),
    ).toEqual([{ id: 'a', name: 'calendar_events', arguments: '{"date":"2026-11-28"}' }]);
  });

  it('calls without index (Mistral), told apart by id; arguments as an object are taken whole', () => {
    expect(
      assemble(
        [{ id: 'abc123def', function: { name: 'one', arguments: '{"a":1}' } }],
        [{ id: 'xyz987uvw', function: { name: 'two', arguments: { b: 2 } } }],
      ),
    ).toEqual([
      { id: 'abc123def', name: 'one', arguments: '{"a":1}' },
      { id: 'xyz987uvw', name: 'two', arguments: '{"b":2}' },
    ]);
  });

  it('whole calls in separate chunks without index or id stay separate calls', () => {
    const calls = assemble(
      [{ function: { name: 'calendar_events', arguments: '{"date":"2026-11-28"}' } }],
      [{ function: { name: 'web_research', arguments: '{"query":"e-bikes"}' } }],
    );
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ['calendar_events', '{"date":"2026-11-28"}'],
      ['web_research', '{"query":"e-bikes"}'],
    ]);
  });

  it('one index reused for a second call with its own id is a second call', () => {
    const calls = assemble(
      [{ index: 0, id: 'c1', function: { name: 'one', arguments: '{}' } }],
      [{ index: 0, id: 'c2', function: { name: 'two', arguments: '{}' } }],
    );
    expect(calls.map((c) => c.name)).toEqual(['one', 'two']);
  });

  it('arguments repeated whole at the end are not doubled; a call without id gets one', () => {
    expect(
      assemble(
        [{ index: 0, function: { name: 'f', arguments: '{"x":' } }],
        [{ index: 0, function: { arguments: '1}' } }],
        [{ index: 0, function: { arguments: '{"x":1}' } }],
      ),
    ).toEqual([{ id: 'call_0', name: 'f', arguments: '{"x":1}' }]);
  });
});

describe('contents, usage and whole answers', () => {
  it('content as an array of parts: text parts are the answer, thinking parts reasoning', () => {
    expect(
      contentOf([
        { type: 'thinking', thinking: [{ type: 'text', text: 'Hmm.' }] },
        { type: 'text', text: 'Yes' },
      ]),
    ).toEqual({ text: 'Yes', reasoning: 'Hmm.' });
    expect(contentOf(null)).toEqual({ text: '', reasoning: '' });
  });

  it('usage from the last chunk, from x_groq, with cached tokens when told', () => {
    expect(
      usageOf({ usage: { prompt_tokens: 9, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } } }),
    ).toEqual({ prompt: 9, completion: 3, cached: 4 });
    expect(usageOf({ x_groq: { usage: { prompt_tokens: 5, completion_tokens: 2 } } })).toEqual({
      prompt: 5,
      completion: 2,
    });
    expect(usageOf({ usage: null })).toBeNull();
  });

  it('a whole answer: tool calls without type, reasoning beside the content, <think> taken out', () => {
    const answer = readAnswer({
      choices: [
        {
          message: {
            role: 'assistant',
            content: '<think>plan</think>{"ok":true}',
            tool_calls: [{ id: 'k', function: { name: 'f', arguments: '{}' } }],
          },
        },
      ],
    });
    expect(answer).toMatchObject({
      text: '{"ok":true}',
      reasoning: { field: 'think', text: 'plan' },
      toolCalls: [{ id: 'k', name: 'f', arguments: '{}' }],
    });
    expect(() => readAnswer({ object: 'error', message: 'boom' })).toThrow('boom');
  });
});
