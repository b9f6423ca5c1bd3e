// The worker loops: per queue (and its concurrency) fetching a job and running it, sleeping when
// there is none until the poll interval passes or a local send wakes them; and stopping them.
import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import { JobsStoppingError } from './jobs.errors.ts';
import type { Queue } from './jobs.queues.ts';
import type { JobRunner } from './jobs.run.ts';

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

export interface JobWorkersDeps {
  boss: PgBoss;
  log: FastifyBaseLogger;
  runner: JobRunner;
  /** How long an idle loop sleeps before it asks again. */
  pollingMs: number;
  /** The loops run while this holds. */
  isStarted(): boolean;
}

export function createJobWorkers(deps: JobWorkersDeps) {
  const { boss, log, runner, pollingMs, isStarted } = deps;
  const wakers = new Map<string, ReturnType<typeof createWaker>>();
  const loops: Promise<void>[] = [];

  const waker = (name: string) => {
    let w = wakers.get(name);
    if (!w) {
      w = createWaker();
      wakers.set(name, w);
    }
    return w;
  };

  async function loop(q: Queue) {
    const w = waker(q.name);
    while (isStarted()) {
      const [job] = await boss.fetch<unknown>(q.name, { batchSize: 1, includeMetadata: true }).catch((err: unknown) => {
        log.warn({ err, queue: q.name }, 'could not fetch a job');
        return [];
      });
      if (job) await runner.run(q, job);
      else await w.sleep(pollingMs);
    }
  }

  return {
    /** A job was sent to `name`: its idle loops ask now. */
    wake(name: string) {
      waker(name).wake();
    },

    start(queues: Queue[]) {
      for (const q of queues) for (let i = 0; i < Math.max(1, q.options.concurrency ?? 1); i++) loops.push(loop(q));
    },

    /**
     * Once the module is stopping: aborts the running handlers' signals, waits for them (at most
     * `graceMs`), puts back the jobs of those still running, and waits for the loops to end.
     */
    async stop(graceMs: number) {
      for (const w of wakers.values()) w.wake();
      const runs = runner.running();
      for (const r of runs) r.controller.abort(new JobsStoppingError('Daybook is shutting down.'));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(runs.map((r) => r.done)),
        new Promise((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
      for (const r of runner.running()) {
        if (r.settling) continue;
        r.abandon();
        log.warn({ queue: r.name, jobId: r.id }, 'job still running at shutdown; it will run again');
        await runner
          .requeue(r.name, r.id)
          .catch((err: unknown) =>
            log.error({ err, queue: r.name, jobId: r.id }, 'could not put a job back at shutdown'),
          );
      }
      await Promise.all(loops);
    },
  };
}
