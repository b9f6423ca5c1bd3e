// The model queue on a real database: the limit holds across processes (two gates sharing the
// table stand for an app instance and a worker), the chat goes first and keeps its reserve, users
// take turns within a priority, and a waiter that gives up or a process that dies holds nothing.
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { waitFor } from '../../../../../tests/helpers/wait-for.ts';
import { createModelGateRepo, type ModelGateRepo } from './model.gate.repo.ts';
import { chatReserve, createModelGate, type ModelGate, type Priority } from './model.gate.ts';

const log = pino({ level: 'silent' });
let t: TestDatabase;
let repo: ModelGateRepo;
const gates: ModelGate[] = [];
let endpointN = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  repo = createModelGateRepo(t.db.query);
});
afterEach(async () => {
  await Promise.all(gates.splice(0).map((g) => g.close()));
});
afterAll(() => t.dispose());

/** Gates on one endpoint of their own (each test has its queue), like processes of one installation. */
function installation(limit: number, processes = 1) {
  const endpoint = `http://model-${++endpointN}.test/v1`;
  const made = Array.from({ length: processes }, () => createModelGate({ repo, endpoint, limit, log, pollMs: 20 }));
  gates.push(...made);
  return made;
}

/** The queue of the latest endpoint after one more pass (as any process's would run): rows granted and waiting. */
async function settled(limit: number) {
  const endpoint = `http://model-${endpointN}.test/v1`;
  await repo.pass({ endpoint, limit, reserve: chatReserve(limit), staleSeconds: 20, mine: [] });
  const [row] = await t.db.query<{ granted: number; waiting: number }>(
    `SELECT count(*) FILTER (WHERE granted)::int AS granted, count(*) FILTER (WHERE NOT granted)::int AS waiting
       FROM model_permits WHERE endpoint = $1`,
    [endpoint],
  );
  return row;
}

/** A call that records when it got its permit; `done()` gives it back. */
function call(gate: ModelGate, priority: Priority, order: string[], name: string, userId?: number) {
  let release: (() => Promise<void>) | undefined;
  const granted = gate.acquire({ priority, userId }).then((r) => {
    release = r;
    order.push(name);
  });
  return {
    granted,
    isGranted: () => release !== undefined,
    done: async () => {
      await granted;
      await release?.();
    },
  };
}

describe('the model queue', () => {
  it('keeps a quarter of the permits for the chat, at least one from two', () => {
    expect([1, 2, 3, 4, 8, 16].map(chatReserve)).toEqual([0, 1, 1, 1, 2, 4]);
  });

  it('holds the limit across processes, and gives a permit given back to the next in line', async () => {
    const [app, worker] = installation(3, 2) as [ModelGate, ModelGate];
    const order: string[] = [];
    // Background work may take 2 of 3 (one is the chat's).
    const b1 = call(worker, 'background', order, 'b1', 1);
    const b2 = call(app, 'background', order, 'b2', 2);
    await Promise.all([b1.granted, b2.granted]);
    const b3 = call(worker, 'background', order, 'b3', 3);
    const chat = call(app, 'chat', order, 'chat', 4);
    await chat.granted;
    const chat2 = call(worker, 'chat', order, 'chat2', 5);
    // Three running: the others wait, whatever their priority, until one ends.
    await waitFor('both to queue', async () => ((await settled(3))?.waiting === 2 ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 10,
    });
    expect(await settled(3)).toEqual({ granted: 3, waiting: 2 });
    expect(b3.isGranted() || chat2.isGranted()).toBe(false);
    await b1.done();
    await chat2.granted;
    expect(b3.isGranted()).toBe(false);
    // Two running (b2, chat2): background work may not take the chat's last permit.
    await chat.done();
    expect(await settled(3)).toEqual({ granted: 2, waiting: 1 });
    expect(b3.isGranted()).toBe(false);
    await b2.done();
    await b3.granted;
    expect(order.slice(0, 2).sort()).toEqual(['b1', 'b2']);
    expect(order.slice(2)).toEqual(['chat', 'chat2', 'b3']);
    await Promise.all([b3.done(), chat2.done()]);
  });

  it('puts research before background work, and within a priority the user with fewer calls first', async () => {
    const [gate] = installation(3) as [ModelGate];
    const order: string[] = [];
    const waitingRows = async (n: number) =>
      waitFor(
        `${n} calls waiting`,
        async () => {
          const [row] = await t.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM model_permits WHERE NOT granted AND endpoint = $1',
            [`http://model-${endpointN}.test/v1`],
          );
          return row?.n === n || undefined;
        },
        { timeoutMs: 5000, intervalMs: 10 },
      );
    // User 1 and user 2 each have a call running: the two permits beyond the chat's.
    const u1 = call(gate, 'research', order, 'u1 running', 1);
    const u2 = call(gate, 'research', order, 'u2 running', 2);
    await Promise.all([u1.granted, u2.granted]);
    const a = call(gate, 'background', order, 'background (user 1)', 1);
    await waitingRows(1);
    const b = call(gate, 'background', order, 'background (user 3)', 3);
    await waitingRows(2);
    const r = call(gate, 'research', order, 'research (user 4)', 4);
    await waitingRows(3);
    await u2.done();
    await r.granted;
    await r.done();
    // User 3 has nothing running, user 1 has a call: user 3 goes first though user 1 asked earlier.
    await b.granted;
    await b.done();
    await a.granted;
    await Promise.all([a.done(), u1.done()]);
    expect(order.slice(2)).toEqual(['research (user 4)', 'background (user 3)', 'background (user 1)']);
  });

  it('lets a call give up while it waits, holding nothing', async () => {
    const [gate] = installation(1) as [ModelGate];
    const order: string[] = [];
    const running = call(gate, 'chat', order, 'running');
    await running.granted;
    const stop = new AbortController();
    const waiting = gate.acquire({ priority: 'chat', signal: stop.signal });
    stop.abort(new Error('stopped by the user'));
    await expect(waiting).rejects.toThrow('stopped by the user');
    await running.done();
    const next = call(gate, 'chat', order, 'next');
    await next.granted;
    await next.done();
  });

  it('says when a call has waited, and when its turn came', async () => {
    const [gate] = installation(1) as [ModelGate];
    const order: string[] = [];
    const running = call(gate, 'chat', order, 'running');
    await running.granted;
    const said: boolean[] = [];
    const waiting = gate.acquire({ priority: 'research', onWait: (w) => said.push(w) });
    await waitFor('the wait to be said', () => said.length === 1 || undefined, { timeoutMs: 5000, intervalMs: 20 });
    expect(said).toEqual([true]);
    await running.done();
    const release = await waiting;
    expect(said).toEqual([true, false]);
    await release();
  });

  it('drops the permits of a process that stopped refreshing them', async () => {
    const endpoint = `http://model-${++endpointN}.test/v1`;
    // A process that died holding the only permit a minute ago.
    const { id } = await repo.ask({
      endpoint,
      limit: 1,
      reserve: 0,
      staleSeconds: 20,
      mine: [],
      wait: { priority: 0, userId: null, holder: 'dead:1' },
    });
    await t.db.query(`UPDATE model_permits SET heartbeat_at = heartbeat_at - interval '1 minute' WHERE id = $1`, [id]);
    const gate = createModelGate({ repo, endpoint, limit: 1, log, pollMs: 20 });
    gates.push(gate);
    const release = await gate.acquire({ priority: 'chat' });
    await release();
  });
});
