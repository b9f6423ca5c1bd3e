// Structured answers that degrade, never break: a forced tool call where the endpoint honours one,
// else a JSON schema response format (OpenAI, vLLM, llama.cpp, LM Studio, Ollama), else the schema
// in plain instructions. Whatever comes back is searched for JSON (bare, fenced, inside prose or a
// `<tool_call>` block), unwrapped from `{name, arguments}` and checked with the caller's schema; a
// wrong answer is asked again once, told what was wrong.
import type { z } from 'zod';
import type { Capabilities } from './model.capabilities.ts';
import type { WholeAnswer } from './model.dialect.ts';
import { isToolUseFailure, ModelOutputError, reasonOf, refusalIn } from './model.errors.ts';
import type { LlmMessage, StructuredMode, StructuredRequest } from './model.types.ts';

/** Answers one structured request may take in all (refusals cost nothing and are not counted). */
const MAX_ANSWERS = 3;

/** Every JSON value `text` holds, the likeliest first: all of it, fenced blocks, then embedded objects. */
export function jsonCandidates(text: string): unknown[] {
  const found: unknown[] = [];
  const tryParse = (s: string) => {
    try {
      found.push(JSON.parse(s));
      return true;
    } catch {
      return false;
    }
  };
  const trimmed = text.trim();
  if (!trimmed) return found;
  tryParse(trimmed);
  for (const m of trimmed.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)) tryParse((m[1] ?? '').trim());
  // Objects inside prose: from each opening brace, to its balanced end (strings respected).
  let tries = 0;
  for (let start = trimmed.indexOf('{'); start >= 0 && tries < 20; start = trimmed.indexOf('{', start + 1)) {
    const end = balancedEnd(trimmed, start);
    if (end < 0) continue;
    tries++;
    if (tryParse(trimmed.slice(start, end + 1))) start = end;
  }
  return found;
}

function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** A candidate, and what it may wrap: `{name, arguments}` (a tool call written as text), `{"<name>": …}`. */
function unwrapped(value: unknown, name: string): unknown[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [value];
  const v = value as Record<string, unknown>;
  const out: unknown[] = [value];
  for (const inner of [v.arguments, v.parameters, v[name]]) {
    if (typeof inner === 'string') out.push(...jsonCandidates(inner));
    else if (inner && typeof inner === 'object') out.push(inner);
  }
  return out;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; json: boolean; problem: string };

export function parseStructured<T>(text: string, request: Pick<StructuredRequest<T>, 'schema' | 'name'>): Parsed<T> {
  const candidates = jsonCandidates(text).flatMap((c) => unwrapped(c, request.name));
  let problem = 'The answer was not a JSON object.';
  for (const candidate of candidates) {
    const parsed = request.schema.safeParse(candidate);
    if (parsed.success) return { ok: true, value: parsed.data };
    problem = issues(parsed.error);
  }
  return { ok: false, json: candidates.length > 0, problem };
}

const issues = (error: z.ZodError) =>
  error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || 'the object'}: ${i.message}`)
    .join('; ');

/** The request's messages with the schema spelled out, for the modes without a tool. */
export function withInstructions(request: StructuredRequest<unknown>): LlmMessage[] {
  const note = `Answer with only a JSON object, with no other text before or after it, for "${request.name}" (${request.description}), matching this JSON schema:\n${JSON.stringify(request.parameters)}`;
  const [first, ...rest] = request.messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${note}` }, ...rest];
  return [{ role: 'system', content: note }, ...request.messages];
}

export type Ask = (mode: StructuredMode, messages: LlmMessage[]) => Promise<WholeAnswer>;

/** Runs the ladder: each mode the endpoint is not known to refuse, in order. */
export async function structuredAnswer<T>(ask: Ask, caps: Capabilities, request: StructuredRequest<T>): Promise<T> {
  const modes: StructuredMode[] = [];
  if (request.mode) modes.push(request.mode);
  else {
    if (!caps.refuses('tools') && !caps.refuses('namedToolChoice')) modes.push('tool');
    if (!caps.refuses('jsonSchema')) modes.push('json');
    modes.push('prompt');
  }
  let answers = 0;
  let failure = new ModelOutputError('format', 'no answer');
  for (const mode of modes) {
    let messages = mode === 'tool' ? request.messages : withInstructions(request as StructuredRequest<unknown>);
    for (let attempt = 0; attempt < 2 && answers < MAX_ANSWERS; attempt++) {
      let answer: WholeAnswer;
      try {
        answer = await ask(mode, messages);
      } catch (err) {
        const refused = refusalIn(err, {
          tools: mode === 'tool',
          toolChoice: mode === 'tool' ? 'named' : undefined,
          jsonSchema: mode === 'json',
        });
        if (refused) {
          caps.refuse(refused, reasonOf(err));
          break;
        }
        // Groq: the model wrote a tool call its server could not read. Not a refusal: another way may work.
        if (mode !== 'tool' || !isToolUseFailure(err)) throw err;
        answers++;
        failure = new ModelOutputError('invalid', 'the tool call could not be read');
        break;
      }
      answers++;
      const call =
        mode === 'tool'
          ? (answer.toolCalls.find((c) => c.name === request.name) ??
            (answer.toolCalls.length === 1 ? answer.toolCalls[0] : undefined))
          : undefined;
      // Asked to call the tool, it wrote prose: the endpoint ignores tool_choice (Ollama, llama.cpp).
      if (mode === 'tool' && !call) caps.refuse('namedToolChoice', 'answered in text instead of calling the tool');
      const raw = call?.arguments ?? answer.text;
      const parsed = parseStructured(raw, request);
      let problem: string;
      if (parsed.ok) {
        const checked = request.check?.(parsed.value) ?? null;
        if (!checked) {
          request.onMode?.(mode);
          return parsed.value;
        }
        failure = new ModelOutputError('check', checked);
        problem = checked;
      } else {
        failure = new ModelOutputError(parsed.json ? 'invalid' : 'format', parsed.problem);
        problem = parsed.problem;
        // No JSON at all where the mode should force it: the next mode may get it.
        if (!parsed.json && mode !== 'prompt') {
          if (mode === 'json') caps.refuse('jsonSchema', 'answered without JSON despite the response format');
          break;
        }
      }
      messages = [
        ...messages,
        { role: 'assistant', content: raw.slice(0, 4000) },
        {
          role: 'user',
          content: `That is not valid: ${problem} Answer again with only the corrected JSON object${mode === 'tool' ? `, through the ${request.name} tool` : ''}.`,
        },
      ];
    }
    // Well-formed answers that fail the caller's check are not a matter of the format.
    if (failure.kind === 'check' || answers >= MAX_ANSWERS) break;
  }
  throw failure;
}
