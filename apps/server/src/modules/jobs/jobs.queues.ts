// The queues: those this process defines (with their handlers and dead-letter queues), setting them
// up in pg-boss at start, and how many jobs each holds.
import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import { errorMessage } from './jobs.output.ts';
import type { JobsRepo } from './jobs.repo.ts';
import type { FailedJob, JobContext, QueueOptions } from './jobs.types.ts';

/** pg-boss's queue for the jobs its schedules send (timekeeper.js), with pg-boss's default settings. */
export const PGBOSS_SEND_IT = '__pgboss__send-it';
const SEND_IT_QUEUE: QueueOptions = { retryLimit: 2, retryDelay: 0, retryBackoff: false, expireInSeconds: 900 };
const FAILED_SUFFIX = '__failed';
// Dead-letter jobs only call the owner's onFailed handler, which is quick.
const FAILED_QUEUE: QueueOptions = { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 300 };

/** Tries at setting up one queue when other processes start at the same moment. */
const QUEUE_SETUP_ATTEMPTS = 8;

/** A handler as the loop calls it: with the job's stored output too (for dead-letter jobs). */
export type RunHandler = (job: JobContext<unknown>, output: unknown) => Promise<void>;

export interface Queue {
  name: string;
  options: QueueOptions;
  handler: RunHandler;
  onFailed?: (job: FailedJob<unknown>) => Promise<void>;
}

export function createJobQueues(deps: { boss: PgBoss; repo: JobsRepo; log: FastifyBaseLogger }) {
  const { boss, repo, log } = deps;
  const queues = new Map<string, Queue>();

  function get(name: string): Queue {
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

  /** Each defined queue followed by its dead-letter queue (when it has an onFailed handler). */
  function withDeadLetters(): Queue[] {
    return [...queues.values()].flatMap((q) => {
      const onFailed = q.onFailed;
      if (!onFailed) return [q];
      // pg-boss copies a finally failed job's data and output into its dead-letter queue.
      const handler: RunHandler = (job, output) =>
        onFailed({ data: job.data, error: errorMessage(output) ?? 'The job failed.' });
      return [q, { name: `${q.name}${FAILED_SUFFIX}`, options: FAILED_QUEUE, handler }];
    });
  }

  return {
    get,

    define(name: string, options: QueueOptions, handler: RunHandler): void {
      if (queues.has(name)) throw new Error(`The job queue "${name}" is already defined.`);
      if (name.endsWith(FAILED_SUFFIX)) throw new Error(`Queue names ending in ${FAILED_SUFFIX} are reserved.`);
      queues.set(name, { name, options, handler });
    },

    onFailed(name: string, handler: (job: FailedJob<unknown>) => Promise<void>): void {
      const q = get(name);
      if (q.onFailed) throw new Error(`The job queue "${name}" already has an onFailed handler.`);
      q.onFailed = handler;
    },

    /** The queues a worker process runs loops on. */
    withDeadLetters,

    /** Creates (or updates) every queue in pg-boss, once pg-boss has started. */
    async setUp(runWorkers: boolean) {
      // pg-boss fires schedules through this queue of its own, which it creates once as it starts,
      // forgetting a failure: two workers starting together on a new database can both lose that
      // race, and then no schedule ever fires (its inserts join the queue table and add nothing).
      if (runWorkers) await ensureQueue(PGBOSS_SEND_IT, SEND_IT_QUEUE, undefined, { update: false });
      for (const q of queues.values()) {
        const deadLetter = q.onFailed ? `${q.name}${FAILED_SUFFIX}` : undefined;
        if (deadLetter) await ensureQueue(deadLetter, FAILED_QUEUE);
        await ensureQueue(q.name, q.options, deadLetter);
      }
    },

    /** Jobs waiting and running in each of the queues, dead-letter ones included. */
    async counts(): Promise<Array<{ queue: string; waiting: number; active: number }>> {
      const found = await repo.countsByQueue();
      return withDeadLetters().map(({ name: queue }) => ({
        queue,
        waiting: Number(found.get(queue)?.waiting ?? 0),
        active: Number(found.get(queue)?.active ?? 0),
      }));
    },
  };
}

export type JobQueues = ReturnType<typeof createJobQueues>;
