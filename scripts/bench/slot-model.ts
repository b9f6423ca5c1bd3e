// An OpenAI-compatible model server for the model benchmarks that costs what a real one does
// (issue 33): a fixed number of slots (requests beyond them wait in arrival order, as llama.cpp's
// and Ollama's do), prompt processing time proportional to the tokens not already in the slot's
// cache (each slot keeps its last prompt and reuses the longest common prefix, as llama.cpp's KV
// cache does; a request takes the free slot whose cache shares the most with it, or the least
// recently used one), and generation
// time per output token. Answers carry OpenAI-style usage with prompt_tokens_details.cached_tokens.
// Tokens are counted as four characters of the prompt rendered with a plain chat template.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { textOf } from '../../tests/helpers/model-replay/brain.ts';

export interface SlotModelRequest {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown }>;
  tools?: Array<{ function: { name: string } }>;
  tool_choice?: unknown;
  response_format?: { type: string; json_schema?: { name?: string } };
  stream_options?: { include_usage?: boolean };
}

export interface SlotModelOptions {
  slots: number;
  /** Prompt processing per token not in the slot's cache. */
  promptMsPerToken: number;
  /** Generation per output token. */
  genMsPerToken: number;
  /** The answer's text: a reply to stream, or the JSON of a structured answer. */
  answer(req: SlotModelRequest, rendered: string): string;
  /** Keep each request's rendered prompt in the call log (for prefix measurements). */
  keepPrompts?: (req: SlotModelRequest) => boolean;
}

export interface ModelCall {
  model: string;
  stream: boolean;
  /** The first message's opening words: which of Daybook's prompts this is. */
  kind: string;
  receivedAt: number;
  startedAt: number;
  firstTokenAt: number;
  finishedAt: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** The slot it ran on, and the kind of the call that ran there before it (what its cache held). */
  slot?: number;
  after?: string;
  prompt?: string;
}

const CHARS_PER_TOKEN = 4;
export const tokensOf = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The prompt as a chat template would lay it out (what a prefix cache compares). */
export function render(req: SlotModelRequest): string {
  const tools = req.tools?.length ? `<|tools|>${JSON.stringify(req.tools)}\n` : '';
  return (
    tools +
    req.messages
      .map((m) => `<|${m.role}|>\n${textOf(m.content)}${m.tool_calls ? JSON.stringify(m.tool_calls) : ''}\n`)
      .join('') +
    '<|assistant|>\n'
  );
}

export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export async function startSlotModel(options: SlotModelOptions) {
  const slots = Array.from({ length: options.slots }, (_, id) => ({ id, busy: false, cache: '', usedAt: 0, kind: '' }));
  const waiting: Array<{ rendered: string; start: (slot: (typeof slots)[number]) => void }> = [];
  const calls: ModelCall[] = [];

  /**
   * The free slot whose cache shares the longest prefix with `rendered`, if it shares at least half
   * of it; else the least recently used free slot (llama.cpp's --slot-prompt-similarity 0.5).
   */
  function bestFree(rendered: string) {
    let best: (typeof slots)[number] | undefined;
    let shared = -1;
    let oldest: (typeof slots)[number] | undefined;
    for (const slot of slots) {
      if (slot.busy) continue;
      const n = commonPrefix(slot.cache, rendered);
      if (n > shared) [best, shared] = [slot, n];
      if (!oldest || slot.usedAt < oldest.usedAt) oldest = slot;
    }
    return shared >= rendered.length / 2 ? best : oldest;
  }

  function acquire(rendered: string): Promise<(typeof slots)[number]> {
    return new Promise((resolve) => {
      const slot = waiting.length ? undefined : bestFree(rendered);
      if (slot) {
        slot.busy = true;
        resolve(slot);
      } else waiting.push({ rendered, start: resolve });
    });
  }

  function release(slot: (typeof slots)[number]) {
    slot.busy = false;
    slot.usedAt = now();
    const next = waiting.shift();
    if (!next) return;
    slot.busy = true;
    next.start(slot);
  }

  async function complete(req: SlotModelRequest, res: ServerResponse) {
    const rendered = render(req);
    const call: ModelCall = {
      model: req.model,
      stream: Boolean(req.stream),
      kind: textOf(req.messages[0]?.content).slice(0, 60),
      receivedAt: now(),
      startedAt: 0,
      firstTokenAt: 0,
      finishedAt: 0,
      promptTokens: tokensOf(rendered),
      cachedTokens: 0,
      completionTokens: 0,
      ...(options.keepPrompts?.(req) ? { prompt: rendered } : {}),
    };
    calls.push(call);
    const slot = await acquire(rendered);
    try {
      call.startedAt = now();
      call.slot = slot.id;
      call.after = slot.kind;
      call.cachedTokens = Math.floor(commonPrefix(slot.cache, rendered) / CHARS_PER_TOKEN);
      await sleep((call.promptTokens - call.cachedTokens) * options.promptMsPerToken);
      const text = options.answer(req, rendered);
      call.completionTokens = tokensOf(text);
      const usage = {
        prompt_tokens: call.promptTokens,
        completion_tokens: call.completionTokens,
        total_tokens: call.promptTokens + call.completionTokens,
        prompt_tokens_details: { cached_tokens: call.cachedTokens },
      };
      if (req.stream) await stream(req, res, text, call, usage);
      else await whole(req, res, text, call, usage);
      slot.cache = rendered + text;
      slot.kind = call.kind;
    } finally {
      call.finishedAt = now();
      release(slot);
    }
  }

  /** Streams `text` a few tokens at a time, each after its generation time. */
  async function stream(req: SlotModelRequest, res: ServerResponse, text: string, call: ModelCall, usage: object) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (body: object) => res.write(`data: ${JSON.stringify(body)}\n\n`);
    const base = { id: 'chatcmpl-slot', object: 'chat.completion.chunk', created: 0, model: req.model };
    const step = 4 * CHARS_PER_TOKEN;
    for (let i = 0; i < text.length; i += step) {
      const piece = text.slice(i, i + step);
      await sleep(tokensOf(piece) * options.genMsPerToken);
      if (!call.firstTokenAt) call.firstTokenAt = now();
      send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    }
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (req.stream_options?.include_usage) send({ ...base, choices: [], usage });
    res.end('data: [DONE]\n\n');
  }

  /** A whole answer: a forced tool's call, or the text (JSON for a response format). */
  async function whole(req: SlotModelRequest, res: ServerResponse, text: string, call: ModelCall, usage: object) {
    await sleep(call.completionTokens * options.genMsPerToken);
    call.firstTokenAt = now();
    const tool = (req.tool_choice as { function?: { name?: string } } | undefined)?.function?.name;
    const message = tool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_slot', type: 'function', function: { name: tool, arguments: text } }],
        }
      : { role: 'assistant', content: text };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-slot',
        object: 'chat.completion',
        created: 0,
        model: req.model,
        choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop' }],
        usage,
      }),
    );
  }

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found"}}');
      return;
    }
    try {
      await complete(JSON.parse(Buffer.concat(chunks).toString()) as SlotModelRequest, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: (err as Error).message } }));
    }
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    /** Requests waiting for a slot now. */
    waiting: () => waiting.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type SlotModel = Awaited<ReturnType<typeof startSlotModel>>;
