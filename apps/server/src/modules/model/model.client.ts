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
import { structuredAnswer } from './model.structured.ts';
import type { Llm, LlmTurnMessage, LlmUsage, StructuredRequest } from './model.types.ts';
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
  const mayThink = REASONING_MODEL.test(model);
  const caps = createCapabilities({ endpoint: endpointForLog(baseURL), model, log: options.log, now: options.now });

  /** One non-streamed answer, read whatever the dialect. */
  async function complete(body: Record<string, unknown>, signal?: AbortSignal, onUsage?: (u: LlmUsage) => void) {
    const res = await client.chat.completions.create(
      { model, ...body, stream: false } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
      { signal },
    );
    const answer = readAnswer(res);
    if (answer.usage) onUsage?.(answer.usage);
    return answer;
  }

  const llm: Llm = {
    model,
    refuses: (capability) => caps.refuses(capability),
    refusals: () => caps.known(),

    stream: (messages, signal, options = {}) =>
      streamAnswer(
        { client, model, caps, timeoutMs: config.timeoutMs, toOpenAI, jsonWithoutNul, mayThink },
        messages,
        signal,
        options,
      ),

    async structured<T>(request: StructuredRequest<T>) {
      const tool = { name: request.name, description: request.description, parameters: request.parameters };
      return structuredAnswer(
        async (mode, messages) => {
          const answer = await complete(
            {
              messages,
              ...(mode === 'tool'
                ? {
                    tools: [{ type: 'function', function: tool }],
                    tool_choice: { type: 'function', function: { name: tool.name } },
                  }
                : {}),
              ...(mode === 'json'
                ? {
                    response_format: {
                      type: 'json_schema',
                      json_schema: { name: tool.name, schema: tool.parameters, strict: false },
                    },
                  }
                : {}),
            },
            request.signal,
            request.onUsage,
          );
          return {
            ...answer,
            text: jsonWithoutNul(answer.text),
            toolCalls: answer.toolCalls.map((c) => ({ ...c, arguments: jsonWithoutNul(c.arguments) })),
          };
        },
        caps,
        request,
      );
    },
  };
  if (embeddingModel) {
    let floatsRefused = false;
    llm.embed = async (texts, signal) => {
      // Asked as floats: the SDK's default (base64) is garbled by servers that answer floats anyway.
      type Answer = { data?: Array<{ index?: number; embedding?: unknown }> };
      const ask = (format: boolean) =>
        client.post<Answer>('/embeddings', {
          body: {
            model: embeddingModel,
            input: texts,
            ...(format && !floatsRefused ? { encoding_format: 'float' } : {}),
          },
          signal,
        });
      let res: Answer;
      try {
        res = await ask(true);
      } catch (err) {
        // A server that knows no encoding_format answers floats without it.
        if (
          floatsRefused ||
          !/encoding_format/i.test(reasonOf(err)) ||
          (err as { status?: number }).status === undefined
        )
          throw err;
        floatsRefused = true;
        res = await ask(false);
      }
      const data = [...(res.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (data.length !== texts.length)
        throw new Error(`the embeddings answer had ${data.length} of ${texts.length} vectors`);
      return data.map((d) => vectorOf(d.embedding));
    };
  }
  return llm;
}
