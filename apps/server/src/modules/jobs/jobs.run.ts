// One run of a job: its handler with a signal, a deadline (expireInSeconds), and its outcome written
// (completed, failed, failed for good, or back to the queue when the process is shutting down).
import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import { JobExpiredError, JobsStoppingError, PermanentJobError } from './jobs.errors.ts';
import { errorOutput } from './jobs.output.ts';
import type { Queue } from './jobs.queues.ts';
import type { JobsRepo } from './jobs.repo.ts';

/** A run in progress, as stop() sees it. */
export interface Run {
  name: string;
  id: string;
  controller: AbortController;
  /** Its outcome is being written. */
  settling: boolean;
  /** stop() gave up waiting for the handler (and puts the job back itself). */
  abandon(): void;
  done: Promise<void>;
}

export interface JobRunnerDeps {
  boss: PgBoss;
  repo: JobsRepo;
  log: FastifyBaseLogger;
  /** Each failed run, by queue (for /metrics); `final` when the job will not run again. */
  onRunFailed?: (queue: string, final: boolean) => void;
  /** False once the module is stopping: a job fetched then goes back at once. */
  isStarted(): boolean;
}

export function createJobRunner(deps: JobRunnerDeps) {
  const { boss, repo, log, onRunFailed, isStarted } = deps;
  const active = new Set<Run>();

  /** Back to the queue, to run again soon; the interrupted run does not count as a retry. */
  async function requeue(name: string, id: string) {
    try {
      await repo.requeue(name, id);
    } catch (err) {
      // E.g. a `stately` queue already holding a waiting job of this key: fail it (retried if it may be).
      log.warn({ err, queue: name, jobId: id }, 'could not put an interrupted job back; failing it');
      await boss.fail(name, id, { message: 'interrupted by a shutdown' });
    }
  }

  /** Failed for good: pg-boss retries while retry_count < retry_limit, so the limit is lowered first. */
  async function failPermanently(name: string, id: string, err: unknown) {
    await repo.endRetries(name, id);
    await boss.fail(name, id, errorOutput(err));
  }

  async function run(q: Queue, job: PgBoss.JobWithMetadata<unknown>) {
    if (!isStarted()) {
      // Fetched while stopping.
      await requeue(q.name, job.id).catch((err: unknown) =>
        log.error({ err, queue: q.name, jobId: job.id }, 'could not put a job back at shutdown'),
      );
      return;
    }
    const controller = new AbortController();
    let abandon = () => {};
    let finish = () => {};
    const r: Run = {
      name: q.name,
      id: job.id,
      controller,
      settling: false,
      abandon: () => abandon(),
      done: new Promise<void>((resolve) => {
        finish = resolve;
      }),
    };
    active.add(r);
    const expireMs = Number(job.expireInSeconds) * 1000;
    let timer: NodeJS.Timeout | undefined;
    try {
      type Outcome = { ok: true } | { ok: false; error: unknown } | { abandoned: true };
      const outcome = await Promise.race<Outcome>([
        Promise.resolve()
          .then(() =>
            q.handler(
              {
                id: job.id,
                data: job.data,
                retryCount: job.retryCount,
                retryLimit: job.retryLimit,
                signal: controller.signal,
              },
              job.output,
            ),
          )
          .then(
            () => ({ ok: true }),
            (error: unknown) => ({ ok: false, error }),
          ),
        new Promise<Outcome>((resolve) => {
          timer = setTimeout(() => {
            const error = new JobExpiredError(`The job ran longer than ${expireMs / 1000} s.`);
            controller.abort(error);
            resolve({ ok: false, error });
          }, expireMs);
        }),
        new Promise<Outcome>((resolve) => {
          abandon = () => resolve({ abandoned: true });
        }),
      ]);
      clearTimeout(timer);
      if ('abandoned' in outcome) return;
      r.settling = true;
      const context = { queue: q.name, jobId: job.id, retryCount: job.retryCount };
      if (outcome.ok) {
        await boss.complete(q.name, job.id);
      } else if (outcome.error instanceof PermanentJobError) {
        log.warn({ ...context, err: outcome.error }, 'job failed (not retried)');
        onRunFailed?.(q.name, true);
        await failPermanently(q.name, job.id, outcome.error);
      } else if (controller.signal.reason instanceof JobsStoppingError) {
        await requeue(q.name, job.id);
      } else {
        log.warn({ ...context, err: outcome.error }, 'job failed');
        onRunFailed?.(q.name, job.retryCount >= job.retryLimit);
        await boss.fail(q.name, job.id, errorOutput(outcome.error));
      }
    } catch (err) {
      log.error({ err, queue: q.name, jobId: job.id }, "could not record a job's outcome");
    } finally {
      clearTimeout(timer);
      active.delete(r);
      finish();
    }
  }

  return {
    run,
    requeue,

    /** The runs in progress now. */
    running: (): Run[] => [...active],

    /** Runs a previous process left active, failed (so retried if they may be) rather than left to expire. */
    async failInterrupted() {
      for (const { name, id } of await repo.activeJobs()) {
        log.warn({ queue: name, jobId: id }, 'job interrupted when Daybook last stopped');
        await boss.fail(name, id, { message: 'Daybook stopped while this job ran.' });
      }
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
