// What the jobs module tells /metrics, on the embedded database: failed runs by queue (final or to
// be retried), and the jobs waiting and running in each queue.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type Database, openDatabase } from '../../db/database.ts';
import { createJobs, type Jobs, PermanentJobError, type QueueOptions } from '../jobs/jobs.service.ts';

const WAIT = { timeout: 20_000, interval: 25 };
const QUICK: QueueOptions = { retryLimit: 0, retryDelay: 0, retryBackoff: false, expireInSeconds: 60 };
const name = (label: string) => `${label}-${randomBytes(3).toString('hex')}`;

describe('jobs for /metrics', () => {
  let db: Database;
  let jobs: Jobs;
  const failures: Array<[string, boolean]> = [];
  const retried = name('retried');
  const permanent = name('permanent');
  const held = name('held');
  const later = name('later');
  let release = () => {};
  const holding = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started = false;

  beforeAll(async () => {
    db = await openDatabase({ dataDir: null, migrationsDir: inject('testDb').migrationsDir });
    jobs = createJobs({
      db,
      runWorkers: true,
      log: pino({ level: 'silent' }),
      pollingIntervalSeconds: 0.5,
      stopGraceMs: 500,
      onRunFailed: (queue, final) => failures.push([queue, final]),
    });
    jobs.define(retried, { ...QUICK, retryLimit: 1 }, async () => {
      throw new Error('network down');
    });
    jobs.define(permanent, { ...QUICK, retryLimit: 3 }, async () => {
      throw new PermanentJobError('no such page');
    });
    jobs.onFailed(permanent, async () => {});
    jobs.define(held, QUICK, async () => {
      started = true;
      await holding;
    });
    jobs.define(later, QUICK, async () => {});
  });
  afterAll(async () => {
    release();
    await jobs.stop();
    await db.close();
  });

  it('counts nothing before the jobs start', async () => {
    expect(await jobs.counts()).toEqual([]);
  });

  it('tells each failed run: retried ones as not final, the last and permanent ones as final', async () => {
    await jobs.start();
    await jobs.send(retried, {});
    await jobs.send(permanent, {});
    await vi.waitFor(() => expect(failures.filter(([q]) => q === retried)).toHaveLength(2), WAIT);
    await vi.waitFor(() => expect(failures.filter(([q]) => q === permanent)).toHaveLength(1), WAIT);
    expect(failures.filter(([q]) => q === retried)).toEqual([
      [retried, false],
      [retried, true],
    ]);
    expect(failures.filter(([q]) => q === permanent)).toEqual([[permanent, true]]);
  });

  it('counts the jobs waiting and running in every queue, dead-letter queues included', async () => {
    await jobs.send(held, {});
    await vi.waitFor(() => expect(started).toBe(true), WAIT);
    await jobs.send(later, {}, { startAfter: 3600 });
    await jobs.send(later, {}, { startAfter: 3600 });
    const counts = await jobs.counts();
    expect(counts).toContainEqual({ queue: held, waiting: 0, active: 1 });
    expect(counts).toContainEqual({ queue: later, waiting: 2, active: 0 });
    expect(counts).toContainEqual({ queue: retried, waiting: 0, active: 0 });
    expect(counts.map((c) => c.queue)).toContain(`${permanent}__failed`);
    release();
    await vi.waitFor(
      async () => expect(await jobs.counts()).toContainEqual({ queue: held, waiting: 0, active: 0 }),
      WAIT,
    );
  });
});
