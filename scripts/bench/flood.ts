// `npm run bench:flood` (formerly the end of `npm run bench`): one user floods, another user's
// GET /api/memories/ is timed, as a ratio against the same request without the flood. Two floods:
// - exports (issue 30): a user with BENCH_EXPORT_MEMORIES memories (5,000) downloads
//   /api/memories/export/ in a loop from BENCH_EXPORT_CLIENTS (4) clients at once, asking again at
//   once when refused (an attacker), while the other user's page is requested at a steady
//   BENCH_EXPORT_RATE (50/s; latency from when each request was due, scripts/bench/paced.ts) for
//   BENCH_EXPORT_SECONDS (10) alone and as long during the flood. The exit code is 1 when the p50
//   grows more than BENCH_EXPORT_MAX_RATIO (2) times.
// - searches: one user with BENCH_FLOOD_MEMORIES memories (17,000) runs searches and the chat
//   prompt's memory selection, BENCH_FLOOD_CONCURRENCY (8) at a time (0 memories skips it).
// Also p50/p99 of a few cheap endpoints. The server runs in this process (a scratch database on
// DATABASE_URL's server, by default the local PostgreSQL; DATABASE_URL= runs on embedded PGlite);
// the export flood's clients run in a worker thread of their own, so downloading does not share the
// server's event loop. These are ratios within one process, not throughput; `npm run bench`
// measures that.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../../apps/server/src/app.ts';
import { loadConfig } from '../../apps/server/src/config.ts';
import { MEMORY_SELECTION } from '../../apps/server/src/modules/assistant/prompt.ts';
import { selectionQuery } from '../../apps/server/src/modules/memories/memories.repo.ts';
import { signUpBenchUser } from '../lib/bench-users.ts';
import { scratchDatabase } from '../lib/scratch-db.ts';
import { paced } from './paced.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const FLOOD_MEMORIES = Number(process.env.BENCH_FLOOD_MEMORIES ?? 17_000);
const FLOOD_CONCURRENCY = Number(process.env.BENCH_FLOOD_CONCURRENCY ?? 8);
const FLOOD_PROBES = Number(process.env.BENCH_FLOOD_PROBES ?? 200);
const EXPORT_MEMORIES = Number(process.env.BENCH_EXPORT_MEMORIES ?? 5000);
const EXPORT_CLIENTS = Number(process.env.BENCH_EXPORT_CLIENTS ?? 4);
const EXPORT_RATE = Number(process.env.BENCH_EXPORT_RATE ?? 50);
const EXPORT_SECONDS = Number(process.env.BENCH_EXPORT_SECONDS ?? 10);
const EXPORT_MAX_RATIO = Number(process.env.BENCH_EXPORT_MAX_RATIO ?? 2);
// Words that recur across memories and searches, as a user's do.
const WORDS = ['coffee', 'garden', 'running', 'lisbon', 'guitar', 'python', 'sister', 'ferry', 'bread', 'chess'];

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(url: string) {
  const times: number[] = [];
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const start = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      if (!res.ok) failures++;
      times.push(performance.now() - start);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), rps: times.length / seconds, failures };
}

const ms = (sorted: number[], p: number) => percentile(sorted, p).toFixed(1).padStart(6);

/** A signed-up user's cookie header (the product signup signs in), with their id. */
async function newUser(app: Awaited<ReturnType<typeof buildApp>>, token: string, n: number) {
  const user = await signUpBenchUser(app, {
    token,
    email: `bench-flood-${n}@example.com`,
    remoteAddress: `10.8.0.${n + 1}`,
    origin: config.publicUrl,
  });
  const me = await app.inject({ method: 'GET', url: '/api/users/me/', headers: { cookie: user.cookie } });
  return { ...user, userId: me.json().id as number };
}

/**
 * The export flood's clients (plain JavaScript, run in a worker thread): each downloads the export
 * whole and asks again at once, whatever the answer, until told to stop; then they report what
 * they were answered.
 */
const EXPORT_FLOOD_CLIENTS = `
const { workerData, parentPort } = require('node:worker_threads');
let flooding = true;
const answers = {};
let bytes = 0;
parentPort.on('message', () => { flooding = false; });
const client = async () => {
  while (flooding) {
    const res = await fetch(workerData.url, { headers: { cookie: workerData.cookie } });
    const body = await res.arrayBuffer();
    let why = String(res.status);
    if (res.status === 200) bytes += body.byteLength;
    else try { why += ' ' + JSON.parse(Buffer.from(body).toString()).error; } catch {}
    answers[why] = (answers[why] ?? 0) + 1;
  }
};
Promise.all(Array.from({ length: workerData.clients }, client)).then(
  () => parentPort.postMessage({ answers, bytes }),
  (err) => parentPort.postMessage({ error: String(err) }),
);
`;

/**
 * Another user's Memories page at a steady rate, alone and while one user downloads their export
 * in a loop; false when the p50 grew more than EXPORT_MAX_RATIO times.
 */
