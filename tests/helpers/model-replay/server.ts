// An OpenAI-compatible server on 127.0.0.1 that answers like the providers in profiles.ts: at
// /p/<profile>/v1, refusals are their recorded error bodies and statuses, streams and whole answers
// are their recordings saying what brain.ts decides. Each profile's requests are kept for tests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { wordVector } from '../fake-openai.ts';
import { type Answer, answer, type Request } from './brain.ts';
import { PROFILES, type Profile } from './profiles.ts';
import { body, type Chunk, type ErrorRecording, streamChunks } from './recordings.ts';
import { retemplate, type Said, wholeAnswer } from './template.ts';

export interface Served {
  request: Request;
  /** The recorded error it was answered with, if any. */
  refusedWith?: string;
}

export interface ReplayServer {
  /** The base URL of a profile's endpoint. */
  url(profile: string): string;
  /** What a profile was asked, in order. */
  served(profile: string): Served[];
  embeddings(profile: string): Array<{ input: string[]; encoding_format?: string }>;
  close(): Promise<void>;
}

type Loose = Record<string, unknown>;

/** The recorded reasoning text of a profile's streams (joined deltas), for the answers that carry it. */
function recordedReasoning(p: Profile): string {
  const files = [p.text, p.tools].filter((f): f is string => Boolean(f));
  for (const file of files) {
    let text = '';
    for (const c of streamChunks(file)) {
      const delta = ((c.choices as Loose[] | undefined)?.[0]?.delta ?? {}) as Loose;
      for (const key of ['reasoning_content', 'reasoning'])
        if (typeof delta[key] === 'string') {
          text += delta[key];
          break;
        }
      if (Array.isArray(delta.content))
        for (const part of delta.content as Loose[])
          if (part.type === 'thinking') text += (part.thinking as Loose[]).map((t) => t.text).join('');
    }
    if (text.trim()) return text;
  }
  // Profiles whose recordings hold no reasoning think in DeepSeek's recorded words.
  return streamChunks('deepseek/deepseek-v4-flash-tool-call.chunks.txt')
    .map((c) => ((c.choices as Loose[])[0]?.delta as Loose | undefined)?.reasoning_content)
    .filter((t): t is string => typeof t === 'string')
    .join('');
}

/** The answer's text with the profile's reasoning in it, for styles that put it in the content. */
function withThinking(p: Profile, text: string): string {
  const style = p.reasoning?.style;
  if (style === 'think') return `<think>${recordedReasoning(p)}</think>\n\n${text}`;
  if (style === 'think-no-open') return `${recordedReasoning(p)}\n</think>\n\n${text}`;
  if (style === 'empty-think') return `<think>\n\n</think>\n\n${text}`;
  return text;
}

function refusal(p: Profile, req: Request): ErrorRecording | undefined {
  const r = p.refuses ?? {};
  if (req.stream_options && r.streamOptions) return r.streamOptions;
  if (req.tools?.length) {
    if (r.tools) return r.tools;
    if (req.stream && r.streamedTools) return r.streamedTools;
    const auto = req.tool_choice === undefined || req.tool_choice === 'auto';
    if (auto && r.autoTools) return r.autoTools;
  }
  if (req.response_format && r.jsonSchema) return r.jsonSchema;
  if (p.reasoningBack && req.messages.some((m) => m.role === 'assistant' && m.tool_calls && !m.reasoning_content))
    return p.reasoningBack;
  return undefined;
}

/** What the streamed answer says, in the profile's framing. */
function streamFor(p: Profile, req: Request, said: Answer): Chunk[] {
  const toolCall = 'toolCall' in said ? said.toolCall : undefined;
  const text = 'text' in said ? said.text : JSON.stringify((said as { json: unknown }).json);
  const file = toolCall && p.tools ? p.tools : p.text;
  const what: Said = toolCall ? { toolCalls: [toolCall] } : { text: withThinking(p, text) };
  let chunks = retemplate(streamChunks(file), what);
  if (p.usage === 'asked' && !req.stream_options) {
    // Without stream_options, OpenAI-like servers send no usage.
    chunks = chunks
      .filter((c) => !(Array.isArray(c.choices) && c.choices.length === 0 && c.usage))
      .map((c) => {
        const { usage: _, ...rest } = c;
        return rest;
      });
  }
  return chunks;
}

