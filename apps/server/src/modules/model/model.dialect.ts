// What OpenAI-compatible servers send, read into one shape where it enters Daybook. Servers differ:
// content as a string or an array of parts (Mistral), reasoning in `reasoning_content` (DeepSeek,
// Qwen, llama.cpp), `reasoning` (vLLM, Ollama, Groq), thinking parts (Mistral) or `<think>` tags in
// the content (R1 on Ollama, vLLM without a reasoning parser, LM Studio); tool calls with or without
// `index`, `id` or `type`, names sent once or in every chunk (NIM), arguments as text or an object;
// usage in the last chunk, in every chunk, or under `x_groq`.
import type { LlmReasoning, LlmToolCall, LlmUsage } from './model.types.ts';

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text inside a value that may be a string, a part `{type, text}` or a list of either. */
function textIn(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textIn).join('');
  if (isObject(value) && typeof value.text === 'string') return value.text;
  return '';
}

/** Content as a string or an array of parts: the answer's text and any thinking parts. */
export function contentOf(content: unknown): { text: string; reasoning: string } {
  if (typeof content === 'string') return { text: content, reasoning: '' };
  if (!Array.isArray(content)) return { text: '', reasoning: '' };
  let text = '';
  let reasoning = '';
  for (const part of content) {
    if (typeof part === 'string') text += part;
    else if (!isObject(part)) continue;
    else if (part.type === 'thinking' || part.type === 'reasoning')
      reasoning += textIn(part.thinking ?? part.reasoning ?? part.text);
    else if (part.type === 'text' || part.type === undefined) text += textIn(part.text);
  }
  return { text, reasoning };
}

/** Reasoning sent beside the content, and its field (it goes back in the same one). */
function reasoningField(message: Loose): LlmReasoning | null {
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    const text = textIn(message[field]);
    if (text) return { field, text };
  }
  return null;
}

/** Usage wherever a chunk or body carries it. */
export function usageOf(body: unknown): LlmUsage | null {
  if (!isObject(body)) return null;
  const groq = isObject(body.x_groq) ? body.x_groq.usage : undefined;
  const u = [body.usage, groq].find((x) => isObject(x) && typeof x.prompt_tokens === 'number') as Loose | undefined;
  if (!u) return null;
  const prompt = u.prompt_tokens as number;
  const completion =
    typeof u.completion_tokens === 'number'
      ? u.completion_tokens
      : typeof u.total_tokens === 'number'
        ? Math.max(0, u.total_tokens - prompt)
        : 0;
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cached = [details.cached_tokens, u.prompt_cache_hit_tokens, u.cached_tokens].find(
    (x) => typeof x === 'number',
  ) as number | undefined;
  return { prompt, completion, ...(cached !== undefined ? { cached } : {}) };
}

/** An error sent as a chunk or a 200 body (vLLM's `{"object":"error"}`, or `{"error":…}`). */
export function errorIn(body: unknown): string | null {
  if (!isObject(body)) return null;
  if (body.object === 'error') return textIn(body.message) || JSON.stringify(body.message ?? 'error');
  if (body.error && !body.choices) {
    const e = body.error;
    return typeof e === 'string' ? e : isObject(e) ? textIn(e.message) || JSON.stringify(e) : 'error';
  }
  return null;
}

// --- <think> tags in content -------------------------------------------------------------------

const TAG = /<(\/?)think(?:ing)?>/i;
const TAGS = ['<think>', '<thinking>', '</think>', '</thinking>'];

/** How many characters at the end of `text` could begin a tag the next piece completes. */
function partialTagAt(text: string): number {
  const tail = text.slice(-11).toLowerCase();
  for (let n = Math.min(tail.length, 11); n > 0; n--) {
    const end = tail.slice(-n);
    if (TAGS.some((tag) => tag.startsWith(end) && tag !== end)) return n;
  }
  return 0;
}

