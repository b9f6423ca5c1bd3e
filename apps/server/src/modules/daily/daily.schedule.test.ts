// The daily message schedule through the real app and database: ticks at instants the test picks
// claim each user once per local date, at or after their local delivery time, across time zones and
// daylight saving changes; who is skipped; a server that was down; two schedulers on one database.
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { type Database, openDatabase, type Query } from '../../db/database.ts';
import { createSigner } from '../../lib/signing.ts';
import { signedInUser, signUp } from '../../test/factories.ts';
import { createTestApp, type TestApp } from '../../test/test-app.ts';
import { createUsersRepo } from '../accounts/users.repo.ts';
import { createUsersService } from '../accounts/users.service.ts';
import { createChatPostsService } from '../chat/chat.posts.service.ts';
import { createChatRepo } from '../chat/chat.repo.ts';
import { createDailyRepo } from './daily.repo.ts';
import { createDailyService } from './daily.service.ts';
import { backdate, datesOf, retireOthers, testClock } from './daily.test-helpers.ts';

const clock = testClock();
let t: TestApp;
let query: Query;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  query = t.app.db.query;
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => clock.set(new Date()));

/** A verified user with these daily message settings, saved through the profile's PATCH. */
async function user(timeZone: string | null, time = '07:00') {
  const u = await signedInUser(t);
  const res = await u.browser.patch('/api/users/me/', {
    daily_message_time: time,
    ...(timeZone ? { time_zone: timeZone } : {}),
  });
  expect(res.statusCode).toBe(200);
  return u.userId;
}

/** Ticks at `at` (UTC) and returns whom it claimed, by the rows it added. */
async function tickAt(at: string, users: number[]): Promise<number[]> {
  const before = await datesOf(query, users);
  clock.set(at);
  const claimed = await t.app.daily.tick();
  const after = await datesOf(query, users);
  const who = users.filter((id) => (after[id]?.length ?? 0) > (before[id]?.length ?? 0));
  // The tick's own count is the rows it added: nobody else in the database is due.
  expect(claimed, `tick at ${at}`).toBe(who.length);
  return who;
}

describe('the schedule across time zones', () => {
  it('claims each user at or after their local delivery time, once a local day', async () => {
    const lisbon = await user('Europe/Lisbon', '07:00');
    const newYork = await user('America/New_York', '07:00');
    const tokyo = await user('Asia/Tokyo', '06:30');
    const utc = await user(null, '07:00');
    const all = [lisbon, newYork, tokyo, utc];
    await backdate(query, all);
    await retireOthers(query, all);

    // June 2026: Lisbon is UTC+1, New York UTC-4, Tokyo UTC+9. The first tick finds it evening of the
    // 14th in Lisbon, New York and UTC (their 14th's message is due) and 06:29 of the 15th in Tokyo.
    expect(await tickAt('2026-06-14T21:29:00Z', all)).toEqual([lisbon, newYork, utc]);
    expect(await tickAt('2026-06-14T21:29:30Z', all)).toEqual([]);
    expect(await tickAt('2026-06-14T21:30:00Z', all)).toEqual([tokyo]);
    expect(await tickAt('2026-06-14T21:31:00Z', all)).toEqual([]);
    expect(await tickAt('2026-06-15T05:59:59Z', all)).toEqual([]);
    expect(await tickAt('2026-06-15T06:00:00Z', all)).toEqual([lisbon]);
    expect(await tickAt('2026-06-15T06:00:00Z', all)).toEqual([]);
    expect(await tickAt('2026-06-15T07:00:30Z', all)).toEqual([utc]);
    expect(await tickAt('2026-06-15T10:59:00Z', all)).toEqual([]);
    expect(await tickAt('2026-06-15T11:00:00Z', all)).toEqual([newYork]);
    expect(await tickAt('2026-06-15T18:00:00Z', all)).toEqual([]);
    // The next local day, each again at their own time.
    expect(await tickAt('2026-06-15T21:30:00Z', all)).toEqual([tokyo]);
    expect(await tickAt('2026-06-16T06:00:00Z', all)).toEqual([lisbon]);
    expect(await tickAt('2026-06-16T07:00:00Z', all)).toEqual([utc]);
    expect(await tickAt('2026-06-16T11:05:00Z', all)).toEqual([newYork]);

    expect(await datesOf(query, all)).toEqual({
      [lisbon]: ['2026-06-14', '2026-06-15', '2026-06-16'],
      [newYork]: ['2026-06-14', '2026-06-15', '2026-06-16'],
      [tokyo]: ['2026-06-15', '2026-06-16'],
      [utc]: ['2026-06-14', '2026-06-15', '2026-06-16'],
    });
  });

  it('spring forward: a 02:30 that does not exist is delivered on the first tick after the gap, once', async () => {
    const ny = await user('America/New_York', '02:30');
    await backdate(query, [ny]);
    await retireOthers(query, [ny]);
    // 8 March 2026: 02:00 EST jumps to 03:00 EDT at 07:00 UTC.
    expect(await tickAt('2026-03-08T06:30:00Z', [ny])).toEqual([]); // 01:30 EST
    expect(await tickAt('2026-03-08T06:59:00Z', [ny])).toEqual([]); // 01:59 EST
    expect(await tickAt('2026-03-08T07:00:00Z', [ny])).toEqual([ny]); // 03:00 EDT
    expect(await tickAt('2026-03-08T07:01:00Z', [ny])).toEqual([]);
    expect(await tickAt('2026-03-08T07:30:00Z', [ny])).toEqual([]); // 03:30 EDT
    expect(await datesOf(query, [ny])).toEqual({ [ny]: ['2026-03-08'] });
  });

  it('fall back: a 01:30 that happens twice gives one message', async () => {
    const ny = await user('America/New_York', '01:30');
    await backdate(query, [ny]);
    await retireOthers(query, [ny]);
    // 1 November 2026: 02:00 EDT goes back to 01:00 EST at 06:00 UTC, so 01:00–02:00 repeats.
    expect(await tickAt('2026-11-01T05:29:00Z', [ny])).toEqual([]); // 01:29 EDT
    expect(await tickAt('2026-11-01T05:30:00Z', [ny])).toEqual([ny]); // 01:30 EDT
    expect(await tickAt('2026-11-01T05:59:00Z', [ny])).toEqual([]);
    expect(await tickAt('2026-11-01T06:00:00Z', [ny])).toEqual([]); // 01:00 EST
    expect(await tickAt('2026-11-01T06:30:00Z', [ny])).toEqual([]); // 01:30 EST
    expect(await tickAt('2026-11-01T06:45:00Z', [ny])).toEqual([]);
    expect(await datesOf(query, [ny])).toEqual({ [ny]: ['2026-11-01'] });
    // The next day is a normal one again: 01:30 EST is 06:30 UTC.
    expect(await tickAt('2026-11-02T06:29:00Z', [ny])).toEqual([]);
    expect(await tickAt('2026-11-02T06:30:00Z', [ny])).toEqual([ny]);
  });
});

