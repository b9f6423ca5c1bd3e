// Web research as a service other features call (the chat now, the daily message later): plan
// sub-queries, search, read the pages through the safe fetcher, keep the relevant parts, write a
// cited report, store it and deliver it. The row in `researches` drives everything; a job only says
// "run research N", so a job run twice, a crash or a restart never runs one research twice at once,
// never loses one and never leaves one "running" for ever.
//
// The parts: asking for one (research.requests.ts); the pipeline (research.pipeline.ts) over its
// steps, planning (research.plan.ts), searching (research.search.ts), reading (research.read.ts),
// ranking (research.rank.ts) and writing (research.write.ts); its runs, retries and takeovers
// (research.runs.ts, research.retry.ts, research.sweep.ts); what the chat sees (research.delivery.ts,
// research.present.ts); and why one failed (research.failures.ts). This file ties them together.

import type { TResearch, TResearchCard } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { ChatPostsService } from '../chat/chat.posts.service.ts';
import type { Llm } from '../model/model.types.ts';
import { createDelivery } from './research.delivery.ts';
import { createPipeline } from './research.pipeline.ts';
import { createPlanner } from './research.plan.ts';
import { presentResearch, researchCard } from './research.present.ts';
import { createRanker } from './research.rank.ts';
import { createPageReader, type ExtractPage, type FetchPage } from './research.read.ts';
import type { ResearchRepo } from './research.repo.ts';
import { createRequests } from './research.requests.ts';
import { createRetries, RETRY_BASE_MS } from './research.retry.ts';
import { createRuns } from './research.runs.ts';
import { createWebSearch, type SearchLike } from './research.search.ts';
import { createSweeper } from './research.sweep.ts';
import { createWriter } from './research.write.ts';

export { FAILURES, isRetryable } from './research.failures.ts';
export { presentResearch, reportMessage, researchCard, researchPath } from './research.present.ts';
export { EMPTY_QUERY, RESEARCH_TURNED_OFF, researchLimitReached } from './research.requests.ts';
export { MAX_ATTEMPTS } from './research.retry.ts';
export type { SearchLike } from './research.search.ts';
export { withoutLinks } from './research.write.ts';

export interface ResearchDeps {
  repo: ResearchRepo;
  llm: Llm | null;
  search: SearchLike | null;
  /** What users read when no search provider is configured (whom to ask, not what to set). */
  searchNotConfigured: string;
  /** The SSRF-safe fetcher. */
  fetchPage: FetchPage;
  /** Readable markdown of a page, off the event loop. */
  extract: ExtractPage;
  /** Starts the job that runs research `id` (after `delayMs`). */
  enqueue: (id: number, delayMs?: number) => Promise<void>;
  /** Posts the outcome to the user's chat. */
  chat: Pick<ChatPostsService, 'post'>;
  /** What the user's tabs see of a research asked for in the chat: its card. */
  events: {
    card(userId: number, card: TResearchCard): void;
    /** Tells every process a research was cancelled: the one running it stops (see stopRun). */
    cancelled(id: number): void;
  };
  clock: Clock;
  log: FastifyBaseLogger;
  dailyLimit: number;
  /** A running research unmarked this long was interrupted. */
  staleSec?: number;
  heartbeatMs?: number;
  /** The first retry's delay after a failure a retry can help with; doubled for the next. */
  retryBaseMs?: number;
}

export function createResearchService(deps: ResearchDeps) {
  const { repo, llm, clock, log, events, enqueue } = deps;
  const staleSec = deps.staleSec ?? 90;

  const today = () => clock.now().toISOString().slice(0, 10);

  const { show, deliver, fail } = createDelivery({
    repo,
    chat: deps.chat,
    card: (userId, card) => events.card(userId, card),
  });
  const pipeline = createPipeline({
    repo,
    plan: createPlanner({ llm, log, today }),
    searchAll: createWebSearch({ search: deps.search, searchNotConfigured: deps.searchNotConfigured, log }),
    readPage: createPageReader({ fetchPage: deps.fetchPage, extract: deps.extract, log }),
    rank: createRanker({ llm, repo, log }),
    write: createWriter({ llm, log, today }),
    deliver,
  });
  const settleFailure = createRetries({
    repo,
    enqueue,
    show,
    fail,
    log,
    retryBaseMs: deps.retryBaseMs ?? RETRY_BASE_MS,
  });
  const runs = createRuns({
    repo,
    pipeline,
    settleFailure,
    enqueue,
    show,
    fail,
    log,
    staleSec,
    heartbeatMs: deps.heartbeatMs ?? 20_000,
  });
  const requests = createRequests({
    repo,
    llm,
    search: deps.search,
    searchNotConfigured: deps.searchNotConfigured,
    dailyLimit: deps.dailyLimit,
    enqueue,
    show,
    clock,
    log,
  });

  return {
    unavailable: requests.unavailable,

    /**
     * Asks for a research. Returns it with how many of the user's researches come first, or why it
     * cannot run (no provider, no model, over the daily limit).
     */
    request: requests.request,

    async get(userId: number, id: number): Promise<TResearch | null> {
      const row = await repo.get(userId, id);
      return row ? presentResearch(row) : null;
    },

    /** The job: runs research `id` if it is still to run and it is its user's turn. */
    run: runs.run,

    /**
     * The user cancels a research they asked for in the chat, while it waits or runs: it ends at
     * once (the process running it stops), every tab shows it cancelled, and the chat says so.
     * Nothing happens when it already ended or is not theirs.
     */
    async cancel(userId: number, id: number): Promise<void> {
      const row = await repo.cancel(userId, id);
      if (!row) return;
      events.cancelled(id);
      await deliver(row);
      await runs.startNext(userId).catch((err) => log.warn({ err }, 'could not start the next research'));
    },

    /** Stops this process's run of a cancelled research (every process hears of a cancel). */
    stopRun: runs.stopRun,

    /** The cards of the user's researches asked for in the chat that have not ended, oldest first. */
    async activeCards(userId: number): Promise<TResearchCard[]> {
      return (await repo.active(userId)).map(researchCard);
    },

    /**
     * Finds researches a crash or restart interrupted (their worker stopped marking them) and
     * queued ones whose job is missing, and starts them again, or ends them failed after
     * MAX_ATTEMPTS runs. Workers run it at start and every minute.
     */
    sweep: createSweeper({ repo, enqueue, show, deliver, fail, staleSec }),
  };
}

export type ResearchService = ReturnType<typeof createResearchService>;