export interface Split {
  text: string;
  reasoning: string;
  /** The text given out before was reasoning: a closing tag came without an opening one. */
  reset: boolean;
}

/**
 * Separates `<think>…</think>` reasoning from the answer as text arrives. Some servers' templates
 * open the block in the prompt, so the output has only the closing tag: the text before it was
 * reasoning. Where that may happen (the endpoint did it before, or the model is a reasoning model),
 * nothing is given out until the closing tag, reasoning in a field of its own, or the end.
 */
export class ThinkSplitter {
  private thinking = false;
  private pending = '';
  private given = '';
  private held = '';
  private holding: boolean;
  private trimStart = true;
  /** A think block ended (or a lone closing tag ended one): later tags are text. */
  private blockEnded = false;

  constructor(holdUntilClose = false) {
    this.holding = holdUntilClose;
  }

  push(piece: string): Split {
    const out: Split = { text: '', reasoning: '', reset: false };
    let buf = this.pending + piece;
    this.pending = '';
    for (;;) {
      const match = TAG.exec(buf);
      if (!match) {
        const keep = partialTagAt(buf);
        this.pending = buf.slice(buf.length - keep);
        this.emit(out, buf.slice(0, buf.length - keep));
        return out;
      }
      this.emit(out, buf.slice(0, match.index));
      buf = buf.slice(match.index + match[0].length);
      const closing = match[1] === '/';
      if (this.thinking && closing) {
        this.thinking = false;
        this.blockEnded = true;
        this.trimStart = true;
      } else if (this.blockEnded || (!closing && this.given.trim())) {
        // Reasoning comes first and once: a tag later in the answer is the answer's own text (and
        // an answer that writes tags is talking about them: its later ones are text too).
        this.emit(out, match[0]);
        this.blockEnded = true;
      } else if (!closing) {
        // An opening tag: what was held is the answer after all, and thinking starts.
        this.release(out);
        this.thinking = true;
      } else {
        // A closing tag alone: everything so far was reasoning.
        // `given` includes this piece's text so far, which the caller has not seen yet.
        out.reasoning += this.given + this.held;
        out.reset = this.given.length > out.text.length;
        this.given = '';
        this.held = '';
        out.text = '';
        this.holding = false;
        this.blockEnded = true;
        this.trimStart = true;
      }
    }
  }

  /**
   * The server parses reasoning out itself (it came in a field of its own): no closing tag will
   * come, so what was held back goes out.
   */
  stopHolding(): Split {
    const out: Split = { text: '', reasoning: '', reset: false };
    if (this.holding && !this.thinking) this.release(out);
    this.holding = false;
    return out;
  }

  /** The rest, once the answer has ended: what was held back is the answer. */
  end(): Split {
    const out: Split = { text: '', reasoning: '', reset: false };
    this.emit(out, this.pending);
    this.pending = '';
    this.release(out);
    return out;
  }

  private emit(out: Split, text: string) {
    if (!text) return;
    if (this.thinking) {
      out.reasoning += text;
      return;
    }
    if (this.holding) {
      this.held += text;
      return;
    }
    const shown = this.trimStart ? text.trimStart() : text;
    if (!shown) return;
    this.trimStart = false;
    out.text += shown;
    this.given += shown;
  }

  private release(out: Split) {
    const held = this.held;
    this.held = '';
    this.holding = false;
    this.emit(out, held);
  }
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

// --- tool calls --------------------------------------------------------------------------------

/**
 * Tool calls as they arrive in pieces. Pieces belong to a call by `index`, else by `id`, else by
 * their place in the chunk; a name sent again is not appended, and arguments sent whole (as an
 * object, or repeated) replace what came before.
 */
export class ToolCallAssembler {
  private calls: LlmToolCall[] = [];
  private slots = new Map<string, number>();

