// The model, through the openai SDK: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM,
// llama.cpp, LM Studio, Mistral, DeepSeek, Groq…). Responses are read through the dialect reader,
// errors through one envelope, and what the endpoint refuses is remembered (model.capabilities.ts).
import OpenAI from 'openai';
import type { Config } from '../../config.ts';
import { withoutNul } from '../../lib/text.ts';
import { type CapabilityLog, createCapabilities, endpointForLog } from './model.capabilities.ts';
import { readAnswer } from './model.dialect.ts';
import { normalizingFetch, reasonOf } from './model.errors.ts';
import { streamAnswer } from './model.stream.ts';
import { type Ask, structuredAnswer } from './model.structured.ts';
import type { Llm, LlmTurnMessage, StructuredRequest } from './model.types.ts';
import { nodeFetch } from './node-fetch.ts';

type Param = OpenAI.Chat.Completions.ChatCompletionMessageParam;

function toOpenAI(m: LlmTurnMessage): Param {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  if (!('tool_calls' in m)) return m;
  const message: Param & Record<string, unknown> = {
    role: 'assistant',
    content: m.content,
    tool_calls: m.tool_calls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: { name: c.name, arguments: c.arguments },
    })),
  };
  // Back in the field it came in (DeepSeek's thinking mode refuses a tool round without it).
  if (m.reasoning && (m.reasoning.field === 'reasoning_content' || m.reasoning.field === 'reasoning'))
    message[m.reasoning.field] = m.reasoning.text;
  return message;
}

/**
 * Model output with its NUL characters dropped, raw or JSON-escaped: PostgreSQL text cannot hold
 * them, and every answer, report and daily message is stored.
 */
function jsonWithoutNul(text: string): string {
  return withoutNul(text).replace(/\\u0000/gi, '');
}

/**
 * Open-weight reasoning models, whose servers may pass their `<think>` output through as content,
 * the opening tag often in the prompt's template: their streamed answers are held until the
 * reasoning ends (or a server shows it parses reasoning out). Hosted reasoning APIs (o-series,
 * deepseek-reasoner) send reasoning apart and are not held.
 */
export const REASONING_MODEL =
  /\br1\b|r1-|qwq|qwen3(?![\w.:/-]*(instruct|coder|max|embed))|think|reasoning|glm-4\.[5-9]|glm-z1|exaone-deep|deepseek-v3\.[1-9]|hunyuan-a13b|seed-oss|minimax-m[12]/i;

/** An embedding as floats, sent as a list or as base64 of little-endian float32s. */
function vectorOf(embedding: unknown): number[] {
  if (Array.isArray(embedding)) return embedding.map(Number);
  if (typeof embedding === 'string') {
    const buf = Buffer.from(embedding, 'base64');
    return Array.from(new Float32Array(buf.buffer, buf.byteOffset, Math.floor(buf.length / 4)));
  }
  throw new Error('the embeddings answer had no vector');
}

/** One non-streamed answer in `mode`, read whatever the dialect, its text without NUL. */
function askIn(client: OpenAI, model: string, request: StructuredRequest<unknown>): Ask {
  const tool = { name: request.name, description: request.description, parameters: request.parameters };
  const asked = {
    tool: {
      tools: [{ type: 'function', function: tool }],
      tool_choice: { type: 'function', function: { name: tool.name } },
    },
    json: {
      response_format: {
        type: 'json_schema',
        json_schema: { name: tool.name, schema: tool.parameters, strict: false },
      },
    },
    prompt: {},
  };
  return async (mode, messages) => {
    const res = await client.chat.completions.create(
      {
        model,
        messages,
        ...asked[mode],
        stream: false,
      } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
      { signal: request.signal },
    );
    const answer = readAnswer(res);
    if (answer.usage) request.onUsage?.(answer.usage);
    return {
      ...answer,
      text: jsonWithoutNul(answer.text),
      toolCalls: answer.toolCalls.map((c) => ({ ...c, arguments: jsonWithoutNul(c.arguments) })),
    };
  };
}

/**
 * Vectors from the endpoint's /embeddings, asked as floats: the SDK's default (base64) is garbled
 * by servers that answer floats anyway. A server that knows no encoding_format is asked without.
 */
function embedder(client: OpenAI, embeddingModel: string): NonNullable<Llm['embed']> {
  type Answer = { data?: Array<{ index?: number; embedding?: unknown }> };
  let floatsRefused = false;
  const ask = (texts: string[], signal?: AbortSignal) =>
    client.post<Answer>('/embeddings', {
      body: { model: embeddingModel, input: texts, ...(floatsRefused ? {} : { encoding_format: 'float' }) },
      signal,
    });
  return async (texts, signal) => {
    let res: Answer;
    try {
      res = await ask(texts, signal);
    } catch (err) {
      const refusedFloats = (err as { status?: number }).status !== undefined && /encoding_format/i.test(reasonOf(err));
      if (floatsRefused || !refusedFloats) throw err;
      floatsRefused = true;
      res = await ask(texts, signal);
    }
    const data = [...(res.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    if (data.length !== texts.length)
      throw new Error(`the embeddings answer had ${data.length} of ${texts.length} vectors`);
    return data.map((d) => vectorOf(d.embedding));
  };
}

export function createLlm(
  config: Config['llm'],
  embeddingModel?: string,
  options: { log?: CapabilityLog; now?: () => number } = {},
): Llm | null {
  if (!config.model) return null;
  const baseURL = config.baseUrl ?? 'https://api.openai.com/v1';
  const client = new OpenAI({
    baseURL,
    // Local servers such as Ollama accept any key.
    apiKey: config.apiKey ?? 'not-needed',
    timeout: config.timeoutMs,
    maxRetries: config.maxRetries,
    fetch: normalizingFetch(nodeFetch),
  });
  const model = config.model;
  const caps = createCapabilities({ endpoint: endpointForLog(baseURL), model, log: options.log, now: options.now });
  const streamDeps = {
    client,
    model,
    caps,
    timeoutMs: config.timeoutMs,
    toOpenAI,
    jsonWithoutNul,
    mayThink: REASONING_MODEL.test(model),
  };
  return {
    model,
    refuses: (capability) => caps.refuses(capability),
    refusals: () => caps.known(),
    stream: (messages, signal, options = {}) => streamAnswer(streamDeps, messages, signal, options),
    structured: (request) =>
      structuredAnswer(askIn(client, model, request as StructuredRequest<unknown>), caps, request),
    ...(embeddingModel ? { embed: embedder(client, embeddingModel) } : {}),
  };
}
