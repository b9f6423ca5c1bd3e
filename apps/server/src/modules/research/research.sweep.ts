// The sweeper: takes over researches a crash or restart interrupted, restarts queued ones whose job
// went missing, and posts outcomes a crash kept from the chat.
import { FAILURES } from './research.failures.ts';
import type { ResearchRepo, ResearchRow } from './research.repo.ts';
import { MAX_ATTEMPTS } from './research.retry.ts';

export function createSweeper(deps: {
  repo: Pick<ResearchRepo, 'stale' | 'requeue' | 'byId' | 'nextInLine' | 'undelivered'>;
  /** Starts the job that runs research `id`. */
  enqueue: (id: number) => Promise<void>;
  show: (row: ResearchRow) => void;
  deliver: (row: ResearchRow) => Promise<void>;
  fail: (id: number, error: string) => Promise<unknown>;
  /** A running research unmarked this long was interrupted. */
  staleSec: number;
}) {
  const { repo, show, deliver, fail, staleSec } = deps;
  // A sweep right after start takes over queued researches at once; later sweeps leave the ones
  // just queued to their own job.
  let swept = false;

  /**
   * Finds researches a crash or restart interrupted (their worker stopped marking them) and
   * queued ones whose job is missing, and starts them again, or ends them failed after
   * MAX_ATTEMPTS runs. Workers run it at start and every minute.
   */
  return async function sweep(): Promise<void> {
    for (const row of await repo.stale(staleSec)) {
      if (row.attempts >= MAX_ATTEMPTS) await fail(row.id, FAILURES.interrupted);
      else {
        await repo.requeue(row.id);
        const queued = await repo.byId(row.id);
        if (queued) show(queued);
      }
    }
    for (const next of await repo.nextInLine(staleSec, swept ? 60 : 0)) await deps.enqueue(next.id);
    // Ended, but a crash came before the outcome reached the chat.
    for (const row of await repo.undelivered(30)) await deliver(row);
    swept = true;
  };
}
