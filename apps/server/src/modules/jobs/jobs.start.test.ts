// Several processes starting at the same moment on a new PostgreSQL database (docker compose starts
// two app replicas and a worker together): every one of them gets its job queues.
import pino from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createDatabaseUrl } from '../../../../../tests/helpers/test-db.ts';
import { openDatabase } from '../../db/database.ts';
import { createJobs } from './jobs.service.ts';

const log = pino({ level: 'silent' });
const QUEUE = { retryLimit: 0, retryDelay: 0, retryBackoff: false, expireInSeconds: 60 };

describe.runIf(inject('testDb').kind === 'postgres')('jobs starting together', () => {
  it('all start, each with every queue, however their queue setup interleaves', async () => {
    const created = await createDatabaseUrl();
    if (!created) throw new Error('needs PostgreSQL');
    const dbs = await Promise.all(
      [1, 2, 3, 4].map(() =>
        openDatabase({ url: created.url, dataDir: null, migrationsDir: inject('testDb').migrationsDir }),
      ),
    );
    const names = ['research', 'daily-message', 'daily-tick', 'mail', 'cleanup'];
    const all = dbs.map((db, i) => {
      const jobs = createJobs({ db, runWorkers: i === 0, log, pollingIntervalSeconds: 0.5, stopGraceMs: 200 });
      for (const name of names) jobs.define(name, QUEUE, async () => {});
      jobs.onFailed('research', async () => {});
      return jobs;
    });
    try {
      const results = await Promise.allSettled(all.map((jobs) => jobs.start()));
      expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'started'))).toEqual(
        all.map(() => 'started'),
      );
      // Any of them can send to any queue.
      for (const [i, jobs] of all.entries())
        expect(await jobs.send(names[i % names.length] as string, { i })).toBeTruthy();
    } finally {
      await Promise.all(all.map((jobs) => jobs.stop()));
      await Promise.all(dbs.map((db) => db.close()));
      await created.drop();
    }
  });
});
