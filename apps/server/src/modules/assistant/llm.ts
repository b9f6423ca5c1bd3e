// The model, through the openai SDK: any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio).
import OpenAI from 'openai';
import type { Config } from '../../config.ts';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface Llm {
  model: string;
  /** The reply, piece by piece, as the model generates it. */
  stream(messages: LlmMessage[], signal?: AbortSignal): AsyncIterable<string>;
  /** A JSON answer following `schema` (structured output); the raw text when the model ignores it. */
  json(messages: LlmMessage[], name: string, schema: Record<string, unknown>, signal?: AbortSignal): Promise<string>;
}

export function createLlm(config: Config['llm']): Llm | null {
  if (!config.model) return null;
  const client = new OpenAI({
    baseURL: config.baseUrl ?? 'https://api.openai.com/v1',
    // Local servers such as Ollama accept any key.
    apiKey: config.apiKey ?? 'not-needed',
    timeout: config.timeoutMs,
    maxRetries: config.maxRetries,
  });
  const model = config.model;
  return {
    model,
    async *stream(messages, signal) {
      const stream = await client.chat.completions.create({ model, messages, stream: true }, { signal });
      for await (const chunk of stream) {
        const text = chunk.choices[0]?.delta?.content;
        if (text) yield text;
      }
    },
    async json(messages, name, schema, signal) {
      const res = await client.chat.completions.create(
        { model, messages, response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } } },
        { signal },
      );
      return res.choices[0]?.message?.content ?? '';
    },
  };
}
