// The jobs module against real databases: the embedded PGlite always, PostgreSQL when the test run
// has one. Every test waits for conditions (a handler called, a state reached), never for a time.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createDatabaseUrl } from '../../../../../tests/helpers/test-db.ts';
import { type Database, openDatabase } from '../../db/database.ts';
import {
  createJobs,
  type FailedJob,
  type JobContext,
  JobExpiredError,
  type Jobs,
  type JobsDeps,
  JobsStoppingError,
  PermanentJobError,
  PGBOSS_SEND_IT,
  type QueueOptions,
} from './jobs.service.ts';

/** pg-boss's internal queue manager, whose one attempt to create its schedules' queue a test makes fail. */
const Manager = createRequire(import.meta.url)('pg-boss/src/manager.js') as {
  prototype: { createQueue(name: string, options?: unknown): Promise<void> };
};

const log = pino({ level: 'silent' });
const WAIT = { timeout: 20_000, interval: 25 };
const QUICK: QueueOptions = { retryLimit: 0, retryDelay: 0, retryBackoff: false, expireInSeconds: 60 };

interface Target {
  name: string;
  open(): Promise<{ db: Database; dispose(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: 'PGlite',
    async open() {
      const db = await openDatabase({ dataDir: null, migrationsDir: inject('testDb').migrationsDir });
      return { db, dispose: () => db.close() };
    },
  },
];
if (inject('testDb').kind === 'postgres') {
  targets.push({
    name: 'PostgreSQL',
    async open() {
      const created = await createDatabaseUrl();
      if (!created) throw new Error('no PostgreSQL');
      const db = await openDatabase({ url: created.url, dataDir: null, migrationsDir: inject('testDb').migrationsDir });
      return {
        db,
        async dispose() {
          await db.close();
          await created.drop();
        },
      };
    },
  });
}

const queueName = (label: string) => `${label}-${randomBytes(3).toString('hex')}`;

/** A promise and its resolve, to hold a handler until a test lets it go. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe.each(targets)('jobs on $name', (target) => {
  let db: Database;
  let dispose: () => Promise<void>;
  const instances: Jobs[] = [];

  beforeAll(async () => {
    ({ db, dispose } = await target.open());
    await db.query('CREATE TABLE IF NOT EXISTS job_test_marks (label text NOT NULL)');
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((jobs) => jobs.stop()));
  });
  afterAll(() => dispose());

  /** A jobs module on the test database with test-sized intervals; stopped after each test. */
  function jobsModule(options: Partial<JobsDeps> = {}) {
    const jobs = createJobs({
      db,
      runWorkers: true,
      log,
      pollingIntervalSeconds: 0.5,
      maintenanceIntervalSeconds: 1,
      cronIntervalSeconds: 1,
      stopGraceMs: 500,
      ...options,
    });
    instances.push(jobs);
    return jobs;
  }

