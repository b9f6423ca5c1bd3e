// The model's metrics: calls, time, tokens (when the endpoint reports them) and errors by kind, by
// operation; instrumentLlm wraps an Llm so every call is counted.
import OpenAI from 'openai';
import client from 'prom-client';
import { ModelIdleError, ModelOutputError } from '../model/model.errors.ts';
import type { Llm, LlmUsage } from '../model/model.types.ts';

/** The model calls: a chat answer (streamed), a tool call (memory extraction, research, daily messages), embeddings. */
export type ModelOperation = 'chat' | 'tool' | 'embed';

/** A failed model call's kind: a small fixed set, never the provider's message (it can echo the prompt). */
export function modelErrorKind(err: unknown): string {
  if (err instanceof OpenAI.APIUserAbortError || (err as Error | undefined)?.name === 'AbortError') return 'aborted';
  if (err instanceof OpenAI.APIConnectionTimeoutError) return 'timeout';
  if (err instanceof OpenAI.APIConnectionError) return 'connection';
  const status = (err as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number') {
    if (status === 429) return 'rate_limited';
    if (status === 401 || status === 403) return 'auth';
    return status >= 500 ? 'server' : 'request';
  }
  if (err instanceof ModelIdleError) return 'timeout';
  // The model answered, but never in a usable form (model.structured.ts).
  if (err instanceof ModelOutputError) return 'output';
  return 'other';
}

/** A call's tokens on a counter with a `type` label: prompt, completion, and cached when reported. */
function countTokens<L extends string>(counter: client.Counter<L>, labels: client.LabelValues<L>, usage: LlmUsage) {
  const inc = (type: string, n: number) => counter.inc({ ...labels, type } as client.LabelValues<L>, n);
  inc('prompt', usage.prompt);
  inc('completion', usage.completion);
  if (usage.cached !== undefined) inc('cached', usage.cached);
}

export function createLlmMetrics(registers: client.Registry[]) {
  const modelCalls = new client.Counter({
    name: 'daybook_model_calls_total',
    help: 'Calls to the model, by operation (chat, tool, embed).',
    labelNames: ['operation'] as const,
    registers,
  });
  const modelSeconds = new client.Histogram({
    name: 'daybook_model_call_duration_seconds',
    help: 'Model calls from request to last piece, by operation.',
    labelNames: ['operation'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers,
  });
  const modelTokens = new client.Counter({
    name: 'daybook_model_tokens_total',
    help: 'Tokens spent, as the endpoint reports them, by operation and type (prompt, completion; cached: the prompt tokens the endpoint had cached, when it says).',
    labelNames: ['operation', 'type'] as const,
    registers,
  });
  const purposeTokens = new client.Counter({
    name: 'daybook_model_purpose_tokens_total',
    help: 'Tokens spent, as the endpoint reports them, by purpose (chat, learning, research, daily) and type (prompt, cached, completion).',
    labelNames: ['purpose', 'type'] as const,
    registers,
  });
  const modelErrors = new client.Counter({
    name: 'daybook_model_errors_total',
    help: 'Failed model calls, by operation and kind (timeout, connection, rate_limited, auth, server, request, aborted, other).',
    labelNames: ['operation', 'kind'] as const,
    registers,
  });

  function timed(operation: ModelOperation) {
    modelCalls.inc({ operation });
    const end = modelSeconds.startTimer({ operation });
    return {
      usage: (usage: LlmUsage) => {
        countTokens(modelTokens, { operation }, usage);
      },
      failed: (err: unknown) => modelErrors.inc({ operation, kind: modelErrorKind(err) }),
      done: () => end(),
    };
  }

  return {
    /** One call's tokens, by its purpose (see model/model.usage.ts). */
    countPurpose(purpose: string, usage: LlmUsage) {
      countTokens(purposeTokens, { purpose }, usage);
    },
    /** The model, counted: calls, time, tokens (when the endpoint reports them) and errors by kind. */
    instrumentLlm(llm: Llm): Llm {
      const counted: Llm = {
        model: llm.model,
        async *stream(messages, signal, options = {}) {
          const call = timed('chat');
          try {
            yield* llm.stream(messages, signal, {
              ...options,
              onUsage: (usage) => {
                call.usage(usage);
                options.onUsage?.(usage);
              },
            });
          } catch (err) {
            call.failed(err);
            throw err;
          } finally {
            // Also when the caller stops reading early.
            call.done();
          }
        },
        async structured(request) {
          const call = timed('tool');
          try {
            return await llm.structured({
              ...request,
              onUsage: (usage) => {
                call.usage(usage);
                request.onUsage?.(usage);
              },
            });
          } catch (err) {
            call.failed(err);
            throw err;
          } finally {
            call.done();
          }
        },
        refuses: (capability) => llm.refuses(capability),
        refusals: () => llm.refusals(),
      };
      const embed = llm.embed;
      if (embed) {
        counted.embed = async (texts, signal) => {
          const call = timed('embed');
          try {
            const vectors = await embed(texts, signal);
            return vectors;
          } catch (err) {
            call.failed(err);
            throw err;
          } finally {
            call.done();
          }
        };
      }
      return counted;
    },
  };
}