async function exportFloodScenario(app: Awaited<ReturnType<typeof buildApp>>, address: string) {
  const { token } = await app.invites.create({ maxUses: 2, expiresInDays: null, email: null });
  const flooder = await newUser(app, token, 2);
  const other = await newUser(app, token, 3);
  await app.db.query(
    `INSERT INTO memories (user_id, key, data, memory_type, source, created_at, updated_at)
     SELECT $1, 'fact ' || i, 'Note ' || i || ' about ' || ($2::text[])[1 + i % 10] || ', ' || ($2::text[])[1 + i * 3 % 10]
       || ' and ' || ($2::text[])[1 + i * 7 % 10] || ', written down on a long evening after a walk', 'text', 'import',
       now() - make_interval(secs => $3 - i), now()
     FROM generate_series(1, $3) AS i`,
    [flooder.userId, WORDS, EXPORT_MEMORIES],
  );
  const seeded = await app.inject({
    method: 'POST',
    url: '/api/memories/import/',
    headers: { cookie: other.cookie, 'x-csrftoken': other.csrf, origin: config.publicUrl },
    payload: { memories: Array.from({ length: 40 }, (_, i) => ({ key: `mine ${i}`, data: `About ${WORDS[i % 10]}` })) },
  });
  if (seeded.statusCode !== 200) throw new Error(seeded.body);
  if (app.db.kind === 'postgres') await app.db.withConnection((conn) => conn.exec('ANALYZE memories'));

  const page = (seconds: number, warmupSeconds: number) =>
    paced({
      url: `${address}/api/memories/`,
      headers: { cookie: other.cookie },
      rate: EXPORT_RATE,
      seconds,
      connections: 8,
      warmupSeconds,
    });
  // How long the server's event loop was held up (a neighbour's request waits that long).
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const loopMs = () => {
    const figures = `${(loop.percentile(99) / 1e6).toFixed(0)} ms at p99, ${(loop.max / 1e6).toFixed(0)} ms at most`;
    loop.reset();
    return figures;
  };
  loop.enable();
  const alone = await page(EXPORT_SECONDS, 2);
  const aloneLoop = loopMs();
  const clients = new Worker(EXPORT_FLOOD_CLIENTS, {
    eval: true,
    workerData: { url: `${address}/api/memories/export/`, cookie: flooder.cookie, clients: EXPORT_CLIENTS },
  });
  const report = new Promise<{ answers?: Record<string, number>; bytes?: number; error?: string }>((resolve) =>
    clients.once('message', resolve),
  );
  let during: Awaited<ReturnType<typeof page>>;
  try {
    // Measured from the first request: the exports the limit allows come first.
    during = await page(EXPORT_SECONDS, 0);
  } finally {
    clients.postMessage('stop');
  }
  const duringLoop = loopMs();
  loop.disable();
  const flood = await report;
  await clients.terminate();
  if (flood.error) throw new Error(`export flood: ${flood.error}`);

  const ratio = (p: 'p50' | 'p95' | 'p99') => (during[p] ?? Number.NaN) / (alone[p] ?? Number.NaN);
  const row = (name: string, r: typeof alone) =>
    `${name.padEnd(24)} ${(r.p50 ?? 0).toFixed(1).padStart(6)}   ${(r.p95 ?? 0).toFixed(1).padStart(6)}   ${r.p99.toFixed(1).padStart(6)}   ${String(r.ok).padStart(5)}   ${r.non2xx + r.errors + r.timeouts}`;
  console.log(
    `\nExport flood: one user with ${EXPORT_MEMORIES.toLocaleString('en')} memories downloads the export in a loop, ${EXPORT_CLIENTS} at a time, asking again at once when refused;`,
  );
  console.log(
    `another user's GET /api/memories/ (40 memories), ${EXPORT_RATE} a second for ${EXPORT_SECONDS} s (latency from when each was due):\n`,
  );
  console.log('                         p50 ms   p95 ms   p99 ms      ok   failed');
  console.log(row('alone', alone));
  console.log(row('during the flood', during));
  console.log(
    `ratio                    x${ratio('p50').toFixed(2)}    x${ratio('p95').toFixed(2)}    x${ratio('p99').toFixed(2)}`,
  );
  const answers = Object.entries(flood.answers ?? {})
    .map(([why, n]) => `${n} x ${why}`)
    .join('; ');
  console.log(`flood answers: ${answers} (${((flood.bytes ?? 0) / 1e6).toFixed(1)} MB of exports)`);
  console.log(`the server's event loop held up: alone ${aloneLoop}; during the flood ${duringLoop}`);
  const within = ratio('p50') <= EXPORT_MAX_RATIO;
  console.log(
    within
      ? `PASS: the page's p50 stays within ${EXPORT_MAX_RATIO}x of its time alone.`
      : `FAIL: the page's p50 grew more than ${EXPORT_MAX_RATIO}x during the export flood.`,
  );
  return within;
}

