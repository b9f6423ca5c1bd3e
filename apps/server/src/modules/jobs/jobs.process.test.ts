// Jobs across processes: a worker killed while its jobs run (they are retried, or end failed and
// onFailed hears of it), and the `npm run worker` entry point.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, inject, it, vi } from 'vitest';
import { createDatabaseUrl } from '../../../../../tests/helpers/test-db.ts';
import { REPO_ROOT } from '../../config.ts';
import { openDatabase } from '../../db/database.ts';
import { crashQueues } from './jobs.crash-child.ts';
import { createJobs, type FailedJob } from './jobs.service.ts';

const CHILD = path.join(import.meta.dirname, 'jobs.crash-child.ts');
const WORKER = path.join(REPO_ROOT, 'apps/server/src/worker.ts');
const migrationsDir = inject('testDb').migrationsDir;
const postgres = inject('testDb').kind === 'postgres';

/** Node with tsx's loader in one process (the tsx command would run a second), so a kill reaches it. */
function run(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

const WAIT = { timeout: 60_000, interval: 50 };

const crashTargets = [
  // The embedded database is one process's: the next start fails what the last one left running.
  {
    name: 'PGlite, at the next start',
    postgres: false,
    soleWorker: true,
    expireInSeconds: 600,
    error: 'Daybook stopped while this job ran.',
  },
  // Otherwise the runs expire, and maintenance fails them.
  ...[false, ...(postgres ? [true] : [])].map((pg) => ({
    name: `${pg ? 'PostgreSQL' : 'PGlite'}, once they expire`,
    postgres: pg,
    soleWorker: false,
    expireInSeconds: 2,
    error: 'job failed by timeout in active state',
  })),
];

describe.each(crashTargets)('a worker killed while its jobs run, on $name', (target) => {
  it('has its jobs retried, or failed and reported to onFailed, by the next worker', async () => {
    const queues = crashQueues(target.expireInSeconds);
    const created = target.postgres ? await createDatabaseUrl() : null;
    const dataDir = target.postgres ? undefined : await mkdtemp(path.join(tmpdir(), 'daybook-jobs-'));
    const names = {
      retried: `crash-r-${randomBytes(3).toString('hex')}`,
      failed: `crash-f-${randomBytes(3).toString('hex')}`,
    };
    const child = run(CHILD, {
      JOBS_CRASH_CHILD: '1',
      JOBS_QUEUE_RETRIED: names.retried,
      JOBS_QUEUE_FAILED: names.failed,
      JOBS_EXPIRE_SECONDS: String(target.expireInSeconds),
      ...(created ? { JOBS_DB_URL: created.url } : { JOBS_DATA_DIR: dataDir as string }),
    });
    try {
      await vi.waitFor(() => expect(child.output()).toContain('both running'), WAIT);
    } finally {
      child.child.kill('SIGKILL');
    }
    await child.exited;

    const db = await openDatabase({ url: created?.url, dataDir: dataDir ?? null, migrationsDir });
    const jobs = createJobs({
      db,
      runWorkers: true,
      log: pino({ level: 'silent' }),
      pollingIntervalSeconds: 0.5,
      maintenanceIntervalSeconds: 1,
      soleWorker: target.soleWorker,
    });
    try {
      const retried: number[] = [];
      const ranFailed: unknown[] = [];
      const reported: FailedJob<unknown>[] = [];
      jobs.define(names.retried, queues.retried, async (job) => {
        retried.push(job.retryCount);
      });
      jobs.define(names.failed, queues.failed, async (job) => {
        ranFailed.push(job.data);
      });
      jobs.onFailed(names.failed, async (job) => {
        reported.push(job);
      });
      await jobs.start();
      // One has a retry left, the other none.
      await vi.waitFor(() => {
        expect(retried).toEqual([1]);
        expect(reported).toEqual([{ data: { kind: 'failed' }, error: target.error }]);
      }, WAIT);
      expect(ranFailed).toEqual([]);
    } finally {
      await jobs.stop();
      await db.close();
      await created?.drop();
    }
  }, 120_000);
});

describe('npm run worker (worker.ts)', () => {
  it('runs the jobs without listening, and closes cleanly on SIGTERM', async () => {
    const created = postgres ? await createDatabaseUrl() : null;
    const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-worker-'));
    const worker = run(WORKER, {
      NODE_ENV: 'development',
      LOG_FORMAT: 'json',
      DATA_DIR: dataDir,
      // Ignored by a worker: it always runs the jobs.
      RUN_WORKERS: 'false',
      ...(created ? { DATABASE_URL: created.url } : {}),
    });
    try {
      await vi.waitFor(() => expect(worker.output()).toContain('Daybook worker is running'), WAIT);
      expect(worker.output()).not.toContain('Server listening');
      expect(worker.output()).not.toContain('background jobs will not run');
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      expect(worker.output()).toContain('SIGTERM received, closing');
      if (created) {
        // pg-boss made its tables in the database.
        const db = await openDatabase({ url: created.url, dataDir: null, migrationsDir });
        expect(await db.query('SELECT version FROM pgboss.version')).toHaveLength(1);
        await db.close();
      }
    } finally {
      worker.child.kill('SIGKILL');
      await created?.drop();
    }
  }, 120_000);

  it('says why it cannot share the embedded database with a running server', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-worker-'));
    // This test process holds the data directory, as a running `npm start` would.
    const db = await openDatabase({ dataDir, migrationsDir });
    try {
      const worker = run(WORKER, { NODE_ENV: 'development', DATA_DIR: dataDir });
      expect(await worker.exited).toBe(1);
      expect(worker.output()).toContain('Daybook worker could not start: The embedded database in');
      expect(worker.output()).toContain(
        'On the embedded database `npm start` runs the background jobs itself; a separate worker needs DATABASE_URL (PostgreSQL).',
      );
    } finally {
      await db.close();
    }
  }, 60_000);
});
