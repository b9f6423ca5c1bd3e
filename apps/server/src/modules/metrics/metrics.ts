// Prometheus metrics for /metrics. Each app has a registry of its own (never prom-client's global
// one), so several apps in one process (the tests) never share or clash over a metric. Labels are
// bounded sets (route patterns, queue names, outcomes): never ids, URLs or anything a user wrote.
// The HTTP, chat, model and jobs metrics are factories of their own (metrics.*.ts); this puts them
// on one registry.
import client from 'prom-client';
import { createChatMetrics } from './metrics.chat.ts';
import { createHttpMetrics } from './metrics.http.ts';
import { createJobMetrics } from './metrics.jobs.ts';
import { createLlmMetrics } from './metrics.llm.ts';

export type { TurnOutcome } from './metrics.chat.ts';
export { UNMATCHED } from './metrics.http.ts';
export type { QueueCounts } from './metrics.jobs.ts';
export { type ModelOperation, modelErrorKind } from './metrics.llm.ts';

export function createMetrics() {
  const registry = new client.Registry();
  const registers = [registry];
  client.collectDefaultMetrics({ register: registry, prefix: 'daybook_' });

  // Created in the order the exposition lists them.
  const http = createHttpMetrics(registers);
  const chat = createChatMetrics(registers);
  const llm = createLlmMetrics(registers);
  const jobs = createJobMetrics(registers);

  return {
    contentType: registry.contentType,
    /** The text exposition format of every metric. */
    render: () => registry.metrics(),
    // httpRequest.
    ...http,
    // collectSockets, chatTurn.
    ...chat,
    // collectJobs, jobFailed, dailyDelivered.
    ...jobs,
    // instrumentLlm, countPurpose.
    ...llm,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
