// The model, through the openai SDK: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM,
// llama.cpp, LM Studio, Mistral, DeepSeek, Groq…). Responses are read through the dialect reader,
// errors through one envelope, and what the endpoint refuses is remembered (model.capabilities.ts).
import OpenAI from 'openai';
import type { Config } from '../../config.ts';
import { withoutNul } from '../../lib/text.ts';
import { type CapabilityLog, createCapabilities, endpointForLog } from './model.capabilities.ts';
import { readAnswer, readChunk, ThinkSplitter, ToolCallAssembler } from './model.dialect.ts';
import { isToolUseFailure, ModelIdleError, normalizingFetch, reasonOf, refusalIn } from './model.errors.ts';
import { structuredAnswer } from './model.structured.ts';
import type { Llm, LlmReasoning, LlmTurnMessage, LlmUsage, StructuredRequest } from './model.types.ts';
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

    async *stream(messages, signal, options = {}) {
      const offered = options.tools ?? [];
      let withTools = offered.length > 0 && !caps.refuses('tools') && !caps.refuses('autoToolChoice');
      let withUsage = Boolean(options.onUsage) && !caps.refuses('streamUsage');
      const prompt = () =>
        (offered.length && !withTools ? (options.withoutTools?.() ?? messages) : messages).map(toOpenAI);
      const request = () =>
        client.chat.completions.create(
          {
            model,
            messages: prompt(),
            stream: true,
            ...(withTools ? { tools: offered.map((fn) => ({ type: 'function' as const, function: fn })) } : {}),
            ...(withUsage ? { stream_options: { include_usage: true } } : {}),
          },
          { signal },
        );
      let stream: Awaited<ReturnType<typeof request>>;
      // Each refused option is dropped, then the request is sent again without it.
      for (;;) {
        try {
          stream = await request();
          break;
        } catch (err) {
          const refused = refusalIn(err, {
            tools: withTools,
            toolChoice: withTools ? 'auto' : undefined,
            streamUsage: withUsage,
          });
          if (refused === 'tools' || refused === 'autoToolChoice') {
            caps.refuse(refused, reasonOf(err));
            withTools = false;
          } else if (refused === 'streamUsage') {
            caps.refuse(refused, reasonOf(err));
            withUsage = false;
          } else if (withTools && isToolUseFailure(err)) {
            // The model wrote a tool call its server could not read: this answer goes without tools.
            withTools = false;
          } else throw err;
        }
      }
      // The SDK's timeout ends when the reply starts; a model that then goes quiet is cut off here.
      let idle = false;
      let timer: NodeJS.Timeout | undefined;
      const watch = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          idle = true;
          stream.controller.abort();
        }, config.timeoutMs);
      };
      watch();
      const calls = new ToolCallAssembler();
      const splitter = new ThinkSplitter(caps.refuses('thinkWithoutOpening'));
      let reasoning: LlmReasoning | null = null;
      let usage: LlmUsage | null = null;
      const keep = (field: LlmReasoning['field'], text: string) => {
        if (!text) return;
        if (reasoning) reasoning.text += text;
        else reasoning = { field, text };
      };
      try {
        for await (const chunk of stream) {
          watch();
          const read = readChunk(chunk);
          if (read.error) throw Object.assign(new Error(read.error), { name: 'ProviderError' });
          // Servers that send usage in every chunk send the running total: the last one counts.
          usage = read.usage ?? usage;
          if (read.reasoning) keep(read.reasoning.field, read.reasoning.text);
          calls.add(read.toolCalls);
          const split = splitter.push(read.text);
          if (split.reset) {
            caps.refuse('thinkWithoutOpening', 'a </think> came without <think>');
            options.onReset?.();
          }
          keep('think', split.reasoning);
          const text = withoutNul(split.text);
          if (text) yield text;
        }
      } finally {
        clearTimeout(timer);
      }
      if (idle) throw new ModelIdleError(config.timeoutMs);
      const rest = splitter.end();
      keep('think', rest.reasoning);
      if (rest.text) yield withoutNul(rest.text);
      if (usage) options.onUsage?.(usage);
      if (reasoning) options.onReasoning?.(reasoning);
      for (const call of calls.done()) options.onToolCall?.({ ...call, arguments: jsonWithoutNul(call.arguments) });
    },

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
