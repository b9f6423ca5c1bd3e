// Attacks on the PostgreSQL realtime bus: text PostgreSQL's jsonb refuses (a NUL, half of a
// surrogate pair) in one user's event must not lose the other users' events sent with it, rows
// that are not events must not stop the ones read with them, and a large event still travels.
import type { TServerEvent } from '@daybook/contracts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { waitFor } from '../../../../../tests/helpers/wait-for.ts';
import { createChatHub, type Subscriber } from '../chat/chat.hub.ts';
import { createPostgresBus, type RealtimeBus, type RealtimeEvent } from './realtime.bus.ts';

const log = pino({ level: 'silent' });
const onPostgres = inject('testDb').kind === 'postgres';

const chat = (userId: number, text: string): RealtimeEvent => ({
  type: 'chat',
  userId,
  channel: 'chat',
  event: { message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: text } as TServerEvent,
});

/** A socket of `userId` on a hub: what reaches it. */
function socketOf(hub: ReturnType<typeof createChatHub>, userId: number) {
  const got: string[] = [];
  const subscriber: Subscriber = {
    channel: 'chat',
    user: { id: userId, learnFromChats: true, onboarded: true },
    sessionId: `session-${userId}`,
    send: (event) => got.push((event as { raw_text: string }).raw_text),
    close: () => {},
  };
  hub.add(userId, subscriber);
  return got;
}

describe.runIf(onPostgres)('the PostgreSQL bus under attack', () => {
  let database: TestDatabase;
  const buses: RealtimeBus[] = [];
  const open = async () => {
    if (!database.url) throw new Error('needs PostgreSQL');
    const bus = createPostgresBus({ url: database.url, query: database.db.query, log });
    buses.push(bus);
    const hub = createChatHub(bus);
    await bus.start();
    return { bus, hub };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await database.dispose();
  });

  it("carries other users' events sent together with one that holds a NUL or half a surrogate pair", async () => {
    const a = await open();
    const b = await open();
    const mallory = socketOf(b.hub, 101);
    const alice = socketOf(b.hub, 102);
    // One flush: the same INSERT carries all three.
    a.hub.publish(101, 'chat', streamOf('half \ud83d pair'));
    a.hub.publish(101, 'chat', streamOf('nul \u0000 byte'));
    a.hub.publish(102, 'chat', streamOf('hello alice'));
    await waitFor("alice's event on the other instance", () => alice.length === 1, { timeoutMs: 5000 });
    expect(alice).toEqual(['hello alice']);
    await waitFor("mallory's events", () => mallory.length === 2, { timeoutMs: 5000 });
    expect(mallory).toEqual(['half \ufffd pair', 'nul \ufffd byte']);
  });

  it('delivers the events read together with rows that are not events', async () => {
    const a = await open();
    const b = await open();
    const alice = socketOf(b.hub, 201);
    const rows = await database.db.query<{ id: string }>(
      `INSERT INTO realtime_events (origin, payload)
       VALUES ('elsewhere', 'null'), ('elsewhere', '"text"'), ('elsewhere', '{"type":"chat"}'),
              ('elsewhere', '{"type":"user-settings","userId":201,"settings":null}'),
              ('elsewhere', $1::jsonb)
       RETURNING id::text AS id`,
      [JSON.stringify(chat(201, 'after the poison'))],
    );
    await database.db.query(`SELECT pg_notify('daybook_realtime', $1)`, [
      `elsewhere:${rows.map((r) => r.id).join(',')}`,
    ]);
    await waitFor('the event after the poison rows', () => alice.length === 1, { timeoutMs: 5000 });
    // The bus still works for what comes next.
    a.hub.publish(201, 'chat', streamOf('and later'));
    await waitFor('a later event', () => alice.length === 2, { timeoutMs: 5000 });
    expect(alice).toEqual(['after the poison', 'and later']);
  });

  it('carries a large event (a long research report) whole', async () => {
    const a = await open();
    const b = await open();
    const alice = socketOf(b.hub, 301);
    const big = 'report '.repeat(300_000);
    a.hub.publish(301, 'chat', streamOf(big));
    await waitFor('the large event', () => alice.length === 1, { timeoutMs: 5000 });
    expect(alice[0]).toBe(big);
  });
});

function streamOf(text: string): TServerEvent {
  return { message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: text } as TServerEvent;
}
