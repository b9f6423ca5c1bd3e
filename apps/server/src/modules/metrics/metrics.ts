// Prometheus metrics for /metrics. Each app has a registry of its own (never prom-client's global
// one), so several apps in one process (the tests) never share or clash over a metric. Labels are
// bounded sets (route patterns, queue names, outcomes): never ids, URLs or anything a user wrote.
import OpenAI from 'openai';
import client from 'prom-client';
import { ModelIdleError, ModelOutputError } from '../model/model.errors.ts';
import type { Llm, LlmUsage } from '../model/model.types.ts';

/** How a chat turn ended: a reply, the model's failure (the user got a notice), no model configured, or a crash. */
export type TurnOutcome = 'answered' | 'model_error' | 'not_configured' | 'error';

/** The model calls: a chat answer (streamed), a tool call (memory extraction, research, daily messages), embeddings. */
export type ModelOperation = 'chat' | 'tool' | 'embed';

/** The route label of requests that matched no route (404s, and client routes of the web app). */
export const UNMATCHED = 'unmatched';

/** Jobs per queue, as the jobs module counts them. */
export interface QueueCounts {
  queue: string;
  waiting: number;
  active: number;
}

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

export function createMetrics() {
  const registry = new client.Registry();
  const registers = [registry];
  client.collectDefaultMetrics({ register: registry, prefix: 'daybook_' });

  const http = new client.Histogram({
    name: 'daybook_http_request_duration_seconds',
    help: 'HTTP requests by route pattern ("unmatched" for no route), method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });

  let sockets: () => number = () => 0;
  new client.Gauge({
    name: 'daybook_chat_open_sockets',
    help: 'Chat WebSockets open in this process.',
    registers,
    collect() {
      this.set(sockets());
    },
  });

  const turns = new client.Counter({
    name: 'daybook_chat_turns_total',
    help: 'Chat turns answered, by outcome (answered, model_error, not_configured, error).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const turnSeconds = new client.Histogram({
    name: 'daybook_chat_turn_duration_seconds',
    help: "Time from a message's turn to its stored answer, by outcome.",
    labelNames: ['outcome'] as const,
    buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers,
  });

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
    help: 'Tokens spent, as the endpoint reports them, by operation and type (prompt, completion).',
    labelNames: ['operation', 'type'] as const,
    registers,
  });
  const modelErrors = new client.Counter({
    name: 'daybook_model_errors_total',
    help: 'Failed model calls, by operation and kind (timeout, connection, rate_limited, auth, server, request, aborted, other).',
    labelNames: ['operation', 'kind'] as const,
    registers,
  });

  let queues: () => Promise<QueueCounts[]> = async () => [];
  // Both gauges are collected at once (prom-client reads every metric concurrently): one query serves
  // both, and a database that does not answer leaves them empty rather than failing the scrape.
  let counting: Promise<QueueCounts[]> | null = null;
  const counts = () => {
    counting ??= queues()
      .catch(() => [])
      .finally(() => {
        counting = null;
      });
    return counting;
  };
  const jobsGauge = (name: string, help: string, pick: (c: QueueCounts) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['queue'] as const,
      registers,
      async collect() {
        const found = await counts();
        this.reset();
        for (const c of found) this.set({ queue: c.queue }, pick(c));
      },
    });
  jobsGauge(
    'daybook_jobs_waiting',
    'Jobs waiting to run (new or to be retried), by queue; read from the database, so the same in every process.',
    (c) => c.waiting,
  );
  jobsGauge(
    'daybook_jobs_active',
    'Jobs running, by queue; read from the database, so the same in every process.',
    (c) => c.active,
  );
  const jobsFailed = new client.Counter({
    name: 'daybook_jobs_failed_total',
    help: 'Job runs that failed in this process, by queue; final="true" when the job will not run again.',
    labelNames: ['queue', 'final'] as const,
    registers,
  });

  const dailyDelivered = new client.Counter({
    name: 'daybook_daily_messages_delivered_total',
    help: 'Daily messages posted to users by this process.',
    registers,
  });

  function timed(operation: ModelOperation) {
    modelCalls.inc({ operation });
    const end = modelSeconds.startTimer({ operation });
    return {
      usage: (usage: LlmUsage) => {
        modelTokens.inc({ operation, type: 'prompt' }, usage.prompt);
        modelTokens.inc({ operation, type: 'completion' }, usage.completion);
      },
      failed: (err: unknown) => modelErrors.inc({ operation, kind: modelErrorKind(err) }),
      done: () => end(),
    };
  }

  return {
    contentType: registry.contentType,
    /** The text exposition format of every metric. */
    render: () => registry.metrics(),

    /** One finished HTTP request; `route` is the route's pattern, never the URL. */
    httpRequest(method: string, route: string | undefined, status: number, seconds: number) {
      http.observe({ method, route: route ?? UNMATCHED, status: String(status) }, seconds);
    },

    /** The open chat sockets, read at each scrape. */
    collectSockets(count: () => number) {
      sockets = count;
    },

    /** Queue depths, read at each scrape. */
    collectJobs(counts: () => Promise<QueueCounts[]>) {
      queues = counts;
    },

    /** Starts timing a chat turn; call the result once with how it ended. */
    chatTurn() {
      const start = performance.now();
      return (outcome: TurnOutcome) => {
        turns.inc({ outcome });
        turnSeconds.observe({ outcome }, (performance.now() - start) / 1000);
      };
    },

    jobFailed(queue: string, final: boolean) {
      jobsFailed.inc({ queue, final: String(final) });
    },

    dailyDelivered() {
      dailyDelivered.inc();
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

export type Metrics = ReturnType<typeof createMetrics>;
