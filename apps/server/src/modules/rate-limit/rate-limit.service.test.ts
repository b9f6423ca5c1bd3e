// The limiter's count-then-record is atomic: parallel attempts never get past `max`, whether they
// share one connection (PGlite) or come from several server instances (PostgreSQL connections).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { REPO_ROOT } from '../../config.ts';
import { type Database, openDatabase } from '../../db/database.ts';
import { systemClock } from '../../lib/clock.ts';
import { createRateLimitRepo } from './rate-limit.repo.ts';
import { createRateLimiter, type Limit } from './rate-limit.service.ts';

const limiterOn = (db: Database) => createRateLimiter({ repo: createRateLimitRepo(db.prisma), clock: systemClock });
const limit = (key: string): Limit => ({ key, max: 5, windowSec: 300 });

async function burst(limiters: Array<ReturnType<typeof limiterOn>>, key: string, n = 100) {
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) => limiters[i % limiters.length]?.consume(limit(key), limit(`${key}:other`))),
  );
  return results.filter(Boolean).length;
}

describe('rate limits under bursts', () => {
  let pglite: Database;
  let postgres: TestDatabase;
  let second: Database | null = null;
  beforeAll(async () => {
    pglite = await openDatabase({ dataDir: null, migrationsDir: `${REPO_ROOT}/prisma/migrations` });
    await pglite.migrate();
    postgres = await createTestDatabase();
    // A second instance: its own connection pool on the same database.
    if (postgres.url) second = await openDatabase({ url: postgres.url, dataDir: null, migrationsDir: '' });
  });
  afterAll(async () => {
    await pglite?.close();
    await second?.close();
    await postgres?.dispose();
  });

  it('PGlite (one connection): 100 parallel attempts, exactly 5 allowed', async () => {
    expect(await burst([limiterOn(pglite)], 'burst:pglite')).toBe(5);
  });

  it('two instances on one database: 100 parallel attempts between them, exactly 5 allowed', async () => {
    const limiters = [limiterOn(postgres.db), limiterOn(second ?? postgres.db)];
    expect(await burst(limiters, 'burst:instances')).toBe(5);
  });

  it('a released attempt frees its place; a refused one says when to come back', async () => {
    const limiter = limiterOn(pglite);
    const first = await limiter.attempt({ key: 'once', max: 1, windowSec: 180 });
    expect(first.allowed).toBe(true);
    const refused = await limiter.attempt({ key: 'once', max: 1, windowSec: 180 });
    expect(refused).toEqual({ allowed: false, retryAfterSec: expect.any(Number) });
    expect(refused.allowed === false && refused.retryAfterSec).toBeGreaterThan(170);
    expect(refused.allowed === false && refused.retryAfterSec).toBeLessThanOrEqual(180);
    await limiter.release(first);
    expect((await limiter.attempt({ key: 'once', max: 1, windowSec: 180 })).allowed).toBe(true);
  });
});