describe('who gets a message', () => {
  it('skips paused, unverified and inactive users; an account made after today’s time starts tomorrow', async () => {
    const due = await user(null);
    const paused = await user(null);
    const inactive = await user(null);
    const unverified = (await signUp(t)).email;
    const [unverifiedRow] = await query<{ id: number }>(`SELECT id FROM users WHERE email = $1`, [unverified]);
    const unverifiedId = unverifiedRow?.id ?? 0;
    const late = await user(null);
    const early = await user(null);
    const all = [due, paused, inactive, unverifiedId, late, early];
    await backdate(query, [due, paused, inactive, unverifiedId]);
    // Made at 07:01 UTC on the day, after that day's 07:00; and at 06:59, just before it.
    await backdate(query, [late], '2026-07-01T07:01:00Z');
    await backdate(query, [early], '2026-07-01T06:59:00Z');
    await query(`UPDATE users SET is_daily_message_paused = true WHERE id = $1`, [paused]);
    await query(`UPDATE users SET is_active = false WHERE id = $1`, [inactive]);
    await retireOthers(
      query,
      all.filter((id) => id !== paused),
    );

    expect(await tickAt('2026-07-01T09:00:00Z', all)).toEqual([due, early]);
    expect(await tickAt('2026-07-01T23:59:00Z', all)).toEqual([]);
    expect(await tickAt('2026-07-02T06:59:00Z', all)).toEqual([]);
    expect(await tickAt('2026-07-02T07:00:00Z', all)).toEqual([due, late, early]);
    expect(await datesOf(query, all)).toEqual({
      [due]: ['2026-07-01', '2026-07-02'],
      [paused]: [],
      [inactive]: [],
      [unverifiedId]: [],
      [late]: ['2026-07-02'],
      [early]: ['2026-07-01', '2026-07-02'],
    });
  });

  it('a stored time zone the runtime does not know is taken as UTC, not skipped', async () => {
    const u = await user(null, '07:00');
    await backdate(query, [u]);
    await query(`UPDATE users SET time_zone = 'Mars/Olympus_Mons' WHERE id = $1`, [u]);
    await retireOthers(query, [u]);
    expect(await tickAt('2026-08-01T06:59:00Z', [u])).toEqual([]);
    expect(await tickAt('2026-08-01T07:00:00Z', [u])).toEqual([u]);
    expect(await datesOf(query, [u])).toEqual({ [u]: ['2026-08-01'] });
  });

  it('a server down at delivery time delivers today’s when it is back, never a missed day', async () => {
    const u = await user(null, '07:00');
    await backdate(query, [u]);
    await retireOthers(query, [u]);
    // Down from before 07:00 until 10:00: today's message goes out then.
    expect(await tickAt('2026-08-10T10:00:00Z', [u])).toEqual([u]);
    // Down for all of the 11th; back on the 12th before 07:00: the 11th is not sent late.
    expect(await tickAt('2026-08-12T06:00:00Z', [u])).toEqual([]);
    expect(await tickAt('2026-08-12T07:00:00Z', [u])).toEqual([u]);
    expect(await datesOf(query, [u])).toEqual({ [u]: ['2026-08-10', '2026-08-12'] });
  });
});

