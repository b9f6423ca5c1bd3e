// The realtime bus carriers against real servers: PostgreSQL (LISTEN/NOTIFY on a database of the
// test's own) and Redis (the local server; scripts/ensure-test-env.sh starts it).
import type { TServerEvent } from '@daybook/contracts';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { waitFor } from '../../../../../tests/helpers/wait-for.ts';
import {
  createMemoryBus,
  createPostgresBus,
  createRedisBus,
  type RealtimeBus,
  type RealtimeEvent,
} from './realtime.bus.ts';

const log = pino({ level: 'silent' });
const onPostgres = inject('testDb').kind === 'postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const chat = (userId: number, text: string): RealtimeEvent => ({
  type: 'chat',
  userId,
  channel: 'chat',
  event: { message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: text } as TServerEvent,
});
const texts = (events: RealtimeEvent[]) =>
  events.map((e) => (e.type === 'chat' ? (e.event as { raw_text: string }).raw_text : e.type));

/** A bus and what reached its handler. */
function listen(bus: RealtimeBus) {
  const got: RealtimeEvent[] = [];
  bus.subscribe((e) => got.push(e));
  return got;
}

describe('memory bus', () => {
  it('delivers to its handlers at once, in order, and a failing handler does not stop the others', () => {
    const bus = createMemoryBus(log);
    bus.subscribe(() => {
      throw new Error('boom');
    });
    const got = listen(bus);
    bus.publish(chat(1, 'a'));
    bus.publish({ type: 'sessions-ended', ended: { userId: 1 } });
    expect(texts(got)).toEqual(['a', 'sessions-ended']);
  });
});

describe('PostgreSQL bus', () => {
  let database: TestDatabase;
  const buses: RealtimeBus[] = [];
  const open = async (pruneMs?: number) => {
    if (!database.url) throw new Error('needs PostgreSQL');
    const bus = createPostgresBus({ url: database.url, query: database.db.query, log, pruneMs });
    buses.push(bus);
    const got = listen(bus);
    await bus.start();
    return { bus, got };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await database.dispose();
  });

  it.runIf(onPostgres)(
    'carries events to another instance in order, once, and the publisher delivers its own at once',
    async () => {
      const a = await open();
      const b = await open();
      const sent = Array.from({ length: 450 }, (_, i) => `token ${i}`);
      for (const text of sent) a.bus.publish(chat(7, text));
      // The publisher's own handler had them synchronously, before any round trip.
      expect(texts(a.got)).toEqual(sent);
      await waitFor('the other instance', () => b.got.length >= sent.length, { timeoutMs: 5000 });
      expect(texts(b.got)).toEqual(sent);
      // Sessions and settings travel too. Notifications reach a listener in the order they were
      // sent: once b's arrive at a, so have a's own, which must not have been delivered again.
      b.bus.publish({ type: 'sessions-ended', ended: { ids: ['s-1'] } });
      b.bus.publish({ type: 'user-settings', userId: 7, settings: { learnFromChats: false } });
      await waitFor('events from b', () => a.got.some((e) => e.type === 'user-settings'), { timeoutMs: 5000 });
      expect(a.got).toHaveLength(sent.length + 2);
      expect(a.got.slice(-2)).toEqual([
        { type: 'sessions-ended', ended: { ids: ['s-1'] } },
        { type: 'user-settings', userId: 7, settings: { learnFromChats: false } },
      ]);
      // Likewise at b: once a's next event arrives, nothing of a's came twice, and b's own did not come back.
      a.bus.publish(chat(7, 'last'));
      await waitFor('the last event at b', () => texts(b.got).includes('last'), { timeoutMs: 5000 });
      expect(texts(b.got)).toEqual([...sent, 'sessions-ended', 'user-settings', 'last']);
    },
  );

  it.runIf(onPostgres)('replays what was sent while its listening connection was down, without repeats', async () => {
    const a = await open();
    const b = await open();
    a.bus.publish(chat(8, 'before'));
    await waitFor('the first event', () => b.got.length === 1, { timeoutMs: 5000 });
    // Cut every listening connection to this database (as a network drop or a restarted server would).
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'daybook-realtime' AND datname = current_database() AND pid <> pg_backend_pid()`,
    );
    await admin.end();
    a.bus.publish(chat(8, 'while down 1'));
    a.bus.publish(chat(8, 'while down 2'));
    await waitFor('the replay', () => b.got.length === 3, { timeoutMs: 15_000 });
    a.bus.publish(chat(8, 'after'));
    await waitFor('live events again', () => b.got.length === 4, { timeoutMs: 5000 });
    // Reads are delivered one after another, in order: once a later event is in, any repeat is too.
    a.bus.publish(chat(8, 'last'));
    await waitFor('the last event', () => texts(b.got).includes('last'), { timeoutMs: 5000 });
    expect(texts(b.got)).toEqual(['before', 'while down 1', 'while down 2', 'after', 'last']);
  });

  it.runIf(onPostgres)('deletes old events and keeps recent ones', async () => {
    const a = await open(100);
    a.bus.publish(chat(9, 'recent'));
    const recentStored = async () =>
      (await database.db.query(`SELECT 1 FROM realtime_events WHERE payload->'event'->>'raw_text' = 'recent'`)).length >
      0;
    await waitFor('the recent event to be stored', recentStored, { timeoutMs: 5000 });
    // Written after the recent one: once the pruning has deleted it, the pruning ran with the recent one there.
    await database.db.query(
      `INSERT INTO realtime_events (origin, payload, created_at) VALUES ('old', '{}', now() - interval '1 hour')`,
    );
    await waitFor(
      'the pruning to delete the old event',
      async () => (await database.db.query(`SELECT 1 FROM realtime_events WHERE origin = 'old'`)).length === 0,
      { timeoutMs: 5000 },
    );
    const rows = await database.db.query<{ origin: string }>('SELECT origin FROM realtime_events');
    expect(rows.map((r) => r.origin)).not.toContain('old');
    expect(rows.length).toBeGreaterThan(0);
    expect(await recentStored()).toBe(true);
  });
});

describe('Redis bus', () => {
  const buses: RealtimeBus[] = [];
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
  });

  it('carries events to another instance in order, once', async () => {
    const a = createRedisBus({ url: REDIS_URL, log });
    const b = createRedisBus({ url: REDIS_URL, log });
    buses.push(a, b);
    const gotA = listen(a);
    const gotB = listen(b);
    await Promise.all([a.start(), b.start()]);
    const user = Math.floor(Math.random() * 1e9);
    const sent = Array.from({ length: 100 }, (_, i) => `r${i}`);
    for (const text of sent) a.publish(chat(user, text));
    expect(texts(gotA)).toEqual(sent);
    await waitFor('b', () => gotB.filter((e) => e.type === 'chat' && e.userId === user).length === sent.length, {
      timeoutMs: 5000,
    });
    expect(texts(gotB.filter((e) => e.type === 'chat' && e.userId === user))).toEqual(sent);
    // Redis sends a subscriber the messages in the order it took them: once b's answer reaches a,
    // a's own have come back to it, and must not have been delivered again.
    b.publish(chat(user, 'from b'));
    const mine = () => texts(gotA.filter((e) => e.type === 'chat' && e.userId === user));
    await waitFor('the event from b at a', () => mine().includes('from b'), { timeoutMs: 5000 });
    expect(mine()).toEqual([...sent, 'from b']);
  });
});