  it('runs a job with its data, and records it completed', async () => {
    const jobs = jobsModule();
    const q = queueName('run');
    const seen: JobContext<{ topic: string }>[] = [];
    jobs.define<{ topic: string }>(q, QUICK, async (job) => {
      seen.push(job);
    });
    await jobs.start();
    const id = await jobs.send(q, { topic: 'e-bikes' });
    expect(id).toEqual(expect.any(String));
    await vi.waitFor(async () => expect((await jobs.getJob(q, id as string))?.state).toBe('completed'), WAIT);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ id, data: { topic: 'e-bikes' }, retryCount: 0, retryLimit: 0 });
    expect(await jobs.getJob(q, '00000000-0000-4000-8000-000000000000')).toBeNull();
    await expect(jobs.send('no-such-queue', {})).rejects.toThrow('No job queue named "no-such-queue"');
  });

  it('retries a failed run after retryDelay, doubling the delay with backoff, then succeeds', async () => {
    const jobs = jobsModule();
    const q = queueName('retry');
    const runs: { retryCount: number; started: number; ended: number }[] = [];
    jobs.define(q, { retryLimit: 2, retryDelay: 1, retryBackoff: true, expireInSeconds: 60 }, async (job) => {
      const run = { retryCount: job.retryCount, started: Date.now(), ended: 0 };
      runs.push(run);
      run.ended = Date.now();
      if (job.retryCount < 2) throw new Error(`network down (run ${job.retryCount})`);
    });
    await jobs.start();
    const id = (await jobs.send(q, {})) as string;
    await vi.waitFor(async () => expect((await jobs.getJob(q, id))?.state).toBe('completed'), WAIT);
    expect(runs.map((r) => r.retryCount)).toEqual([0, 1, 2]);
    const [first, second, third] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    // pg-boss holds a retry back until retryDelay * 2^n / 2 * (1 + random) seconds after the failure.
    expect(second.started - first.ended).toBeGreaterThanOrEqual(1000);
    expect(third.started - second.ended).toBeGreaterThanOrEqual(2000);
  });

  it('ends a job failed without retries on a PermanentJobError, and tells onFailed', async () => {
    const jobs = jobsModule();
    const q = queueName('permanent');
    let runs = 0;
    const failed: FailedJob<{ url: string }>[] = [];
    jobs.define<{ url: string }>(
      q,
      { retryLimit: 3, retryDelay: 0, retryBackoff: false, expireInSeconds: 60 },
      async () => {
        runs++;
        throw new PermanentJobError('The address is on the local network.');
      },
    );
    jobs.onFailed<{ url: string }>(q, async (job) => {
      failed.push(job);
    });
    await jobs.start();
    const id = (await jobs.send(q, { url: 'http://10.0.0.1/' })) as string;
    await vi.waitFor(() => expect(failed).toHaveLength(1), WAIT);
    expect(failed[0]).toEqual({ data: { url: 'http://10.0.0.1/' }, error: 'The address is on the local network.' });
    expect(await jobs.getJob(q, id)).toMatchObject({
      state: 'failed',
      retryCount: 0,
      error: 'The address is on the local network.',
    });
    // Failed is final: nothing runs it again.
    expect(runs).toBe(1);
  });

  it('tells onFailed once when the retries are used up', async () => {
    const jobs = jobsModule();
    const q = queueName('exhausted');
    const runs: number[] = [];
    const failed: FailedJob<{ n: number }>[] = [];
    jobs.define<{ n: number }>(
      q,
      { retryLimit: 1, retryDelay: 0, retryBackoff: false, expireInSeconds: 60 },
      async (job) => {
        runs.push(job.retryCount);
        throw new Error(`timeout ${job.retryCount}`);
      },
    );
    jobs.onFailed<{ n: number }>(q, async (job) => {
      failed.push(job);
    });
    await jobs.start();
    const id = (await jobs.send(q, { n: 7 })) as string;
    await vi.waitFor(() => expect(failed).toHaveLength(1), WAIT);
    expect(failed[0]).toEqual({ data: { n: 7 }, error: 'timeout 1' });
    expect(runs).toEqual([0, 1]);
    expect(await jobs.getJob(q, id)).toMatchObject({ state: 'failed', retryCount: 1, error: 'timeout 1' });
  });

  it('aborts a run that outlives expireInSeconds and retries it', async () => {
    const jobs = jobsModule();
    const q = queueName('expire');
    const reasons: unknown[] = [];
    jobs.define(q, { retryLimit: 1, retryDelay: 0, retryBackoff: false, expireInSeconds: 1 }, async (job) => {
      if (job.retryCount > 0) return;
      // A handler stuck on something that only its signal ends.
      await new Promise<void>((_, reject) =>
        job.signal.addEventListener('abort', () => {
          reasons.push(job.signal.reason);
          reject(job.signal.reason);
        }),
      );
    });
    await jobs.start();
    const id = (await jobs.send(q, {})) as string;
    await vi.waitFor(async () => expect((await jobs.getJob(q, id))?.state).toBe('completed'), WAIT);
    expect(reasons).toEqual([expect.any(JobExpiredError)]);
    expect((await jobs.getJob(q, id))?.retryCount).toBe(1);
  });

  it('with runWorkers off, sends jobs and never runs them; a worker process does', async () => {
    const web = jobsModule({ runWorkers: false });
    const worker = jobsModule();
    const q = queueName('web');
    const ranOn: string[] = [];
    web.define(q, QUICK, async () => {
      ranOn.push('web');
    });
    worker.define(q, QUICK, async () => {
      ranOn.push('worker');
    });
    await web.start();
    await worker.start();
    // A local send wakes the sender's own workers at once, so a web process with workers would take these.
    const ids = await Promise.all([1, 2, 3].map((n) => web.send(q, { n })));
    await vi.waitFor(async () => {
      for (const id of ids) expect((await web.getJob(q, id as string))?.state).toBe('completed');
    }, WAIT);
    expect(ranOn).toEqual(['worker', 'worker', 'worker']);
  });

  it('shares the work of two instances on one database without running a job twice', async () => {
    const a = jobsModule();
    const b = jobsModule();
    const q = queueName('shared');
    const held = gate();
    const holding = new Set<string>();
    const ran = new Map<string, string[]>();
    for (const [label, jobs] of [
      ['a', a],
      ['b', b],
    ] as const) {
      jobs.define<{ hold: boolean }>(q, { ...QUICK, concurrency: 1 }, async (job) => {
        ran.set(job.id, [...(ran.get(job.id) ?? []), label]);
        if (job.data.hold) {
          holding.add(label);
          await held.opened;
        }
      });
    }
    await a.start();
    await b.start();
    // Two held jobs at once, with one worker each: one instance holds each.
    await a.send(q, { hold: true });
    await a.send(q, { hold: true });
    await vi.waitFor(() => expect([...holding].sort()).toEqual(['a', 'b']), WAIT);
    held.open();
    const ids = await Promise.all(Array.from({ length: 20 }, () => b.send(q, { hold: false })));
    await vi.waitFor(async () => {
      for (const id of ids) expect((await b.getJob(q, id as string))?.state).toBe('completed');
    }, WAIT);
    expect(ran.size).toBe(22);
    for (const labels of ran.values()) expect(labels).toHaveLength(1);
  });

  it('stop() aborts the handlers, waits a bounded time, and puts their jobs back without using a retry', async () => {
    const first = jobsModule({ stopGraceMs: 300 });
    const q = queueName('stop');
    const started = new Set<string>();
    const reasons: unknown[] = [];
    // No retries: a shutdown that counted as a failure would end these jobs failed.
    const options = { ...QUICK, concurrency: 2 };
    first.define<{ obeys: boolean }>(q, options, async (job) => {
      started.add(job.id);
      job.signal.addEventListener('abort', () => reasons.push(job.signal.reason));
      if (job.data.obeys) {
        await new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason)));
      } else {
        // Ignores its signal: stop() gives up on it after the grace period.
        await new Promise(() => {});
      }
    });
    await first.start();
    const obeys = (await first.send(q, { obeys: true })) as string;
    const ignores = (await first.send(q, { obeys: false })) as string;
    await vi.waitFor(() => expect(started.size).toBe(2), WAIT);

    await first.stop();
    expect(reasons).toEqual([expect.any(JobsStoppingError), expect.any(JobsStoppingError)]);

    const next = jobsModule();
    const reran: JobContext<{ obeys: boolean }>[] = [];
    next.define<{ obeys: boolean }>(q, options, async (job) => {
      reran.push(job);
    });
    await next.start();
    await vi.waitFor(async () => {
      expect((await next.getJob(q, obeys))?.state).toBe('completed');
      expect((await next.getJob(q, ignores))?.state).toBe('completed');
    }, WAIT);
    expect(reran.map((job) => [job.id, job.retryCount]).sort()).toEqual(
      [
        [obeys, 0],
        [ignores, 0],
      ].sort(),
    );
  });

  it('sends jobs on a cron schedule in a time zone', async () => {
    const jobs = jobsModule();
    const q = queueName('daily');
    const seen: unknown[] = [];
    jobs.define(q, QUICK, async (job) => {
      seen.push(job.data);
    });
    await jobs.start();
    // Every minute: the current minute has begun, so the first check sends one.
    await jobs.schedule(q, '* * * * *', { kind: 'daily' }, { tz: 'Europe/Lisbon' });
    await vi.waitFor(() => expect(seen).toEqual([{ kind: 'daily' }]), WAIT);
    await jobs.unschedule(q);
  });

  it("fires schedules although pg-boss's one attempt to set up its send-it queue failed (workers racing on a new database)", async () => {
    // As when two workers start together on a new database and this one loses the race: the queue
    // is not there, and pg-boss's own attempt to create it ends in a deadlock, which pg-boss ignores.
    await db.query('SELECT pgboss.delete_queue($1)', [PGBOSS_SEND_IT]).catch(() => {});
    const createQueue = Manager.prototype.createQueue;
    let injected = false;
    const spy = vi.spyOn(Manager.prototype, 'createQueue').mockImplementation(function (this: unknown, name, options) {
      if (name === PGBOSS_SEND_IT && !injected) {
        injected = true;
        return Promise.reject(Object.assign(new Error('deadlock detected'), { code: '40P01' }));
      }
      return createQueue.call(this, name, options);
    });
    try {
      const jobs = jobsModule();
      const q = queueName('send-it');
      const seen: unknown[] = [];
      jobs.define(q, QUICK, async (job) => {
        seen.push(job.data);
      });
      await jobs.start();
      expect(injected).toBe(true);
      await jobs.schedule(q, '* * * * *', { kind: 'scheduled' });
      await vi.waitFor(() => expect(seen).toEqual([{ kind: 'scheduled' }]), WAIT);
      await jobs.unschedule(q);
    } finally {
      spy.mockRestore();
    }
  });

  describe('a job sent while a Prisma transaction is open', () => {
    it('is neither lost nor part of it: the transaction rolls back, the job runs', async () => {
      const jobs = jobsModule();
      const q = queueName('tx-rollback');
      const seen: unknown[] = [];
      jobs.define(q, QUICK, async (job) => {
        seen.push(job.data);
      });
      await jobs.start();
      const label = queueName('rolled-back');
      let id: string | null = null;
      await expect(
        db.prisma.$transaction(async (tx) => {
          await tx.$executeRawUnsafe('INSERT INTO job_test_marks (label) VALUES ($1)', label);
          id = await jobs.send(q, { label });
          // The transaction still works after the send (on PGlite, awaiting a statement here would stall it).
          await tx.$executeRawUnsafe('INSERT INTO job_test_marks (label) VALUES ($1)', label);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(id).toEqual(expect.any(String));
      await vi.waitFor(() => expect(seen).toEqual([{ label }]), WAIT);
      await vi.waitFor(async () => expect((await jobs.getJob(q, id as string))?.state).toBe('completed'), WAIT);
      expect(await db.query('SELECT 1 FROM job_test_marks WHERE label = $1', [label])).toEqual([]);
    });

    it('runs once the transaction commits, and its handler reads what the transaction wrote', async () => {
      const jobs = jobsModule();
      const q = queueName('tx-commit');
      const found: number[] = [];
      const label = queueName('committed');
      jobs.define(q, QUICK, async () => {
        const rows = await db.query('SELECT 1 FROM job_test_marks WHERE label = $1', [label]);
        found.push(rows.length);
      });
      await jobs.start();
      let id: string | null = null;
      await db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('INSERT INTO job_test_marks (label) VALUES ($1)', label);
        id = await jobs.send(q, {});
      });
      await vi.waitFor(async () => expect((await jobs.getJob(q, id as string))?.state).toBe('completed'), WAIT);
      // On PostgreSQL the job is stored at once and could run before the commit; not so on PGlite.
      if (db.kind === 'pglite') expect(found).toEqual([1]);
      else expect(found).toHaveLength(1);
    });

    it('from elsewhere (another request) waits for the transaction and is stored after its rollback', async () => {
      const jobs = jobsModule();
      const q = queueName('tx-other');
      const seen: unknown[] = [];
      jobs.define(q, QUICK, async (job) => {
        seen.push(job.data);
      });
      await jobs.start();
      const inside = gate();
      const release = gate();
      const transaction = db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SELECT 1');
        inside.open();
        await release.opened;
        throw new Error('rolled back');
      });
      await inside.opened;
      const sent = jobs.send(q, { from: 'another request' });
      release.open();
      await expect(transaction).rejects.toThrow('rolled back');
      const id = await sent;
      expect(id).toEqual(expect.any(String));
      await vi.waitFor(() => expect(seen).toEqual([{ from: 'another request' }]), WAIT);
    });

    it.runIf(target.name === 'PGlite')(
      'refuses reads from inside the transaction on PGlite instead of stalling it',
      async () => {
        const jobs = jobsModule();
        const q = queueName('tx-read');
        jobs.define(q, QUICK, async () => {});
        await jobs.start();
        await expect(
          db.prisma.$transaction(async () => {
            await jobs.getJob(q, '00000000-0000-4000-8000-000000000000');
          }),
        ).rejects.toThrow('jobs.getJob() cannot run inside a database transaction on the embedded database');
      },
    );
  });
});
