// After a run failed: back in the queue at shutdown, again later when a retry may help, else ended
// visibly.
import type { FastifyBaseLogger } from 'fastify';
import { modelFailure } from '../model/model.errors.ts';
import { FAILURES, isRetryable, ResearchFailure } from './research.failures.ts';
import type { ResearchRepo, ResearchRow } from './research.repo.ts';

/** Runs of one research: the first, and two more after a crash or a failure a retry can help with. */
export const MAX_ATTEMPTS = 3;
export const RETRY_BASE_MS = 30_000;

export function createRetries(deps: {
  repo: Pick<ResearchRepo, 'requeue' | 'byId'>;
  /** Starts the job that runs research `id` (after `delayMs`). */
  enqueue: (id: number, delayMs?: number) => Promise<void>;
  show: (row: ResearchRow) => void;
  fail: (id: number, error: string) => Promise<unknown>;
  log: FastifyBaseLogger;
  /** The first retry's delay after a failure a retry can help with; doubled for the next. */
  retryBaseMs: number;
}) {
  const { repo, show, fail, log, retryBaseMs } = deps;

  /**
   * A run that failed: back in the queue at shutdown or for a retry that may help, else ended
   * visibly. True when the user's next research is to start now.
   */
  return async function settleFailure(row: ResearchRow, err: unknown, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) {
      if ((signal.reason as Error | undefined)?.name === 'JobExpiredError') {
        await fail(row.id, FAILURES.tooLong);
        return true;
      }
      // Shutting down: back in the queue; the next start (or another worker) takes it over.
      await repo.requeue(row.id);
      return false;
    }
    const failure = err instanceof ResearchFailure ? err : new ResearchFailure(FAILURES.unexpected, isRetryable(err));
    if (!(err instanceof ResearchFailure)) log.error({ err: modelFailure(err) }, 'research failed unexpectedly');
    if (failure.retryable && row.attempts < MAX_ATTEMPTS) {
      const delayMs = retryBaseMs * 2 ** (row.attempts - 1);
      await repo.requeue(row.id, delayMs);
      await deps.enqueue(row.id, delayMs);
      const queued = await repo.byId(row.id);
      if (queued) show(queued);
      return false;
    }
    await fail(row.id, failure.message);
    return true;
  };
}
export type Retries = ReturnType<typeof createRetries>;
