// Test fixture (jobs.process.test.ts): a worker process that is killed while its jobs run. It sends
// one job to each queue named in its environment, and once both run it freezes (so not even its own
// expiry timers fire) and says so on stdout; the test then kills it with SIGKILL.
import { writeSync } from 'node:fs';
import pino from 'pino';
import { openDatabase } from '../../db/database.ts';
import { createJobs, type QueueOptions } from './jobs.service.ts';

/** The queues' settings; runs expire after `expireInSeconds`. */
export const crashQueues = (expireInSeconds: number): Record<'retried' | 'failed', QueueOptions> => ({
  retried: { retryLimit: 1, retryDelay: 0, retryBackoff: false, expireInSeconds },
  failed: { retryLimit: 0, retryDelay: 0, retryBackoff: false, expireInSeconds },
});

if (process.env.JOBS_CRASH_CHILD === '1') {
  const env = process.env;
  const db = await openDatabase({ url: env.JOBS_DB_URL, dataDir: env.JOBS_DATA_DIR ?? null, migrationsDir: '' });
  const jobs = createJobs({ db, runWorkers: true, log: pino({ level: 'silent' }), pollingIntervalSeconds: 0.5 });
  const queues = crashQueues(Number(env.JOBS_EXPIRE_SECONDS));
  let running = 0;
  const names = { retried: String(env.JOBS_QUEUE_RETRIED), failed: String(env.JOBS_QUEUE_FAILED) };
  for (const kind of ['retried', 'failed'] as const) {
    const name = names[kind];
    jobs.define(name, queues[kind], async () => {
      running++;
      if (running < 2) return new Promise<void>(() => {});
      writeSync(1, 'both running\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    });
  }
  // As every process does, so the jobs it sends carry the dead-letter queue.
  jobs.onFailed(names.failed, async () => {});
  await jobs.start();
  await jobs.send(names.retried, { kind: 'retried' });
  await jobs.send(names.failed, { kind: 'failed' });
}
