// Background jobs: one module owns the queues, the workers, the schedules and their shutdown, on
// pg-boss over the database Daybook already has (PostgreSQL, or the embedded PGlite through its one
// connection). pg-boss 11 and later need Node 22.12+; the project runs on Node 20.19, so this is the
// newest major that does: 10.x.
//
// pg-boss stores the jobs; the fetch loop is ours (on pg-boss's fetch, complete and fail) so that every
// outcome is written before stop() returns, a run interrupted by a shutdown goes back to the queue
// without using up a retry, and a handler can end its job failed without retries.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Database } from '../../db/database.ts';
import { createInFlight } from '../../lib/in-flight.ts';

export type QueuePolicy = 'standard' | 'singleton' | 'stately' | 'short';

export interface QueueOptions {
  /** Runs after the first that fail (0: none). */
  retryLimit: number;
  /** Seconds before a retry; with `retryBackoff` it doubles at each retry (with jitter). */
  retryDelay: number;
  retryBackoff: boolean;
  /**
   * A run that lasts longer fails (its signal aborts, and it is retried if retries are left); a
   * run whose process died is failed or retried the same way once this has passed.
   */
  expireInSeconds: number;
  /**
   * pg-boss's queue policy (default `standard`). `singleton` and `stately` run one job per
   * `singletonKey` at a time, but pg-boss 10 then holds back the whole queue, other keys too, while
   * the next job's key is busy: for "one per user" with many users, keep `standard` and let the
   * handler claim its work (as the research repo does).
   */
  policy?: QueuePolicy;
  /** How many of this queue's jobs one worker process runs at once (default 1). */
  concurrency?: number;
}

export interface JobContext<T> {
  id: string;
  data: T;
  /** 0 on the first run, 1 on the first retry... */
  retryCount: number;
  retryLimit: number;
  /**
   * Aborted when the process shuts down (throw, e.g. `signal.throwIfAborted()`, and the job runs
   * again later without using up a retry; returning means it is done) or the run outlives
   * `expireInSeconds` (it fails).
   */
  signal: AbortSignal;
}

export type JobHandler<T> = (job: JobContext<T>) => Promise<void>;

/** A job that will not run again: its retries are used up, or it was failed for good. */
export interface FailedJob<T> {
  data: T;
  /** The last run's error message. */
  error: string;
}

export interface SendOptions {
  /** The key the queue's policy counts by (with `short`/`stately`, a refused send returns null). */
  singletonKey?: string;
  /** Not before this time, or this many seconds from now. */
  startAfter?: Date | number;
}

export type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

export interface JobInfo {
  id: string;
  state: JobState;
  retryCount: number;
  retryLimit: number;
  /** When it may run (next). */
  startAfter: Date;
  /** Why the last run failed, for a job in `retry` or `failed`. */
  error?: string;
}

/** Thrown by a handler: the job ends failed now, without the retries left (a retry cannot help). */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** The abort reason of a handler's signal when the process shuts down. */
export class JobsStoppingError extends Error {
  override name = 'JobsStoppingError';
}

/** The abort reason of a handler's signal when its run outlives the queue's `expireInSeconds`. */
export class JobExpiredError extends Error {
  override name = 'JobExpiredError';
}

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

const SCHEMA = 'pgboss';
/** pg-boss's queue for the jobs its schedules send (timekeeper.js), with pg-boss's default settings. */
export const PGBOSS_SEND_IT = '__pgboss__send-it';
const SEND_IT_QUEUE: QueueOptions = { retryLimit: 2, retryDelay: 0, retryBackoff: false, expireInSeconds: 900 };
const FAILED_SUFFIX = '__failed';
// Dead-letter jobs only call the owner's onFailed handler, which is quick.
const FAILED_QUEUE: QueueOptions = { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 300 };

/** A handler as the loop calls it: with the job's stored output too (for dead-letter jobs). */
type RunHandler = (job: JobContext<unknown>, output: unknown) => Promise<void>;

