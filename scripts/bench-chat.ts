// Chat speed, over real WebSockets against a zero-latency OpenAI-compatible fake model:
// - server-added latency per turn (message sent → final reply received) with 100 concurrent users;
// - prompt size with 10 memories versus 5,000 memories (the prompt must stay bounded).
// Prints numbers; it asserts nothing. Run with `npm run bench`.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../apps/server/src/app.ts';
import { loadConfig } from '../apps/server/src/config.ts';
import { BENCH_ORIGIN, benchSettings } from './lib/bench-settings.ts';
import { signUpBenchUser } from './lib/bench-users.ts';
import { scratchDatabase } from './lib/scratch-db.ts';

const USERS = Number(process.env.BENCH_USERS ?? 100);
const TURNS = Number(process.env.BENCH_TURNS ?? 5);
// People pause between messages; 0 turns the benchmark into a flood test.
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000);

// The fake model and the simulated users run in a worker thread: the server's event loop is its own.
// A worker cannot start from a .ts file, so it first registers tsx, then imports the load script.
const tsxApi = import.meta.resolve('tsx/esm/api');
const loadScript = new URL('./bench-chat-load.ts', import.meta.url).href;
const worker = new Worker(
  `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(loadScript)}); });`,
  {
    eval: true,
    workerData: { turns: TURNS, thinkMs: THINK_MS },
  },
);
const ask = <T>(message: object, type: string) =>
  new Promise<T>((resolve) => {
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== type) return;
      worker.off('message', onMessage);
      resolve(reply as T);
    };
    worker.on('message', onMessage);
    if (Object.keys(message).length) worker.postMessage(message);
  });
const fake = await ask<{ baseUrl: string }>({}, 'fake');
const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-chat-'));
// With DATABASE_URL, the benchmark runs on a scratch database it creates on that server and drops
// afterwards (as a 100-user install would run PostgreSQL); without it, on embedded PGlite.
const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : null;
const config = loadConfig(benchSettings({ dataDir, scratch, llmBaseUrl: fake.baseUrl }));
const app = await buildApp(config);
console.log(
  `Database: ${scratch ? 'PostgreSQL (a scratch database on DATABASE_URL)' : 'embedded PGlite (set DATABASE_URL to measure with PostgreSQL)'}`,
);
const base = await app.listen({ host: '127.0.0.1', port: 0 });

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** A signed-in user's cookie header, from a real signup. */
async function newUser(i: number, token: string) {
  const remoteAddress = `10.9.${Math.floor(i / 250)}.${(i % 250) + 1}`;
  const origin = BENCH_ORIGIN;
  const { cookie, csrf } = await signUpBenchUser(app, {
    token,
    email: `bench-${i}@example.com`,
    remoteAddress,
    origin,
  });
  if (process.env.BENCH_LEARN === '0') {
    await app.inject({
      method: 'PATCH',
      url: '/api/users/me/',
      remoteAddress,
      headers: { cookie, 'x-csrftoken': csrf, origin },
      payload: { learn_from_chats: false },
    });
  }
  return cookie;
}

try {
  const { token } = await app.invites.create({ maxUses: USERS + 2 });
  console.log(`Creating ${USERS} users...`);
  const cookies: string[] = [];
  for (let i = 0; i < USERS; i++) cookies.push(await newUser(i, token));
  const wsUrl = `${base.replace(/^http/, 'ws')}/ws/chat/`;

  console.log(`${USERS} users, ${TURNS} turns each, ~${THINK_MS} ms between a user's messages, zero-latency model:`);
  const eluBefore = performance.eventLoopUtilization();
  const load = await ask<{ totals: number[]; server: number[] }>({ type: 'load', wsUrl, cookies }, 'load');
  const elu = performance.eventLoopUtilization(eluBefore);
  const totals = load.totals.sort((a, b) => a - b);
  const server = load.server.sort((a, b) => a - b);
  const ms = (list: number[], p: number) => percentile(list, p).toFixed(1);
  console.log(
    `  server-added  p50 ${ms(server, 50)} ms   p99 ${ms(server, 99)} ms   (${server.length} turns; target p99 < 20 ms)`,
  );
  console.log(`  whole turn    p50 ${ms(totals, 50)} ms   p99 ${ms(totals, 99)} ms`);
  console.log(
    `  server-added  p90 ${ms(server, 90)} ms   p95 ${ms(server, 95)} ms   p99.9 ${ms(server, 99.9)} ms   max ${(server.at(-1) ?? 0).toFixed(1)} ms`,
  );
  // Busy time of the server's event loop per turn (reply and learning): what queueing grows from.
  const turnsRun = totals.length + USERS;
  console.log(
    `  server busy   ${(elu.utilization * 100).toFixed(0)}% of the time, ${(elu.active / turnsRun).toFixed(2)} ms per turn`,
  );

  // Prompt size: the same question with few and with very many memories.
  const promptTokens = async (cookie: string) => {
    const text = 'What do you know about my hobbies and the books I like?';
    const { chars } = await ask<{ chars: number }>({ type: 'prompt', wsUrl, cookie, text }, 'prompt');
    return Math.ceil(chars / 4);
  };
  const seed = async (cookie: string, count: number) => {
    const csrf = /csrftoken=([^;]+)/.exec(cookie)?.[1] ?? '';
    const memories = Array.from({ length: count }, (_, i) => ({
      key: `fact ${i}`,
      data: `The user likes topic number ${i}, books about ${['history', 'space', 'cooking', 'music'][i % 4]} and hobby ${i % 50}.`,
      memory_type: i % 3 ? 'interest' : 'text',
    }));
    const res = await app.inject({
      method: 'POST',
      url: '/api/memories/import/',
      headers: { cookie, 'x-csrftoken': csrf, origin: BENCH_ORIGIN },
      payload: { memories },
    });
    if (res.statusCode !== 200) throw new Error(res.body);
  };
  const few = await newUser(USERS, token);
  const many = await newUser(USERS + 1, token);
  await seed(few, 10);
  await seed(many, 5000);
  const small = await promptTokens(few);
  const large = await promptTokens(many);
  console.log(
    `  prompt size   10 memories: ~${small} tokens   5,000 memories: ~${large} tokens   growth ${(large / small).toFixed(2)}x (target ≤ 1.5x)`,
  );
} finally {
  // Let the learning calls that follow the last replies finish before closing the database.
  await new Promise((r) => setTimeout(r, 1000));
  await app.close();
  worker.postMessage({ type: 'close' });
  await rm(dataDir, { recursive: true, force: true });
  await scratch?.drop();
}
