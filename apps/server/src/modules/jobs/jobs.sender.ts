// Putting jobs on the queues: one (also from inside a transaction), many at once, or on a cron
// schedule; and looking a job up afterwards.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import { createInFlight } from '../../lib/in-flight.ts';
import { errorMessage } from './jobs.output.ts';
import type { JobQueues } from './jobs.queues.ts';
import type { JobsRepo } from './jobs.repo.ts';
import type { JobInfo, SendOptions } from './jobs.types.ts';

export interface JobSenderDeps {
  boss: PgBoss;
  repo: JobsRepo;
  log: FastifyBaseLogger;
  queues: Pick<JobQueues, 'get'>;
  /** A job was stored on `name`: this process's idle workers of that queue look now. */
  wake(name: string): void;
  /** Throws unless the module has started (`what` names the call). */
  assertStarted(what: string): void;
}

export function createJobSender(deps: JobSenderDeps) {
  const { boss, repo, log, queues, wake, assertStarted } = deps;
  /** Jobs sent in a transaction on the embedded database, stored once it ends. */
  const deferred = createInFlight();

  /** On PGlite, a statement from inside a Prisma transaction would wait for that very transaction. */
  function assertNotInTransaction(what: string) {
    if (repo.inTransaction())
      throw new Error(
        `jobs.${what}() cannot run inside a database transaction on the embedded database: call it after the transaction.`,
      );
  }

  return {
    /**
     * Stores a job; resolves with its id, or null when the queue's policy refused it. A job is never
     * part of the caller's transaction: sent inside `prisma.$transaction` it stays when that rolls back.
     * On PostgreSQL it is stored at once (on its own connection), so a handler may run before the
     * transaction commits: send after the commit when the handler reads what the transaction writes.
     * On the embedded database (one connection, one transaction at a time) it is stored right after
     * the transaction ends, and send() resolves at once with the id it will have.
     */
    async send<T>(name: string, data: T, options: SendOptions = {}): Promise<string | null> {
      assertStarted('send');
      queues.get(name);
      const sendOptions: PgBoss.SendOptions = {
        ...(options.singletonKey !== undefined ? { singletonKey: options.singletonKey } : {}),
        ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
      };
      if (repo.inTransaction()) {
        const id = randomUUID();
        deferred.track(
          boss.send(name, data as object, { ...sendOptions, id }).then(
            (stored) => {
              if (stored) wake(name);
              else log.warn({ queue: name, jobId: id }, "the queue's policy refused a job sent in a transaction");
            },
            (err: unknown) => log.error({ err, queue: name, jobId: id }, 'could not store a job sent in a transaction'),
          ),
        );
        return id;
      }
      const id = await boss.send(name, data as object, sendOptions);
      if (id) wake(name);
      return id;
    },

    /**
     * Sends many jobs to the queue `name` in one statement (a schedule's fan-out): far fewer round
     * trips than a send each. Jobs the queue's policy refuses are left out. Not inside a transaction.
     */
    async sendMany<T>(name: string, jobs: Array<{ data: T; singletonKey?: string }>): Promise<void> {
      assertStarted('sendMany');
      assertNotInTransaction('sendMany');
      queues.get(name);
      if (!jobs.length) return;
      await boss.insert(
        jobs.map((j) => ({
          name,
          data: j.data as object,
          ...(j.singletonKey !== undefined ? { singletonKey: j.singletonKey } : {}),
        })),
      );
      wake(name);
    },

    /**
     * Sends `data` to the queue `name` on a cron schedule (5 fields, in `tz`, default UTC), from a
     * worker process; one schedule per queue, replaced by the next call.
     */
    async schedule(name: string, cron: string, data: object = {}, options: { tz?: string } = {}): Promise<void> {
      assertStarted('schedule');
      assertNotInTransaction('schedule');
      queues.get(name);
      await boss.schedule(name, cron, data, { tz: options.tz ?? 'UTC' });
    },

    async unschedule(name: string): Promise<void> {
      assertStarted('unschedule');
      assertNotInTransaction('unschedule');
      await boss.unschedule(name);
    },

    /** A job's state, also after it was archived; null when unknown. */
    async getJob(name: string, id: string): Promise<JobInfo | null> {
      assertStarted('getJob');
      assertNotInTransaction('getJob');
      const job = await boss.getJobById<unknown>(name, id, { includeArchive: true });
      if (!job) return null;
      const error = job.state === 'retry' || job.state === 'failed' ? errorMessage(job.output) : undefined;
      return {
        id: job.id,
        state: job.state,
        retryCount: job.retryCount,
        retryLimit: job.retryLimit,
        startAfter: new Date(job.startAfter),
        ...(error ? { error } : {}),
      };
    },

    /** Waits (at most `graceMs`) for the jobs sent in a transaction to be stored; returns how many are not. */
    drain: (graceMs: number) => deferred.drain(graceMs),
  };
}
