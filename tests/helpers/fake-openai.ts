// An OpenAI-compatible HTTP server on 127.0.0.1 for tests: POST /v1/chat/completions, streaming
// (server-sent events) or not, with structured JSON output. Each test scripts what it answers.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CompletionRequest {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string; json_schema?: { name: string } };
  tools?: Array<{ type: string; function: { name: string } }>;
  tool_choice?: unknown;
  stream_options?: { include_usage?: boolean };
}

/** What the fake answers: text (streamed in pieces when asked to stream), an HTTP error, a stall, or garbage. */
export type Script =
  | {
      text: string;
      chunks?: number;
      /** Wait before each streamed piece, or before a whole answer. */
      delayMs?: number;
      /** Answer a tool call in prose, as some local models do. */
      ignoreTools?: boolean;
      /** Stream this many pieces, then go quiet with the connection open. */
      stallAfterChunks?: number;
      /** A streamed answer that also calls these tools (streamed in pieces, as real endpoints do). */
      toolCalls?: Array<{ name: string; arguments: string }>;
      /** The usage to report (a stream reports it in a last chunk when stream_options asks for it). */
      usage?: { prompt: number; completion: number; cached?: number };
    }
  | { status: number; body?: string }
  | { stall: true }
  | { garbage: string };

export interface Timing {
  /** performance.now() when the request arrived, and when the answer was fully written. */
  receivedAt: number;
  finishedAt: number;
}

export interface FakeOpenAI {
  baseUrl: string;
  requests: CompletionRequest[];
  /** POST /v1/embeddings requests: the model and the texts. */
  embeddings: Array<{ model: string; input: string[] }>;
  /** Per request, in the order of `requests`. */
  timings: Timing[];
  /** Requests whose client went away before the answer was written (it gave up, or was stopped). */
  readonly abandoned: number;
  /** How chat replies (stream: true) are answered; default: "You said: <last message>". */
  onChat(fn: (req: CompletionRequest) => Script): void;
  /** How tool and structured-output calls (memory extraction) are answered; default: no operations. A tool call's arguments are the script's text. */
  onJson(fn: (req: CompletionRequest) => Script): void;
  close(): Promise<void>;
}

/** The structured answer a request asks for: its forced tool, or its JSON schema response format. */
export const structuredName = (req: CompletionRequest): string | undefined =>
  req.tools?.[0]?.function.name ?? req.response_format?.json_schema?.name;

/** A bag of words hashed into `size` dimensions: texts sharing words point the same way. */
export function wordVector(text: string, size = 64): number[] {
  const v = new Array<number>(size).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) % size;
    v[h] = (v[h] ?? 0) + 1;
  }
  return v;
}

/** A script's usage as OpenAI reports it. */
const usageOf = (u: { prompt: number; completion: number; cached?: number }) => ({
  prompt_tokens: u.prompt,
  completion_tokens: u.completion,
  total_tokens: u.prompt + u.completion,
  ...(u.cached !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached } } : {}),
});

const lastUser = (req: CompletionRequest) => [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

function chunk(model: string, content: string | null, finish: string | null) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finish }],
  };
}

export async function startFakeOpenAI(
  options: {
    /**
     * 'last': `requests` keeps each request's last message only. The benchmark's fake answers
     * thousands of prompts; keeping them all grew its heap into collections that paused it, and
     * the pauses counted as the server's time.
     */
    keep?: 'all' | 'last';
  } = {},
): Promise<FakeOpenAI> {
  const requests: CompletionRequest[] = [];
  const embeddings: FakeOpenAI['embeddings'] = [];
  const timings: Timing[] = [];
  let chat: (req: CompletionRequest) => Script = (req) => ({ text: `You said: ${lastUser(req)}`, chunks: 3 });
  let json: (req: CompletionRequest) => Script = () => ({ text: '{"operations":[]}' });
  const stalled: ServerResponse[] = [];
  let abandoned = 0;

  async function answer(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const part of req) raw += part;
    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
      const body = JSON.parse(raw) as { model: string; input: string | string[] };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      embeddings.push({ model: body.model, input });
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: wordVector(text) })),
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    // Taken before parsing: the benchmark counts from here, and parsing is this process's work.
    const receivedAt = performance.now();
    const body = JSON.parse(raw) as CompletionRequest;
    const timing: Timing = { receivedAt, finishedAt: 0 };
    requests.push(options.keep === 'last' ? { ...body, messages: body.messages.slice(-1) } : body);
    timings.push(timing);
    res.on('finish', () => {
      timing.finishedAt = performance.now();
    });
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
    // Streamed requests are chat replies even when they offer tools; the others are structured calls.
    const structured = Boolean(body.response_format || (body.tools?.length && !body.stream));
    const script = (structured ? json : chat)(body);
    if ('stall' in script) {
      stalled.push(res);
      return;
    }
    if ('status' in script) {
      res
        .writeHead(script.status, { 'content-type': 'application/json' })
        .end(script.body ?? '{"error":{"message":"upstream failure","type":"server_error"}}');
      return;
    }
    if ('garbage' in script) {
      res
        .writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json' })
        .end(script.garbage);
      return;
    }
    if (!body.stream) {
      if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
      const tool = script.ignoreTools ? undefined : body.tools?.[0]?.function.name;
      // With tools, the model "calls" the first one with the script's text as its arguments.
      const message = tool
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_fake', type: 'function', function: { name: tool, arguments: script.text } }],
          }
        : { role: 'assistant', content: script.text };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop' }],
          usage: script.usage ? usageOf(script.usage) : { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const n = Math.max(1, script.chunks ?? 1);
    const size = Math.ceil(script.text.length / n);
    for (let i = 0; i < script.text.length; i += size) {
      if (script.stallAfterChunks !== undefined && i / size >= script.stallAfterChunks) {
        stalled.push(res);
        return;
      }
      res.write(`data: ${JSON.stringify(chunk(body.model, script.text.slice(i, i + size), null))}\n\n`);
      if (script.delayMs) await new Promise((r) => setTimeout(r, script.delayMs));
    }
    const calls = script.toolCalls ?? [];
    calls.forEach((call, index) => {
      // Name and id first, then the arguments in two pieces.
      const half = Math.ceil(call.arguments.length / 2);
      const pieces = [
        { index, id: `call_${index}`, type: 'function', function: { name: call.name, arguments: '' } },
        { index, function: { arguments: call.arguments.slice(0, half) } },
        { index, function: { arguments: call.arguments.slice(half) } },
      ];
      for (const piece of pieces) {
        const c = chunk(body.model, null, null);
        (c.choices[0] as { delta: unknown }).delta = { tool_calls: [piece] };
        res.write(`data: ${JSON.stringify(c)}\n\n`);
      }
    });
    res.write(`data: ${JSON.stringify(chunk(body.model, null, calls.length ? 'tool_calls' : 'stop'))}\n\n`);
    if (script.usage && body.stream_options?.include_usage)
      res.write(
        `data: ${JSON.stringify({ ...chunk(body.model, null, null), choices: [], usage: usageOf(script.usage) })}\n\n`,
      );
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  // Idle connections are the client's to close, as a real provider's long keep-alive leaves them.
  // Node's 5 s default raced the app's pooled connection on a busy machine: a request sent on a
  // socket the server was closing failed (ECONNRESET), and with LLM_MAX_RETRIES=0 the chat answered
  // "unavailable".
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    embeddings,
    timings,
    get abandoned() {
      return abandoned;
    },
    onChat: (fn) => {
      chat = fn;
    },
    onJson: (fn) => {
      json = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of stalled) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