const onPostgres = inject('testDb').kind === 'postgres';

describe('two schedulers on one database', () => {
  let database: TestDatabase | null = null;
  let second: Database | null = null;
  afterAll(async () => {
    await second?.close();
    await database?.dispose();
  });

  // PGlite is one connection in one process: there is no second scheduler to race with.
  it.skipIf(!onPostgres)(
    'ticking concurrently on two connections claims each due user exactly once (needs PostgreSQL)',
    async () => {
      database = await createTestDatabase();
      if (!database.url) throw new Error('expected a PostgreSQL database');
      second = await openDatabase({ url: database.url, dataDir: null, migrationsDir: '' });
      const db = database.db;
      // 50 verified users, each due a minute after the one before (07:00 … 07:49 in three zones).
      const zones = ['UTC', 'Europe/Lisbon', 'America/New_York'];
      const userIds: number[] = [];
      for (let i = 0; i < 50; i++) {
        const [row] = await db.query<{ id: number }>(
          `INSERT INTO users (email, time_zone, daily_message_time, created_at)
           VALUES ($1, $2, $3, '2026-01-01') RETURNING id`,
          [`sched-${i}@example.com`, zones[i % 3], `07:${String(i).padStart(2, '0')}`],
        );
        if (!row) throw new Error('insert failed');
        userIds.push(row.id);
        await db.query(
          `INSERT INTO email_addresses (user_id, email, verified, "primary") VALUES ($1, $2, true, true)`,
          [row.id, `sched-${i}@example.com`],
        );
      }
      const at = { now: new Date('2026-09-01T00:00:00Z') };
      const sent: number[] = [];
      const schedulerOn = (on: Database) =>
        createDailyService({
          repo: createDailyRepo(on.query),
          users: createUsersService({ repo: createUsersRepo(on.prisma, on.query) }),
          clock: { now: () => at.now },
          log: pino({ level: 'silent' }),
          llm: null,
          weather: null,
          calendar: { eventsForDay: async (_u, date) => ({ date, time_zone: 'UTC', events: [], problems: [] }) },
          research: { unavailable: () => 'off', request: async () => ({ refused: 'off' }), get: async () => null },
          enqueue: async (id) => {
            sent.push(id);
          },
          enqueueMany: async (ids) => {
            sent.push(...ids);
          },
          chat: createChatPostsService({
            repo: createChatRepo(on.query),
            hub: { publish: () => {} },
            clock: { now: () => at.now },
          }),
          delivered: () => {},
          mailer: { send: async () => {}, close: () => {} },
          signer: createSigner('test'),
          publicUrl: 'http://daybook.test',
        });
      const schedulers = [schedulerOn(db), schedulerOn(second)];
      let claimed = 0;
      // Each minute from 06:59 to 07:50 in each zone's local time, the zone whose morning comes first
      // first: four ticks at once, two per instance.
      const minute = 60_000;
      for (const [zone, offsetH] of [
        ['Europe/Lisbon', 1],
        ['UTC', 0],
        ['America/New_York', -4],
      ] as const) {
        const start = Date.parse('2026-09-01T06:59:00Z') - offsetH * 3600_000;
        for (let m = 0; m <= 51; m++) {
          at.now = new Date(start + m * minute);
          const counts = await Promise.all([0, 1, 0, 1].map((i) => schedulers[i]?.tick() ?? 0));
          const due = userIds.filter((_, i) => zones[i % 3] === zone && i === m - 1);
          expect(
            counts.reduce((a, b) => a + b, 0),
            `${zone} minute ${m}`,
          ).toBe(due.length);
          claimed += counts.reduce((a, b) => a + b, 0);
        }
      }
      expect(claimed).toBe(50);
      expect(new Set(sent).size).toBe(50);
      expect(sent).toHaveLength(50);
      const rows = await db.query<{ userId: number; n: number }>(
        `SELECT user_id AS "userId", count(*)::int AS n FROM daily_messages GROUP BY user_id ORDER BY user_id`,
      );
      expect(rows).toEqual(userIds.map((userId) => ({ userId, n: 1 })));
    },
  );
});