/** Another user's Memories page, timed while `flood` runs (or alone), one request at a time. */
async function floodScenario(app: Awaited<ReturnType<typeof buildApp>>, address: string) {
  const { token } = await app.invites.create({ maxUses: 2, expiresInDays: null, email: null });
  const flooder = await newUser(app, token, 0);
  const other = await newUser(app, token, 1);
  // Straight into the table: an account from before the memory limit (10,000) may hold this many.
  for (let done = 0; done < FLOOD_MEMORIES; done += 5000) {
    await app.db.prisma.memory.createMany({
      data: Array.from({ length: Math.min(5000, FLOOD_MEMORIES - done) }, (_, j) => {
        const i = done + j;
        const word = (k: number) => WORDS[(i * k) % WORDS.length];
        return {
          userId: flooder.userId,
          key: i ? `fact ${i}` : 'home city',
          data: i ? `Note ${i} about ${word(1)}, ${word(3)} and ${word(7)}` : 'Lives in Lisbon',
          memoryType: i ? 'text' : 'location',
          source: 'import',
        };
      }),
    });
  }
  const seeded = await app.inject({
    method: 'POST',
    url: '/api/memories/import/',
    headers: { cookie: other.cookie, 'x-csrftoken': other.csrf, origin: config.publicUrl },
    payload: { memories: Array.from({ length: 40 }, (_, i) => ({ key: `mine ${i}`, data: `About ${WORDS[i % 10]}` })) },
  });
  if (seeded.statusCode !== 200) throw new Error(seeded.body);
  // As autovacuum would have by the time an account is this big.
  if (app.db.kind === 'postgres') await app.db.withConnection((conn) => conn.exec('ANALYZE memories'));

  const timed = async (fn: () => Promise<void>) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  const get = async (url: string, cookie: string) => {
    const res = await fetch(url, { headers: { cookie } });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
  };
  const probe = async () => {
    const times: number[] = [];
    for (let i = 0; i < FLOOD_PROBES; i++) times.push(await timed(() => get(`${address}/api/memories/`, other.cookie)));
    return times.sort((a, b) => a - b);
  };

  await probe();
  const alone = await probe();
  let flooding = true;
  const searches: number[] = [];
  const selections: number[] = [];
  const floodWorker = async (w: number) => {
    for (let n = 0; flooding; n++) {
      // Embedded PGlite answers without I/O: let timers and sockets run between queries.
      await new Promise((r) => setImmediate(r));
      const word = WORDS[(w + n) % WORDS.length] as string;
      if ((w + n) % 2) {
        searches.push(await timed(() => get(`${address}/api/memories/?search=${word.slice(1, 5)}`, flooder.cookie)));
      } else {
        // The statement a chat turn runs to pick the prompt's memories.
        const text = `Any ideas for the ${word} this weekend, and what about my ${WORDS[n % WORDS.length]}?`;
        const { sql, params } = selectionQuery(flooder.userId, text, MEMORY_SELECTION);
        selections.push(await timed(async () => void (await app.db.query(sql, params))));
      }
    }
  };
  const workers = Array.from({ length: FLOOD_CONCURRENCY }, (_, w) => floodWorker(w));
  let during: number[];
  try {
    during = await probe();
  } finally {
    flooding = false;
    await Promise.all(workers);
  }
  searches.sort((a, b) => a - b);
  selections.sort((a, b) => a - b);
  const ratio = (p: number) => (percentile(during, p) / percentile(alone, p)).toFixed(1);
  console.log(
    `\nFlood: one user with ${FLOOD_MEMORIES.toLocaleString('en')} memories runs searches and prompt selections, ${FLOOD_CONCURRENCY} at a time;`,
  );
  console.log(`another user's GET /api/memories/ (40 memories), ${FLOOD_PROBES} requests one at a time:\n`);
  console.log('                         p50 ms   p99 ms');
  console.log(`alone                    ${ms(alone, 50)}   ${ms(alone, 99)}`);
  console.log(
    `during the flood         ${ms(during, 50)}   ${ms(during, 99)}   ratio p50 x${ratio(50)}, p99 x${ratio(99)}`,
  );
  console.log(`flood: search           ${ms(searches, 50)}   ${ms(searches, 99)}   (${searches.length} requests)`);
  console.log(`flood: prompt selection ${ms(selections, 50)}   ${ms(selections, 99)}   (${selections.length} queries)`);
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-'));
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const scratch = serverUrl ? await scratchDatabase(serverUrl) : null;
const config = loadConfig({
  ...process.env,
  ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  DATA_DIR: dataDir,
});
const app = await buildApp(config);
const address = await app.listen({ host: '127.0.0.1', port: 0 });
try {
  console.log(`${REQUESTS} requests per endpoint, ${CONCURRENCY} at a time, against ${address}\n`);
  console.log('endpoint                 p50 ms   p99 ms   req/s  failures');
  for (const endpoint of ['/healthz', '/readyz', '/api/site/', '/memories']) {
    const r = await measure(address + endpoint);
    console.log(
      `${endpoint.padEnd(24)} ${r.p50.toFixed(2).padStart(6)}  ${r.p99.toFixed(2).padStart(7)}  ${r.rps.toFixed(0).padStart(6)}  ${r.failures}`,
    );
  }
  if (EXPORT_MEMORIES > 0 && !(await exportFloodScenario(app, address))) process.exitCode = 1;
  if (FLOOD_MEMORIES > 0) await floodScenario(app, address);
} finally {
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
  await scratch?.drop();
}