interface Queue {
  name: string;
  options: QueueOptions;
  handler: RunHandler;
  onFailed?: (job: FailedJob<unknown>) => Promise<void>;
}

interface Run {
  name: string;
  id: string;
  controller: AbortController;
  /** Its outcome is being written. */
  settling: boolean;
  /** stop() gave up waiting for the handler (and puts the job back itself). */
  abandon(): void;
  done: Promise<void>;
}

type SqlResult = { rows: unknown[]; rowCount: number | null };

/** Sleepers of one queue, woken early by a local send or by stop(). */
function createWaker() {
  const sleepers = new Set<() => void>();
  return {
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          sleepers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        sleepers.add(done);
      }),
    wake() {
      for (const done of [...sleepers]) done();
    },
  };
}

/** The message of a job's stored output: ours (`{message}`), or pg-boss's (`{value: {message}}`). */
function errorMessage(output: unknown): string | undefined {
  if (!output || typeof output !== 'object') return undefined;
  const o = output as { message?: unknown; value?: { message?: unknown } };
  if (typeof o.message === 'string') return o.message;
  return typeof o.value?.message === 'string' ? o.value.message : undefined;
}

const errorOutput = (err: unknown) =>
  err instanceof Error ? { name: err.name, message: err.message } : { message: String(err) };

/** Tries at setting up one queue when other processes start at the same moment. */
const QUEUE_SETUP_ATTEMPTS = 8;

