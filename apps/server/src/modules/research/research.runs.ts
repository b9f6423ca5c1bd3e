// A research's runs: the job claims it (one run at a time per user), keeps it marked alive, records
// its steps and settles a failure (research.retry.ts); then the user's next research starts. A
// cancel stops this process's runs of it.
import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { FAILURES } from './research.failures.ts';
import type { Pipeline } from './research.pipeline.ts';
import type { ResearchProgress, ResearchRepo, ResearchRow, ResearchStep } from './research.repo.ts';
import { MAX_ATTEMPTS, type Retries } from './research.retry.ts';

export function createRuns(deps: {
  repo: Pick<ResearchRepo, 'claim' | 'heartbeat' | 'step' | 'nextOf'>;
  pipeline: Pipeline;
  /** Settles a failed run; true when the user's next research is to start now. */
  settleFailure: Retries;
  /** Starts the job that runs research `id`. */
  enqueue: (id: number) => Promise<void>;
  show: (row: ResearchRow) => void;
  fail: (id: number, error: string) => Promise<unknown>;
  log: FastifyBaseLogger;
  /** A running research unmarked this long was interrupted. */
  staleSec: number;
  heartbeatMs: number;
}) {
  const { repo, show, fail, log, staleSec, heartbeatMs, settleFailure } = deps;
  /** This process's runs, by research (a job delivered twice is two): a cancel aborts them here. */
  const runs = new Map<number, Set<AbortController>>();

  /** Runs a claimed research to its end, or until this run no longer owns it (`released`). */
  async function runClaimed(row: ResearchRow, signal: AbortSignal, released: AbortController) {
    show(row);
    const beat = setInterval(() => {
      repo
        .heartbeat(row.id, row.attempts)
        .then((mine) => {
          if (!mine) released.abort(new Error('no longer this run'));
        })
        .catch((err) => log.warn({ err }, 'research heartbeat failed'));
    }, heartbeatMs);
    const runSignal = AbortSignal.any([signal, released.signal]);
    // Every page read, search and model call of the run listens to it: 15 pages are not a leak.
    setMaxListeners(100, runSignal);
    // Steps are recorded one after another, so the card never goes back to a step already passed.
    let steps = Promise.resolve();
    const step = (stage: ResearchStep, progress: ResearchProgress) => {
      steps = steps
        .then(() => repo.step(row.id, row.attempts, stage, progress))
        .then((moved) => {
          if (moved) show(moved);
          else released.abort(new Error('no longer this run'));
        })
        .catch((err) => log.warn({ err }, 'could not record a research step'));
      return steps;
    };
    let next = true;
    try {
      await deps.pipeline(row, runSignal, step);
    } catch (err) {
      next = released.signal.aborted ? false : await settleFailure(row, err, signal);
    } finally {
      clearInterval(beat);
      await steps;
      if (next) await startNext(row.userId).catch((err) => log.warn({ err }, 'could not start the next research'));
    }
  }

  async function startNext(userId: number) {
    const next = await repo.nextOf(userId);
    if (next) await deps.enqueue(next);
  }

  return {
    startNext,

    /** The job: runs research `id` if it is still to run and it is its user's turn. */
    async run(id: number, signal: AbortSignal): Promise<void> {
      // Aborted when this run no longer owns the research: the user cancelled it, or another worker
      // took it over (this one was too slow to mark it). Whoever did that starts the user's next one.
      // Registered before the claim, so a cancel landing between the claim and the start stops it too.
      const released = new AbortController();
      const mine = runs.get(id) ?? new Set<AbortController>();
      runs.set(id, mine.add(released));
      try {
        const row = await repo.claim(id, staleSec);
        if (!row || released.signal.aborted) return;
        // Taken over once too often (each restart or retry is a run): it ends here, visibly.
        if (row.attempts > MAX_ATTEMPTS) {
          await fail(id, FAILURES.interrupted);
          await startNext(row.userId).catch((err) => log.warn({ err }, 'could not start the next research'));
          return;
        }
        await runClaimed(row, signal, released);
      } finally {
        mine.delete(released);
        if (!mine.size && runs.get(id) === mine) runs.delete(id);
      }
    },

    /** Stops this process's run of a cancelled research (every process hears of a cancel). */
    stopRun(id: number) {
      for (const run of runs.get(id) ?? []) run.abort(new Error('cancelled'));
    },
  };
}
