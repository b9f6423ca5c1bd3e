// The load side of `npm run bench`, in a process of its own (forked by scripts/bench.ts), so that
// neither Daybook's event loop nor the bare references' carry the client's work. It holds:
// - autocannon (its API, in this process): HTTP runs at full speed;
// - the open-loop load at a fixed rate (scripts/bench/paced.ts);
// - the zero-latency OpenAI-compatible model Daybook talks to, and the simulated chat users whose
//   server-added time per turn it measures (as scripts/bench-chat-load.ts does);
// - clients of the bare ws echo server, paced like the chat users;
// - the idle authenticated chat sockets whose cost the server's RSS shows.
// The parent sends requests over IPC ({ id, type, ... }) and gets { id, result } or { id, error }.
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { startFakeOpenAI } from '../../tests/helpers/fake-openai.ts';
import { paced } from './paced.ts';
import type { ChatServer, HttpRun, LoadRequest, TurnTimes } from './protocol.ts';

if (!process.send) throw new Error('run by scripts/bench.ts (forked)');
const send = (message: object) => process.send?.(message);

const fake = await startFakeOpenAI({ keep: 'last' });
fake.onChat(() => ({ text: 'Sure, here is a short answer.', chunks: 4 }));

const TURN_TIMEOUT_MS = 30_000;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The last "{n}" sent (see http). */
let n = 0;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/**
 * One autocannon run at full speed. Latencies come from every 2xx response's own time (autocannon's
 * float ms), not from its histogram, which keeps whole ms.
 */