export function createJobs(deps: JobsDeps) {
  const { db, runWorkers, log } = deps;
  const pollingMs = Math.max(0.5, deps.pollingIntervalSeconds ?? 2) * 1000;
  const graceMs = deps.stopGraceMs ?? 2000;
  const queues = new Map<string, Queue>();
  const wakers = new Map<string, ReturnType<typeof createWaker>>();
  const active = new Set<Run>();
  const loops: Promise<void>[] = [];
  const sql = createInFlight();
  const deferred = createInFlight();
  let state: 'new' | 'starting' | 'started' | 'failed' | 'stopping' | 'stopped' = 'new';
  let startError: unknown;
  let started: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;

  // On PostgreSQL a small pool of its own, so jobs are never part of a caller's transaction.
  const conn = db.jobsConnection;
  let pool: pg.Pool | undefined;
  if (!conn) {
    if (!db.url) throw new Error('The jobs module needs the PostgreSQL connection string (Database.url).');
    pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'daybook-jobs' });
    pool.on('error', (err) => log.warn({ err }, 'job queue connection lost'));
  }
  let closed = false;
  const run = (text: string, values?: unknown[]): Promise<SqlResult> =>
    conn ? conn.executeSql(text, values) : (pool as pg.Pool).query(text, values);
  const executeSql = (text: string, values?: unknown[]) =>
    // Once closed, answers nothing, as pg-boss's own pool does: a late call must not reach a closed database.
    closed ? Promise.resolve(undefined as unknown as SqlResult) : sql.track(run(text, values));

  const boss = new PgBoss({
    db: { executeSql: executeSql as PgBoss.Db['executeSql'] },
    schema: SCHEMA,
    // Expiring runs of dead processes and firing schedules is a worker's job.
    supervise: runWorkers,
    schedule: runWorkers,
    maintenanceIntervalSeconds: deps.maintenanceIntervalSeconds ?? 60,
    // pg-boss's defaults (30 s, 5 s) fire a minute's schedule up to ~45 s late (measured by the
    // daily bench); these bring it under ~14 s for two cheap queries every 10 and 2 s.
    cronMonitorIntervalSeconds: deps.cronIntervalSeconds ?? 10,
    cronWorkerIntervalSeconds: deps.cronIntervalSeconds ?? 2,
  });
  boss.on('error', (err) => log.warn({ err }, 'job queue error'));

  const waker = (name: string) => {
    let w = wakers.get(name);
    if (!w) {
      w = createWaker();
      wakers.set(name, w);
    }
    return w;
  };

  /** On PGlite, a statement from inside a Prisma transaction would wait for that very transaction. */
  function assertNotInTransaction(what: string) {
    if (conn?.inTransaction())
      throw new Error(
        `jobs.${what}() cannot run inside a database transaction on the embedded database: call it after the transaction.`,
      );
  }

  function assertStarted(what: string) {
    if (state === 'failed')
      throw new Error(
        `Background jobs are not running: ${startError instanceof Error ? startError.message : startError}`,
      );
    if (state !== 'started') throw new Error(`jobs.${what}() needs a started jobs module (it is ${state}).`);
  }

  function queue(name: string): Queue {
    const q = queues.get(name);
    if (!q) throw new Error(`No job queue named "${name}" is defined.`);
    return q;
  }

  async function ensureQueue(name: string, options: QueueOptions, deadLetter?: string, { update = true } = {}) {
    const settings: PgBoss.Queue = {
      name,
      policy: options.policy ?? 'standard',
      retryLimit: options.retryLimit,
      retryDelay: options.retryDelay,
      retryBackoff: options.retryBackoff,
      expireInSeconds: options.expireInSeconds,
      ...(deadLetter ? { deadLetter } : {}),
    };
    // Created once; later starts apply changed settings to jobs sent from then on. Processes starting
    // together on a new database race here: creating a queue alters shared tables, and PostgreSQL may
    // end one of them with a deadlock (40P01) or a duplicate (23505). The loser looks again shortly.
    for (let attempt = 1; ; attempt++) {
      try {
        if (await boss.getQueue(name)) {
          if (update) await boss.updateQueue(name, settings);
        } else await boss.createQueue(name, settings);
        return;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt >= QUEUE_SETUP_ATTEMPTS || (code !== '40P01' && code !== '23505' && code !== '42P07')) throw err;
        log.info({ queue: name, code, attempt }, 'another process is setting up the job queues; trying again');
        await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 200));
      }
    }
  }

  /** Back to the queue, to run again soon; the interrupted run does not count as a retry. */
  async function requeue(name: string, id: string) {
    try {
      await executeSql(
        `UPDATE ${SCHEMA}.job SET state = CASE WHEN retry_count = 0 THEN 'created' ELSE 'retry' END::${SCHEMA}.job_state,
           started_on = NULL, start_after = now()
         WHERE name = $1 AND id = $2 AND state = 'active'`,
        [name, id],
      );
    } catch (err) {
      // E.g. a `stately` queue already holding a waiting job of this key: fail it (retried if it may be).
      log.warn({ err, queue: name, jobId: id }, 'could not put an interrupted job back; failing it');
      await boss.fail(name, id, { message: 'interrupted by a shutdown' });
    }
  }

  /** Failed for good: pg-boss retries while retry_count < retry_limit, so the limit is lowered first. */
  async function failPermanently(name: string, id: string, err: unknown) {
    await executeSql(
      `UPDATE ${SCHEMA}.job SET retry_limit = retry_count WHERE name = $1 AND id = $2 AND state = 'active'`,
      [name, id],
    );
    await boss.fail(name, id, errorOutput(err));
  }

  async function runJob(q: Queue, job: PgBoss.JobWithMetadata<unknown>) {
    if (state !== 'started') {
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
        deps.onRunFailed?.(q.name, true);
        await failPermanently(q.name, job.id, outcome.error);
      } else if (controller.signal.reason instanceof JobsStoppingError) {
        await requeue(q.name, job.id);
      } else {
        log.warn({ ...context, err: outcome.error }, 'job failed');
        deps.onRunFailed?.(q.name, job.retryCount >= job.retryLimit);
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

  async function loop(q: Queue) {
    const w = waker(q.name);
    while (state === 'started') {
      const [job] = await boss.fetch<unknown>(q.name, { batchSize: 1, includeMetadata: true }).catch((err: unknown) => {
        log.warn({ err, queue: q.name }, 'could not fetch a job');
        return [];
      });
      if (job) await runJob(q, job);
      else await w.sleep(pollingMs);
    }
  }

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
      if (queues.has(name)) throw new Error(`The job queue "${name}" is already defined.`);
      if (name.endsWith(FAILED_SUFFIX)) throw new Error(`Queue names ending in ${FAILED_SUFFIX} are reserved.`);
      queues.set(name, { name, options, handler: handler as RunHandler });
    },

    /**
     * Called once for each of the queue's jobs that will not run again (retries used up, failed for
     * good, or expired after its process died), so its owner can show the failure. Runs in worker
     * processes, through a dead-letter queue: a handler that throws is called again.
     */
    onFailed<T>(name: string, handler: (job: FailedJob<T>) => Promise<void>): void {
      if (state !== 'new') throw new Error(`jobs.onFailed("${name}") must come before jobs.start().`);
      const q = queue(name);
      if (q.onFailed) throw new Error(`The job queue "${name}" already has an onFailed handler.`);
      q.onFailed = handler as (job: FailedJob<unknown>) => Promise<void>;
    },

    /** Creates pg-boss's tables and the queues, then runs the workers (when this process has them). */
    start(): Promise<void> {
      if (state !== 'new') throw new Error(`jobs.start() called when already ${state}.`);
      state = 'starting';
      started = (async () => {
        try {
          await boss.start();
          // pg-boss fires schedules through this queue of its own, which it creates once as it starts,
          // forgetting a failure: two workers starting together on a new database can both lose that
          // race, and then no schedule ever fires (its inserts join the queue table and add nothing).
          if (runWorkers) await ensureQueue(PGBOSS_SEND_IT, SEND_IT_QUEUE, undefined, { update: false });
          for (const q of queues.values()) {
            const deadLetter = q.onFailed ? `${q.name}${FAILED_SUFFIX}` : undefined;
            if (deadLetter) await ensureQueue(deadLetter, FAILED_QUEUE);
            await ensureQueue(q.name, q.options, deadLetter);
          }
          if (runWorkers && deps.soleWorker) {
            const { rows } = await executeSql(`SELECT name, id FROM ${SCHEMA}.job WHERE state = 'active'`);
            for (const { name, id } of rows as { name: string; id: string }[]) {
              log.warn({ queue: name, jobId: id }, 'job interrupted when Daybook last stopped');
              await boss.fail(name, id, { message: 'Daybook stopped while this job ran.' });
            }
          }
        } catch (err) {
          state = 'failed';
          startError = err;
          throw err;
        }
        state = 'started';
        if (!runWorkers) return;
        for (const q of queues.values()) {
          for (let i = 0; i < Math.max(1, q.options.concurrency ?? 1); i++) loops.push(loop(q));
          const onFailed = q.onFailed;
          if (onFailed) {
            // pg-boss copies a finally failed job's data and output into its dead-letter queue.
            const handler: RunHandler = (job, output) =>
              onFailed({ data: job.data, error: errorMessage(output) ?? 'The job failed.' });
            loops.push(loop({ name: `${q.name}${FAILED_SUFFIX}`, options: FAILED_QUEUE, handler }));
          }
        }
      })();
      return started;
    },

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
      queue(name);
      const sendOptions: PgBoss.SendOptions = {
        ...(options.singletonKey !== undefined ? { singletonKey: options.singletonKey } : {}),
        ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
      };
      if (conn?.inTransaction()) {
        const id = randomUUID();
        deferred.track(
          boss.send(name, data as object, { ...sendOptions, id }).then(
            (stored) => {
              if (stored) waker(name).wake();
              else log.warn({ queue: name, jobId: id }, "the queue's policy refused a job sent in a transaction");
            },
            (err: unknown) => log.error({ err, queue: name, jobId: id }, 'could not store a job sent in a transaction'),
          ),
        );
        return id;
      }
      const id = await boss.send(name, data as object, sendOptions);
      if (id) waker(name).wake();
      return id;
    },

    /**
     * Sends many jobs to the queue `name` in one statement (a schedule's fan-out): far fewer round
     * trips than a send each. Jobs the queue's policy refuses are left out. Not inside a transaction.
     */
    async sendMany<T>(name: string, jobs: Array<{ data: T; singletonKey?: string }>): Promise<void> {
      assertStarted('sendMany');
      assertNotInTransaction('sendMany');
      queue(name);
      if (!jobs.length) return;
      await boss.insert(
        jobs.map((j) => ({
          name,
          data: j.data as object,
          ...(j.singletonKey !== undefined ? { singletonKey: j.singletonKey } : {}),
        })),
      );
      waker(name).wake();
    },

    /**
     * Sends `data` to the queue `name` on a cron schedule (5 fields, in `tz`, default UTC), from a
     * worker process; one schedule per queue, replaced by the next call.
     */
    async schedule(name: string, cron: string, data: object = {}, options: { tz?: string } = {}): Promise<void> {
      assertStarted('schedule');
      assertNotInTransaction('schedule');
      queue(name);
      await boss.schedule(name, cron, data, { tz: options.tz ?? 'UTC' });
    },

    async unschedule(name: string): Promise<void> {
      assertStarted('unschedule');
      assertNotInTransaction('unschedule');
      await boss.unschedule(name);
    },

    /**
     * Jobs waiting (new or to be retried) and running in each of the queues (dead-letter ones
     * included), in one query; empty until started.
     */
    async counts(): Promise<Array<{ queue: string; waiting: number; active: number }>> {
      if (state !== 'started') return [];
      const result = await executeSql(
        `SELECT name, count(*) FILTER (WHERE state < 'active')::int AS waiting,
           count(*) FILTER (WHERE state = 'active')::int AS active
         FROM ${SCHEMA}.job WHERE state < 'completed' GROUP BY name`,
      );
      const found = new Map(
        ((result?.rows ?? []) as Array<{ name: string; waiting: number; active: number }>).map((r) => [r.name, r]),
      );
      const names = [...queues.values()].flatMap((q) =>
        q.onFailed ? [q.name, `${q.name}${FAILED_SUFFIX}`] : [q.name],
      );
      return names.map((queue) => ({
        queue,
        waiting: Number(found.get(queue)?.waiting ?? 0),
        active: Number(found.get(queue)?.active ?? 0),
      }));
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

    /**
     * Stops taking jobs, aborts the running handlers' signals and waits for them (stopGraceMs); a
     * job whose handler threw because of it, or is still running, goes back to its queue. Then stops
     * pg-boss. Call before the database closes.
     */
    stop(): Promise<void> {
      stopped ??= (async () => {
        await started?.catch(() => {});
        state = 'stopping';
        for (const w of wakers.values()) w.wake();
        const runs = [...active];
        for (const r of runs) r.controller.abort(new JobsStoppingError('Daybook is shutting down.'));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(runs.map((r) => r.done)),
          new Promise((resolve) => {
            timer = setTimeout(resolve, graceMs);
          }),
        ]);
        clearTimeout(timer);
        for (const r of [...active]) {
          if (r.settling) continue;
          r.abandon();
          log.warn({ queue: r.name, jobId: r.id }, 'job still running at shutdown; it will run again');
          await requeue(r.name, r.id).catch((err: unknown) =>
            log.error({ err, queue: r.name, jobId: r.id }, 'could not put a job back at shutdown'),
          );
        }
        await Promise.all(loops);
        const left = await deferred.drain(graceMs);
        if (left) log.warn(`${left} job(s) sent in a transaction still not stored at shutdown`);
        // Without a started pg-boss this does nothing.
        await boss.stop({ graceful: true, wait: true, timeout: 1000, close: false });
        await sql.drain(graceMs);
        closed = true;
        state = 'stopped';
        await pool?.end();
      })();
      return stopped;
    },
  };
}

export type Jobs = ReturnType<typeof createJobs>;