/** A whole answer: what a forced tool, a JSON schema format or plain instructions get from this profile. */
function wholeFor(p: Profile, req: Request, said: Answer): Chunk {
  const chunks = streamChunks(p.tools ?? p.text);
  const template = p.whole?.startsWith('mistral/') ? body(p.whole) : undefined;
  const reasoning =
    p.reasoning?.field && p.reasoning.style !== 'parts'
      ? { field: p.reasoning.field, text: recordedReasoning(p) }
      : undefined;
  const forced = typeof req.tool_choice === 'object' && req.tool_choice !== null;
  const json = 'json' in said ? JSON.stringify(said.json) : undefined;
  let content: Said;
  if (json === undefined) content = { text: withThinking(p, 'text' in said ? said.text : '') };
  else if (forced && p.forcedTool === 'call')
    content = {
      toolCalls: [{ name: (req.tool_choice as { function: { name: string } }).function.name, arguments: json }],
    };
  else if (forced && p.forcedTool === 'prose' && p.whole) return body(p.whole);
  else if (forced && p.forcedTool === 'prose') content = { text: 'I would be happy to help with that.' };
  else if (req.response_format && p.jsonSchema === 'honoured') content = { text: withThinking(p, json) };
  else content = { text: withThinking(p, `Sure, here it is:\n\n\`\`\`json\n${json}\n\`\`\`\n`) };
  const whole = wholeAnswer(chunks, content, { reasoning, template });
  if (p.reasoning?.style === 'parts' && content.text) {
    const message = ((whole.choices as Loose[])[0] as Loose).message as Loose;
    message.content = [
      { type: 'thinking', thinking: [{ type: 'text', text: recordedReasoning(p) }] },
      { type: 'text', text: content.text },
    ];
  }
  return whole;
}

export async function startReplayServer(): Promise<ReplayServer> {
  const served = new Map<string, Served[]>(PROFILES.map((p) => [p.name, []]));
  const embedded = new Map<string, Array<{ input: string[]; encoding_format?: string }>>();

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const part of req) raw += part;
    const match = req.url?.match(/^\/p\/([^/]+)\/v1\/(chat\/completions|embeddings)$/);
    const p = PROFILES.find((x) => x.name === match?.[1]);
    if (!match || !p || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    if (match[2] === 'embeddings') {
      const asked = JSON.parse(raw) as { input: string | string[]; encoding_format?: string };
      const input = Array.isArray(asked.input) ? asked.input : [asked.input];
      const list = embedded.get(p.name) ?? [];
      list.push({ input, encoding_format: asked.encoding_format });
      embedded.set(p.name, list);
      // As llama.cpp's recorded answer: base64 when asked for it (with the item's encoding_format), else floats.
      const base64 = asked.encoding_format === 'base64';
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          model: 'embedder',
          object: 'list',
          usage: { prompt_tokens: input.length, total_tokens: input.length },
          data: input.map((text, index) => ({
            index,
            object: 'embedding',
            embedding: base64
              ? Buffer.from(new Float32Array(wordVector(text, 16)).buffer).toString('base64')
              : wordVector(text, 16),
            ...(base64 ? { encoding_format: 'base64' } : {}),
          })),
        }),
      );
      return;
    }
    const request = JSON.parse(raw) as Request;
    const log = served.get(p.name) as Served[];
    const refused = refusal(p, request);
    if (refused) {
      log.push({ request, refusedWith: refused.file });
      res.writeHead(refused.status, { 'content-type': refused.contentType ?? 'application/json' }).end(refused.body);
      return;
    }
    log.push({ request });
    const said = answer(request);
    if (!request.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(wholeFor(p, request, said)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const chunk of streamFor(p, request, said)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(599).end(String(err));
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/p/${name}/v1`,
    served: (name) => served.get(name) ?? [],
    embeddings: (name) => embedded.get(name) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