async function http(req: Extract<LoadRequest, { type: 'http' }>): Promise<HttpRun> {
  const times: number[] = [];
  // A "{n}" in the address becomes 1, 2, 3... request by request (a new search text each time),
  // counting on across runs so a later run never repeats an earlier one's texts.
  const { origin } = new URL(req.url.replace('{n}', '0'));
  const path = req.url.slice(origin.length);
  const instance = autocannon({
    url: origin,
    connections: req.connections,
    duration: req.seconds,
    headers: req.headers,
    requests: [
      {
        method: 'GET',
        path: path.replace('{n}', '0'),
        setupRequest: (r) => ({ ...r, path: path.replace('{n}', String(++n)) }),
      },
    ],
  });
  instance.on('response', (_client, status, _bytes, responseTime) => {
    if (status >= 200 && status < 300) times.push(responseTime);
  });
  const result = await instance;
  times.sort((a, b) => a - b);
  return {
    rps: times.length / (result.duration || req.seconds),
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    max: times.at(-1) ?? Number.NaN,
    ok: times.length,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** Opens a socket and waits for its first frame (Daybook's history; the echo server sends none). */
function openSocket(url: string, headers: Record<string, string>, waitForFrame: boolean): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers });
  return new Promise<WebSocket>((resolve, reject) => {
    const fail = (err: Error) => reject(err);
    ws.once('error', fail);
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason.toString()}`)));
    const done = () => {
      ws.off('error', fail);
      ws.removeAllListeners('close');
      ws.on('error', () => {});
      resolve(ws);
    };
    if (waitForFrame) ws.once('message', done);
    else ws.once('open', done);
  });
}

/** One turn's times in ms; `before` and `after` split the server's part at the model. */
type Turn = { total: number; server: number; before: number; after: number };

/** Daybook: total turn time, and the server's share (frame sent → model request; model done → reply). */
function chatTurn(ws: WebSocket, text: string): Promise<Turn> {
  const start = now();
  return new Promise((resolve) => {
    // A reply that never comes is a lost turn (NaN), not a benchmark that never ends.
    const timer = setTimeout(() => {
      ws.off('message', onMessage);
      resolve({ total: Number.NaN, server: Number.NaN, before: Number.NaN, after: Number.NaN });
    }, TURN_TIMEOUT_MS);
    const onMessage = (data: WebSocket.RawData) => {
      if (JSON.parse(data.toString()).message_type !== 'markdown') return;
      clearTimeout(timer);
      ws.off('message', onMessage);
      const end = now();
      const i = fake.requests.findLastIndex((r) => r.stream && r.messages.at(-1)?.content === text);
      const t = fake.timings[i];
      const server = t
        ? performance.timeOrigin + t.receivedAt - start + (end - (performance.timeOrigin + t.finishedAt))
        : Number.NaN;
      const before = t ? performance.timeOrigin + t.receivedAt - start : Number.NaN;
      resolve({ total: end - start, server, before, after: server - before });
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text }));
  });
}

const noTurns = (): TurnTimes => ({ totals: [], server: [], before: [], after: [] });

function keep(into: TurnTimes, t: Turn) {
  into.totals.push(t.total);
  into.server.push(t.server);
  into.before.push(t.before);
  into.after.push(t.after);
}

/** The bare echo server: the round trip of the same frame. */
function echoTurn(ws: WebSocket, text: string): Promise<Turn> {
  const frame = JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text });
  const start = now();
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      if (data.toString() !== frame) return;
      ws.off('message', onMessage);
      const total = now() - start;
      resolve({ total, server: total, before: total, after: 0 });
    };
    ws.on('message', onMessage);
    ws.send(frame);
  });
}

/** `users` sockets, one warm-up turn each, then `turns` turns each with people's pauses between. */
async function conversation(req: Extract<LoadRequest, { type: 'chat' | 'echo' }>): Promise<TurnTimes> {
  const isChat = req.type === 'chat';
  const headers = (i: number): Record<string, string> =>
    isChat ? { cookie: req.cookies[i] ?? '', origin: req.origin } : { origin: req.origin };
  const count = isChat ? req.cookies.length : req.users;
  const sockets = await Promise.all(Array.from({ length: count }, (_, i) => openSocket(req.wsUrl, headers(i), isChat)));
  const turn = isChat ? chatTurn : echoTurn;
  // One unmeasured turn per user first, paced as the measured ones: the numbers describe a warm
  // server (compiled code, and as many database connections as this load keeps busy), as a server
  // that has been answering for a while is. One at a time, the turns warmed a single connection,
  // and the measured turns paid for opening the rest.
  await Promise.all(
    sockets.map(async (ws, i) => {
      await sleep(Math.random() * req.thinkMs);
      await turn(ws, `Warm-up from user ${i} (${req.type})`);
    }),
  );
  // This process held every latency of the HTTP runs before: a collection of that heap in the middle
  // of the turns would be counted as the server's time (a first chat run after them measured 128 ms).
  (globalThis as { gc?: () => void }).gc?.();
  const times = noTurns();
  await Promise.all(
    sockets.map(async (ws, i) => {
      await sleep(Math.random() * req.thinkMs);
      for (let n = 0; n < req.turns; n++) {
        if (n) await sleep(req.thinkMs * (0.5 + Math.random()));
        keep(times, await turn(ws, `Message ${n} from user ${i}: what should I read this week?`));
      }
    }),
  );
  for (const ws of sockets) ws.close();
  return times;
}

/**
 * Two Daybooks in turn: a round of one message from every user (each sent within `thinkMs`, so the
 * same rate as a conversation), on one and then the other, which going first alternating. Both
 * thus meet the machine's slow seconds alike; whole runs one after the other met different ones,
 * and the two builds swapped places from one run of the suite to the next.
 */
async function chatPair(req: Extract<LoadRequest, { type: 'chat-pair' }>): Promise<[TurnTimes, TurnTimes]> {
  const open = (s: ChatServer) =>
    Promise.all(s.cookies.map((cookie) => openSocket(s.wsUrl, { cookie, origin: s.origin }, true)));
  const sides: [WebSocket[], WebSocket[]] = [await open(req.servers[0]), await open(req.servers[1])];
  const times: [TurnTimes, TurnTimes] = [noTurns(), noTurns()];
  const round = (side: 0 | 1, label: string, kept: boolean) =>
    Promise.all(
      sides[side].map(async (ws, i) => {
        await sleep(Math.random() * req.thinkMs);
        const t = await chatTurn(ws, `${label} from user ${i} (${'ab'[side]}): what should I read this week?`);
        if (kept) keep(times[side], t);
      }),
    );
  // Unmeasured first, as in `conversation`.
  await round(0, 'Warm-up', false);
  await round(1, 'Warm-up', false);
  (globalThis as { gc?: () => void }).gc?.();
  for (let n = 0; n < req.turns; n++) {
    for (const side of n % 2 ? ([1, 0] as const) : ([0, 1] as const)) await round(side, `Message ${n}`, true);
  }
  for (const ws of sides.flat()) ws.close();
  return times;
}

let idle: WebSocket[] = [];

/** Opens one socket per cookie, `parallel` at a time, each waiting for its history; they stay open. */
async function openIdle(req: Extract<LoadRequest, { type: 'open-idle' }>) {
  let next = 0;
  const failures = new Map<string, number>();
  const started = performance.now();
  const worker = async () => {
    while (next < req.cookies.length) {
      const cookie = req.cookies[next++] ?? '';
      try {
        idle.push(await openSocket(req.wsUrl, { cookie, origin: req.origin }, true));
      } catch (err) {
        const reason = (err as Error).message;
        failures.set(reason, (failures.get(reason) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: req.parallel }, worker));
  return {
    open: idle.filter((ws) => ws.readyState === WebSocket.OPEN).length,
    failures: Object.fromEntries(failures),
    seconds: (performance.now() - started) / 1000,
  };
}

async function closeIdle() {
  const closing = idle.map(
    (ws) =>
      new Promise((r) => {
        ws.once('close', r);
        ws.close();
      }),
  );
  await Promise.race([Promise.all(closing), sleep(5000)]);
  for (const ws of idle) ws.terminate();
  idle = [];
  return { closed: closing.length };
}

const handlers: { [K in LoadRequest['type']]: (req: Extract<LoadRequest, { type: K }>) => Promise<unknown> } = {
  http,
  paced,
  chat: conversation,
  'chat-pair': chatPair,
  echo: conversation,
  'open-idle': openIdle,
  'close-idle': closeIdle,
  close: async () => {
    await closeIdle();
    await fake.close();
    setImmediate(() => process.exit(0));
    return {};
  },
};

process.on('message', (req: LoadRequest & { id: number }) => {
  const handler = handlers[req.type] as (r: LoadRequest) => Promise<unknown>;
  handler(req).then(
    (result) => send({ id: req.id, result }),
    (err: Error) => send({ id: req.id, error: err.stack ?? err.message }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', modelUrl: fake.baseUrl });
