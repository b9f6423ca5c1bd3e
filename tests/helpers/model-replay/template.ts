// A recorded stream saying something else: the answer's text and tool calls are put where the
// recording had its own, split into as many pieces, and every other byte of the framing (ids,
// envelopes, field names and their absence, reasoning, usage, filter results, finish chunks) is
// as recorded. This lets a Daybook call run against a provider's real framing with content that
// makes sense for the call.
import type { Chunk } from './recordings.ts';

export interface Said {
  text?: string;
  toolCalls?: Array<{ name: string; arguments: string }>;
}

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

const deltaOf = (chunk: Chunk): Loose | undefined => {
  const choices = chunk.choices;
  const first = Array.isArray(choices) ? choices[0] : undefined;
  return isObject(first) && isObject(first.delta) ? first.delta : undefined;
};

const hasAnswerText = (chunk: Chunk) => {
  const content = deltaOf(chunk)?.content;
  if (typeof content === 'string') return content.length > 0;
  return Array.isArray(content) && content.some((p) => isObject(p) && p.type === 'text' && p.text);
};

const toolPieces = (chunk: Chunk): Loose[] => {
  const calls = deltaOf(chunk)?.tool_calls;
  return Array.isArray(calls) ? calls.filter(isObject) : [];
};

const MIN_PIECES = 6;

/** `text` in `n` pieces (fewer when it is shorter), whole characters each. */
export function pieces(text: string, n: number): string[] {
  const chars = Array.from(text);
  const count = Math.max(1, Math.min(n, chars.length));
  const size = Math.ceil(chars.length / count);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out.length ? out : [''];
}

function withContent(template: Chunk, text: string): Chunk {
  const chunk = clone(template);
  const delta = deltaOf(chunk) as Loose;
  if (Array.isArray(delta.content)) {
    // Thinking parts stay; the text parts become this piece.
    const kept = delta.content.filter((p) => !(isObject(p) && p.type === 'text'));
    delta.content = [...kept, { type: 'text', text }];
  } else delta.content = text;
  return chunk;
}

function setFinish(chunk: Chunk, from: string, to: string) {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return;
  for (const c of choices) if (isObject(c) && c.finish_reason === from) c.finish_reason = to;
}

/** The tool-call pieces of one recorded call, saying `call` (index and ids follow the call's place). */
function toolCallChunks(recorded: Chunk[], call: { name: string; arguments: string }, place: number): Chunk[] {
  const withArgs = recorded.filter((c) => toolPieces(c).some((p) => isObject(p.function) && 'arguments' in p.function));
  // A first piece that names the call with empty arguments keeps them empty, as recorded.
  const carrying = withArgs.filter((c) => {
    const fn = toolPieces(c)[0]?.function as Loose | undefined;
    return !(fn && 'name' in fn && fn.arguments === '' && withArgs.length > 1);
  });
  const args = pieces(call.arguments, Math.max(1, carrying.length));
  let next = 0;
  return recorded.map((template) => {
    const chunk = clone(template);
    const delta = deltaOf(chunk) as Loose;
    const piece = toolPieces(chunk)[0] as Loose;
    delta.tool_calls = [piece];
    if (typeof piece.index === 'number') piece.index = place;
    if (typeof piece.id === 'string' && piece.id) piece.id = place ? `${piece.id}${place}` : piece.id;
    const fn = (isObject(piece.function) ? piece.function : piece) as Loose;
    if (typeof fn.name === 'string') fn.name = call.name;
    if (carrying.includes(template)) {
      fn.arguments = isObject(fn.arguments) ? JSON.parse(call.arguments || '{}') : (args[next] ?? '');
      next++;
    }
    return chunk;
  });
}

