// The model, through the openai SDK: any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio).
import OpenAI from 'openai';
import type { Config } from '../../config.ts';
import { withoutNul } from '../../lib/text.ts';
import { nodeFetch } from './node-fetch.ts';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A tool call the model made, as it goes back to the model with the tool's result. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The conversation of an answer that used tools: the model's calls, then each result. */
export type LlmTurnMessage =
  | LlmMessage
  | { role: 'assistant'; content: string | null; tool_calls: LlmToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface LlmTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Tokens a call spent, as the endpoint reports them. */
export interface LlmUsage {
  prompt: number;
  completion: number;
}

export interface StreamOptions {
  /** Tools the model may call while it answers; models that cannot call tools answer without them. */
  tools?: LlmTool[];
  /** Each tool call of the answer, once it is complete. */
  onToolCall?: (call: LlmToolCall) => void;
  /** The tokens the answer spent, when the endpoint reports them (asked for only when this is set). */
  onUsage?: (usage: LlmUsage) => void;
}

export interface Llm {
  model: string;
  /** The reply, piece by piece, as the model generates it. */
  stream(messages: LlmTurnMessage[], signal?: AbortSignal, options?: StreamOptions): AsyncIterable<string>;
  /**
   * Makes the model call the one tool `name` and returns the arguments it passed (JSON text). A model
   * that answers in prose instead gets that text back, for the caller's tolerant parsing.
   */
  callTool(
    messages: LlmMessage[],
    tool: LlmTool,
    signal?: AbortSignal,
    onUsage?: (usage: LlmUsage) => void,
  ): Promise<string>;
  /** Vectors for texts, when an embedding model is configured (EMBEDDING_MODEL). */
  embed?: (texts: string[], signal?: AbortSignal) => Promise<number[][]>;
}

/** An endpoint's refusal of the `tools` parameter (Ollama: "... does not support tools"). */
const refusesTools = (err: unknown) => {
  const e = err as { status?: number; message?: string };
  return e?.status === 400 && /tool/i.test(String(e.message ?? ''));
};

/** An endpoint's refusal of `stream_options` (older OpenAI-compatible servers). */
const refusesUsage = (err: unknown) => {
  const e = err as { status?: number; message?: string };
  return e?.status === 400 && /stream_options|include_usage/i.test(String(e.message ?? ''));
};

function toOpenAI(m: LlmTurnMessage): OpenAI.Chat.Completions.ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  if ('tool_calls' in m)
    return {
      role: 'assistant',
      content: m.content,
      tool_calls: m.tool_calls.map((c) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: c.arguments },
      })),
    };
  return m;
}

/**
 * Model output with its NUL characters dropped, raw or JSON-escaped: PostgreSQL text cannot hold
 * them, and every answer, report and daily message is stored.
 */
function jsonWithoutNul(text: string): string {
  return withoutNul(text).replace(/\\u0000/gi, '');
}

export function createLlm(config: Config['llm'], embeddingModel?: string): Llm | null {
  if (!config.model) return null;
  const client = new OpenAI({
    baseURL: config.baseUrl ?? 'https://api.openai.com/v1',
    // Local servers such as Ollama accept any key.
    apiKey: config.apiKey ?? 'not-needed',
    timeout: config.timeoutMs,
    maxRetries: config.maxRetries,
    fetch: nodeFetch,
  });
  const model = config.model;
  // Learned on the first refusal, so later answers do not pay for a failed request.
  let toolsRefused = false;
  let usageRefused = false;
  return {
    model,
    async *stream(messages, signal, options = {}) {
      const tools = toolsRefused ? [] : (options.tools ?? []);
      let withTools = tools.length > 0;
      let withUsage = Boolean(options.onUsage) && !usageRefused;
      const request = () =>
        client.chat.completions.create(
          {
            model,
            messages: messages.map(toOpenAI),
            stream: true,
            ...(withTools ? { tools: tools.map((fn) => ({ type: 'function' as const, function: fn })) } : {}),
            ...(withUsage ? { stream_options: { include_usage: true } } : {}),
          },
          { signal },
        );
      let stream: Awaited<ReturnType<typeof request>>;
      // Each refused option is dropped once, then the request is sent again without it.
      for (;;) {
        try {
          stream = await request();
          break;
        } catch (err) {
          if (withTools && refusesTools(err)) {
            toolsRefused = true;
            withTools = false;
          } else if (withUsage && refusesUsage(err)) {
            usageRefused = true;
            withUsage = false;
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
      // Tool calls arrive in pieces, by index: name first, then the arguments bit by bit.
      const calls = new Map<number, LlmToolCall>();
      try {
        for await (const chunk of stream) {
          watch();
          // With include_usage, the last chunk carries the usage (and no choices).
          if (chunk.usage)
            options.onUsage?.({ prompt: chunk.usage.prompt_tokens, completion: chunk.usage.completion_tokens });
          const delta = chunk.choices[0]?.delta;
          for (const piece of delta?.tool_calls ?? []) {
            const call = calls.get(piece.index) ?? { id: '', name: '', arguments: '' };
            call.id ||= piece.id ?? '';
            call.name += piece.function?.name ?? '';
            call.arguments += piece.function?.arguments ?? '';
            calls.set(piece.index, call);
          }
          const text = delta?.content && withoutNul(delta.content);
          if (text) yield text;
        }
      } finally {
        clearTimeout(timer);
      }
      if (idle) throw new Error(`the model sent nothing for ${config.timeoutMs} ms`);
      for (const [index, call] of calls)
        if (call.name)
          options.onToolCall?.({ ...call, arguments: jsonWithoutNul(call.arguments), id: call.id || `call_${index}` });
    },
    ...(embeddingModel
      ? {
          async embed(texts: string[], signal?: AbortSignal) {
            const res = await client.embeddings.create({ model: embeddingModel, input: texts }, { signal });
            return [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
          },
        }
      : {}),
    async callTool(messages, tool, signal, onUsage) {
      const res = await client.chat.completions.create(
        {
          model,
          messages,
          tools: [{ type: 'function', function: tool }],
          tool_choice: { type: 'function', function: { name: tool.name } },
        },
        { signal },
      );
      if (res.usage) onUsage?.({ prompt: res.usage.prompt_tokens, completion: res.usage.completion_tokens });
      const message = res.choices[0]?.message;
      const call = message?.tool_calls?.find((c) => c.type === 'function' && c.function.name === tool.name);
      return jsonWithoutNul(call && call.type === 'function' ? call.function.arguments : (message?.content ?? ''));
    },
  };
}

/**
 * What a failed model call may log above debug: its kind and status. The provider's error text can
 * echo the prompt (the user's messages and memories), so it is never included.
 */
export function modelFailure(err: unknown): { error: string; status?: number; code?: string } {
  const e = err as { name?: unknown; constructor?: { name?: string }; status?: unknown; code?: unknown };
  const kind = err instanceof Error ? e.constructor?.name || err.name : typeof err;
  return {
    error: kind,
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
  };
}