  add(pieces: unknown): void {
    if (!Array.isArray(pieces)) return;
    pieces.forEach((raw, position) => {
      if (!isObject(raw)) return;
      const fn = isObject(raw.function) ? raw.function : raw;
      const id = typeof raw.id === 'string' && raw.id ? raw.id : '';
      const name = typeof fn.name === 'string' ? fn.name : '';
      // Neither index nor id: the chunk's first piece continues the latest call.
      const key = typeof raw.index === 'number' ? `i${raw.index}` : id ? `id${id}` : `p${position}`;
      let slot = this.slots.get(key) ?? (key === 'p0' && this.calls.length ? this.calls.length - 1 : undefined);
      // A named piece after a finished call (whole arguments), with neither index nor id: a new call.
      const latest = key === 'p0' && slot !== undefined ? this.calls[slot] : undefined;
      if (latest?.name && name && name !== latest.name && isJson(latest.arguments)) slot = undefined;
      // One index reused for another call (a new id and a name): a new call.
      const current = slot === undefined ? undefined : this.calls[slot];
      if (current && id && current.id && id !== current.id && name) slot = undefined;
      if (slot === undefined) {
        slot = this.calls.push({ id: '', name: '', arguments: '' }) - 1;
        this.slots.set(key, slot);
        if (id) this.slots.set(`id${id}`, slot);
      }
      const call = this.calls[slot] as LlmToolCall;
      call.id ||= id;
      if (name && name !== call.name) call.name = name.startsWith(call.name) ? name : call.name + name;
      this.addArguments(call, fn.arguments);
    });
  }

  private addArguments(call: LlmToolCall, args: unknown) {
    if (isObject(args) || Array.isArray(args)) {
      call.arguments = JSON.stringify(args);
      return;
    }
    if (typeof args !== 'string' || !args) return;
    // Sent whole again, or each piece holding all before it: the newest is the whole.
    if (call.arguments.length > 1 && args.startsWith(call.arguments)) call.arguments = args;
    else call.arguments += args;
  }

  done(): LlmToolCall[] {
    return this.calls
      .filter((c) => c.name)
      .map((c, i) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments || '{}' }));
  }
}

// --- a streamed chunk and a whole answer ------------------------------------------------------

export interface ChunkReading {
  /** Answer text, `<think>` tags still in it (the splitter takes them out across chunks). */
  text: string;
  reasoning: LlmReasoning | null;
  toolCalls: unknown;
  usage: LlmUsage | null;
  error: string | null;
}

export function readChunk(chunk: unknown): ChunkReading {
  const error = errorIn(chunk);
  const c = isObject(chunk) ? chunk : {};
  const choices = Array.isArray(c.choices) ? c.choices : [];
  const choice = isObject(choices[0]) ? choices[0] : {};
  const delta = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : {};
  const content = contentOf(delta.content);
  const beside = reasoningField(delta);
  const reasoning = beside ?? (content.reasoning ? { field: 'parts' as const, text: content.reasoning } : null);
  const toolCalls =
    delta.tool_calls ?? (isObject(delta.function_call) ? [{ index: 0, function: delta.function_call }] : undefined);
  return { text: content.text, reasoning, toolCalls, usage: usageOf(chunk), error };
}

export interface WholeAnswer {
  text: string;
  reasoning: LlmReasoning | null;
  toolCalls: LlmToolCall[];
  usage: LlmUsage | null;
}

/** A non-streamed answer, `<think>` blocks taken out of its text. */
export function readAnswer(body: unknown): WholeAnswer {
  const error = errorIn(body);
  if (error) throw Object.assign(new Error(error), { name: 'ProviderError' });
  const read = readChunk(body);
  const calls = new ToolCallAssembler();
  calls.add(read.toolCalls);
  const splitter = new ThinkSplitter();
  const first = splitter.push(read.text);
  const rest = splitter.end();
  const think = first.reasoning + rest.reasoning;
  return {
    text: first.text + rest.text,
    reasoning: read.reasoning ?? (think ? { field: 'think', text: think } : null),
    toolCalls: calls.done(),
    usage: read.usage,
  };
}
