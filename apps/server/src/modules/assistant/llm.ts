// The model, through the openai SDK: any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio).
import OpenAI from 'openai';
import type { Config } from '../../config.ts';
import { nodeFetch } from './node-fetch.ts';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface Llm {
  model: string;
  /** The reply, piece by piece, as the model generates it. */
  stream(messages: LlmMessage[], signal?: AbortSignal): AsyncIterable<string>;
  /**
   * Makes the model call the one tool `name` and returns the arguments it passed (JSON text). A model
   * that answers in prose instead gets that text back, for the caller's tolerant parsing.
   */
  callTool(
    messages: LlmMessage[],
    tool: { name: string; description: string; parameters: Record<string, unknown> },
    signal?: AbortSignal,
  ): Promise<string>;
}

export function createLlm(config: Config['llm']): Llm | null {
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
  return {
    model,
    async *stream(messages, signal) {
      const stream = await client.chat.completions.create({ model, messages, stream: true }, { signal });
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
      try {
        for await (const chunk of stream) {
          watch();
          const text = chunk.choices[0]?.delta?.content;
          if (text) yield text;
        }
      } finally {
        clearTimeout(timer);
      }
      if (idle) throw new Error(`the model sent nothing for ${config.timeoutMs} ms`);
    },
    async callTool(messages, tool, signal) {
      const res = await client.chat.completions.create(
        {
          model,
          messages,
          tools: [{ type: 'function', function: tool }],
          tool_choice: { type: 'function', function: { name: tool.name } },
        },
        { signal },
      );
      const message = res.choices[0]?.message;
      const call = message?.tool_calls?.find((c) => c.type === 'function' && c.function.name === tool.name);
      return call && call.type === 'function' ? call.function.arguments : (message?.content ?? '');
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
