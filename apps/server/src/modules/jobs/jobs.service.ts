// Background jobs: one module owns the queues, the workers, the schedules and their shutdown, on
// pg-boss over the database Daybook already has (PostgreSQL, or the embedded PGlite through its one
// connection). pg-boss 11 and later need Node 22.12+; the project runs on Node 20.19, so this is the
// newest major that does: 10.x.
//
// pg-boss stores the jobs; the fetch loop is ours (on pg-boss's fetch, complete and fail) so that every
// outcome is written before stop() returns, a run interrupted by a shutdown goes back to the queue
// without using up a retry, and a handler can end its job failed without retries.
//
// The parts: the connection and our own statements (jobs.repo.ts), pg-boss (jobs.boss.ts), the queues
// (jobs.queues.ts), one run (jobs.run.ts), the loops that fetch and run (jobs.workers.ts) and sending
// (jobs.sender.ts); this file starts and stops them in order.
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/database.ts';
import { createBoss } from './jobs.boss.ts';
import { createJobQueues, type RunHandler } from './jobs.queues.ts';
import { createJobsRepo } from './jobs.repo.ts';
import { createJobRunner } from './jobs.run.ts';
import { createJobSender } from './jobs.sender.ts';
import type { FailedJob, JobHandler, QueueOptions } from './jobs.types.ts';
import { createJobWorkers } from './jobs.workers.ts';

export { JobExpiredError, JobsStoppingError, PermanentJobError } from './jobs.errors.ts';
export { PGBOSS_SEND_IT } from './jobs.queues.ts';
export type {
  FailedJob,
  JobContext,
  JobHandler,
  JobInfo,
  JobState,
  QueueOptions,
  QueuePolicy,
  SendOptions,
} from './jobs.types.ts';

export interface JobsDeps {
  db: Database;
  /** Off: this process creates queues and sends jobs, and another one runs them. */
  runWorkers: boolean;
  log: FastifyBaseLogger;
  /** How often an idle worker asks for a job (default 2, at least 0.5); a local send wakes it at once. */
  pollingIntervalSeconds?: number;
  /** How often runs whose process died are found (expired) and old jobs archived (default 60). */
  maintenanceIntervalSeconds?: number;
  /** How often schedules are checked (default 10) and their jobs sent (default 2). */
  cronIntervalSeconds?: number;
  /** How long stop() lets handlers finish after aborting their signals (default 2000). */
  stopGraceMs?: number;
  /**
   * No other process can run this database's jobs (the embedded database is locked to one): runs a
   * previous process left active are failed at start (so retried if they may be), not once they expire.
   */
  soleWorker?: boolean;
  /** Each failed run, by queue (for /metrics); `final` when the job will not run again. */
  onRunFailed?: (queue: string, final: boolean) => void;
}

export function createJobs(deps: JobsDeps) {
  const { db, runWorkers, log } = deps;
  const pollingMs = Math.max(0.5, deps.pollingIntervalSeconds ?? 2) * 1000;
  const graceMs = deps.stopGraceMs ?? 2000;
  let state: 'new' | 'starting' | 'started' | 'failed' | 'stopping' | 'stopped' = 'new';
  let startError: unknown;
  let started: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  const isStarted = () => state === 'started';

  function assertStarted(what: string) {
    if (state === 'failed')
      throw new Error(
        `Background jobs are not running: ${startError instanceof Error ? startError.message : startError}`,
      );
    if (state !== 'started') throw new Error(`jobs.${what}() needs a started jobs module (it is ${state}).`);
  }

  const repo = createJobsRepo({ db, log });
  const boss = createBoss({
    executeSql: repo.executeSql,
    runWorkers,
    log,
    maintenanceIntervalSeconds: deps.maintenanceIntervalSeconds,
    cronIntervalSeconds: deps.cronIntervalSeconds,
  });
  const queues = createJobQueues({ boss, repo, log });
  const runner = createJobRunner({ boss, repo, log, onRunFailed: deps.onRunFailed, isStarted });
  const workers = createJobWorkers({ boss, log, runner, pollingMs, isStarted });
  const sender = createJobSender({ boss, repo, log, queues, wake: workers.wake, assertStarted });

  return {
    runWorkers,

    /** `started` once start() succeeded; `failed` when it could not (send() then says why). */
    get state() {
      return state;
    },

    /**
     * A queue and its handler, before start(). Every process defines its queues (start() creates
     * them); only a process with workers runs the handler.
     */
    define<T>(name: string, options: QueueOptions, handler: JobHandler<T>): void {
      if (state !== 'new') throw new Error(`jobs.define("${name}") must come before jobs.start().`);
      queues.define(name, options, handler as RunHandler);
    },

    /**
     * Called once for each of the queue's jobs that will not run again (retries used up, failed for
     * good, or expired after its process died), so its owner can show the failure. Runs in worker
     * processes, through a dead-letter queue: a handler that throws is called again.
     */
    onFailed<T>(name: string, handler: (job: FailedJob<T>) => Promise<void>): void {
      if (state !== 'new') throw new Error(`jobs.onFailed("${name}") must come before jobs.start().`);
      queues.onFailed(name, handler as (job: FailedJob<unknown>) => Promise<void>);
    },

    /** Creates pg-boss's tables and the queues, then runs the workers (when this process has them). */
    start(): Promise<void> {
      if (state !== 'new') throw new Error(`jobs.start() called when already ${state}.`);
      state = 'starting';
      started = (async () => {
        try {
          await boss.start();
          await queues.setUp(runWorkers);
          if (runWorkers && deps.soleWorker) await runner.failInterrupted();
        } catch (err) {
          state = 'failed';
          startError = err;
          throw err;
        }
        state = 'started';
        if (runWorkers) workers.start(queues.withDeadLetters());
      })();
      return started;
    },

    send: sender.send,
    sendMany: sender.sendMany,
    schedule: sender.schedule,
    unschedule: sender.unschedule,

    /**
     * Jobs waiting (new or to be retried) and running in each of the queues (dead-letter ones
     * included), in one query; empty until started.
     */
    async counts(): Promise<Array<{ queue: string; waiting: number; active: number }>> {
      if (state !== 'started') return [];
      return queues.counts();
    },

    getJob: sender.getJob,

    /**
     * Stops taking jobs, aborts the running handlers' signals and waits for them (stopGraceMs); a
     * job whose handler threw because of it, or is still running, goes back to its queue. Then stops
     * pg-boss. Call before the database closes.
     */
    stop(): Promise<void> {
      stopped ??= (async () => {
        await started?.catch(() => {});
        state = 'stopping';
        await workers.stop(graceMs);
        const left = await sender.drain(graceMs);
        if (left) log.warn(`${left} job(s) sent in a transaction still not stored at shutdown`);
        // Without a started pg-boss this does nothing.
        await boss.stop({ graceful: true, wait: true, timeout: 1000, close: false });
        await repo.close(graceMs);
        state = 'stopped';
        await repo.end();
      })();
      return stopped;
    },
  };
}

export type Jobs = ReturnType<typeof createJobs>;