/** The recorded stream `chunks`, saying `said`. */
export function retemplate(chunks: Chunk[], said: Said): Chunk[] {
  const answerAt = chunks.map((c, i) => (hasAnswerText(c) ? i : -1)).filter((i) => i >= 0);
  const toolAt = chunks.map((c, i) => (toolPieces(c).length ? i : -1)).filter((i) => i >= 0);
  const text = said.text ?? '';
  const calls = said.toolCalls ?? [];
  if (calls.length && !toolAt.length) throw new Error('this recording has no tool call to say one with');
  // At least a few pieces, as servers stream a token or a few at a time.
  const textPieces = text ? pieces(text, Math.max(MIN_PIECES, answerAt.length)) : [];
  // Without a recorded answer piece, the text goes before the first tool piece (or the finish).
  const textTemplate = (answerAt.length ? chunks[answerAt[0] as number] : undefined) ?? firstDeltaChunk(chunks);
  const out: Chunk[] = [];
  let placedText = false;
  let placedTools = false;
  const placeText = () => {
    if (placedText) return;
    placedText = true;
    for (const piece of textPieces) out.push(withContent(textTemplate, piece));
  };
  chunks.forEach((chunk, i) => {
    const k = answerAt.indexOf(i);
    if (k >= 0) {
      // The answer's pieces take the recorded pieces' places; the last one's framing carries the rest.
      const mine = k === answerAt.length - 1 ? textPieces.slice(k) : textPieces.slice(k, k + 1);
      for (const piece of mine) out.push(withContent(chunk, piece));
      placedText = true;
      return;
    }
    if (toolAt.includes(i)) {
      if (!answerAt.length) placeText();
      if (!placedTools) {
        placedTools = true;
        const recorded = toolAt.map((j) => chunks[j] as Chunk);
        calls.forEach((call, place) => {
          out.push(...toolCallChunks(recorded, call, place));
        });
      }
      return;
    }
    const finishing = isFinish(chunk);
    if (finishing) {
      if (!placedText) placeText();
      const copy = clone(chunk);
      if (!calls.length) setFinish(copy, 'tool_calls', 'stop');
      else setFinish(copy, 'stop', 'tool_calls');
      out.push(copy);
      return;
    }
    out.push(clone(chunk));
  });
  if (!placedText) placeText();
  return out;
}

const isFinish = (chunk: Chunk) => {
  const choices = chunk.choices;
  return Array.isArray(choices) && choices.some((c) => isObject(c) && typeof c.finish_reason === 'string');
};

function firstDeltaChunk(chunks: Chunk[]): Chunk {
  const found = chunks.find((c) => deltaOf(c) && !isFinish(c)) ?? chunks.find((c) => deltaOf(c));
  if (!found) throw new Error('this recording has no delta to write text with');
  const chunk = clone(found);
  const delta = deltaOf(chunk) as Loose;
  for (const key of Object.keys(delta)) if (key !== 'role') delete delta[key];
  return chunk;
}

/** The last usage a recorded stream carried, as recorded. */
export function recordedUsage(chunks: Chunk[]): Loose | undefined {
  let usage: Loose | undefined;
  for (const c of chunks) if (isObject(c.usage)) usage = c.usage;
  return usage;
}

export interface WholeOptions {
  /** Where the provider puts reasoning in a whole answer, and the reasoning to put there. */
  reasoning?: { field: string; text: string };
  /** A recorded whole answer to keep the framing of (Mistral's tool call without `type`). */
  template?: Chunk;
}

/** A non-streamed answer in the framing of a provider's stream (its ids, fields and usage). */
export function wholeAnswer(chunks: Chunk[], said: Said, options: WholeOptions = {}): Chunk {
  const calls = said.toolCalls ?? [];
  if (options.template) return fromTemplate(options.template, said);
  const head = chunks.find((c) => typeof c.id === 'string' && c.id) ?? chunks[0] ?? {};
  const toolTemplate = chunks.flatMap(toolPieces)[0];
  const message: Loose = { role: 'assistant', content: said.text ?? null };
  if (options.reasoning) message[options.reasoning.field] = options.reasoning.text;
  if (calls.length) {
    message.tool_calls = calls.map((call, i) => {
      const piece: Loose = {};
      if (toolTemplate && typeof toolTemplate.id === 'string') piece.id = `${toolTemplate.id || 'call'}${i || ''}`;
      if (!toolTemplate || 'type' in toolTemplate) piece.type = 'function';
      piece.function = { name: call.name, arguments: call.arguments };
      return piece;
    });
  }
  const answer: Chunk = {};
  for (const key of ['id', 'created', 'model', 'system_fingerprint'] as const) if (key in head) answer[key] = head[key];
  answer.object = 'chat.completion';
  answer.choices = [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }];
  const usage = recordedUsage(chunks);
  if (usage) answer.usage = usage;
  return answer;
}

function fromTemplate(template: Chunk, said: Said): Chunk {
  const answer = clone(template);
  const choice = (answer.choices as Loose[])[0] as Loose;
  const message = choice.message as Loose;
  const calls = said.toolCalls ?? [];
  const recorded = Array.isArray(message.tool_calls) ? (message.tool_calls as Loose[]) : [];
  message.content = said.text ?? (calls.length ? message.content : null);
  if (calls.length) {
    message.tool_calls = calls.map((call, i) => {
      const piece = clone(recorded[0] ?? {});
      if (typeof piece.id === 'string') piece.id = `${piece.id}${i || ''}`;
      piece.function = { name: call.name, arguments: call.arguments };
      return piece;
    });
    choice.finish_reason = 'tool_calls';
  } else {
    delete message.tool_calls;
    choice.finish_reason = 'stop';
  }
  return answer;
}
