// `npm run bench`: Daybook's speed against bare references, measured in one run (issue 15).
//
// Three kinds of process, so that no measurement shares an event loop with what it measures:
// - Daybook: the compiled server (`node apps/server/dist/server.js`, NODE_ENV=production, built
//   first) on a scratch PostgreSQL database (created on DATABASE_URL's server, dropped at the end);
// - the bare references (scripts/bench/bare.ts): a bare Fastify app doing one primary-key lookup
//   through a bare `pg` pool on the same database, and a bare `ws` echo server;
// - the load (scripts/bench/load.ts): autocannon at full speed, the open-loop load at a fixed rate
//   (scripts/bench/paced.ts), the chat users and their zero-latency model, the idle sockets.
// For the chat, a second Daybook: the server as it was before issue 15's work (BASELINE_COMMIT, built
// from git in a worktree), on a database of its own, taking turns with this build a round of messages
// at a time, since the chat target is to keep that p99 and absolute times differ from machine to
// machine.
// This process builds, seeds (scripts/bench/seed.ts), conducts, runs Lighthouse while the server
// idles, prints the tables and writes bench-results/latest.json plus a copy named by time and commit.
//
// Settings (environment): DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres), BENCH_RUNS (3),
// BENCH_SECONDS (5; the session and memories lines and the bare lookup), BENCH_OTHER_SECONDS (2; the
// other reads), BENCH_WARMUP_SECONDS (2; at most 1 s of it before each fixed-rate run),
// BENCH_CONNECTIONS (50; at the fixed rate, the most it opens), BENCH_RATE (500 req/s, evenly spaced,
// latency from when each request was due), BENCH_RATE_SECONDS (4), BENCH_CHAT_USERS (100),
// BENCH_CHAT_RUNS (10), BENCH_TURNS (10), BENCH_THINK_MS (1000), BENCH_SOCKETS (5000),
// BENCH_LIGHTHOUSE_RUNS (5), BENCH_ONLY (phases: http,rate,chat,sockets,web), BENCH_ENDPOINTS (names, e.g. session,memories; the bare
// lookup always runs), BENCH_BUILD=0 (measure the builds already there), BENCH_SERVER_FLAGS (node
// flags for Daybook, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof), BENCH_OUT (bench-results),
// BENCH_BASELINE (a commit for the chat baseline; 'none' holds the chat line to 20 ms instead),
// BENCH_SERVER_DIST (with BENCH_BUILD=0: another server build to measure).
import { execFileSync, fork, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../tests/helpers/free-port.ts';
import { cpuMeter, cpuUse, spentMs, waitForQuiet } from './bench/cpu.ts';
import type { ChatServer, HttpRun, IdleSockets, LoadRequest, TurnTimes } from './bench/protocol.ts';
import {
  BUSY_WARNING,
  type Endpoint,
  type EndpointResult,
  httpTable,
  median,
  type OtherLine,
  otherTable,
  pairedRatioInterval,
  pct,
  percentile,
  summarize,
} from './bench/report.ts';
import { MEMORY_COUNT, seed, signUp } from './bench/seed.ts';
import { type InitialJs, initialJs, type LighthouseRun, lighthouseRun } from './bench/web.ts';
import { scratchDatabase } from './lib/scratch-db.ts';
import { buildServer } from './lib/server-build.ts';
import { checkoutAt } from './lib/worktree.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const env = process.env;
const num = (name: string, fallback: number) => {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
  return value;
};
/** The last commit before issue 15's work. */
const BASELINE_COMMIT = '38ee6f3';

const S = {
  databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  runs: Math.max(1, num('BENCH_RUNS', 3)),
  seconds: num('BENCH_SECONDS', 5),
  otherSeconds: num('BENCH_OTHER_SECONDS', 2),
  warmupSeconds: num('BENCH_WARMUP_SECONDS', 2),
  connections: num('BENCH_CONNECTIONS', 50),
  rate: num('BENCH_RATE', 500),
  rateSeconds: num('BENCH_RATE_SECONDS', 4),
  chatUsers: num('BENCH_CHAT_USERS', 100),
  // A p99 of turns is decided by the machine's few slow seconds, each landing on a whole round of
  // turns: the chat line pools 100 rounds per build (with 50, its verdict flipped between runs).
  chatRuns: Math.max(1, num('BENCH_CHAT_RUNS', 10)),
  turns: num('BENCH_TURNS', 10),
  thinkMs: num('BENCH_THINK_MS', 1000),
  sockets: num('BENCH_SOCKETS', 5000),
  socketsPerUser: 5,
  // Lighthouse's own advice for a score to compare: the median of 5 runs (one run varies by several points).
  lighthouseRuns: num('BENCH_LIGHTHOUSE_RUNS', 5),
  phases: new Set((env.BENCH_ONLY ?? 'http,rate,chat,sockets,web').split(',').map((s) => s.trim())),
  endpoints: env.BENCH_ENDPOINTS ? new Set(env.BENCH_ENDPOINTS.split(',').map((s) => s.trim())) : null,
  build: env.BENCH_BUILD !== '0',
  serverFlags: env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [],
  // The chat target is "keep today's p99": the server as it was before issue 15's work, built from
  // git and measured in the same run (the issue's ~15 ms was another machine's figure). 'none' skips
  // it, and the chat line is then held to 20 ms.
  baseline: env.BENCH_BASELINE === 'none' ? null : (env.BENCH_BASELINE ?? BASELINE_COMMIT),
  out: path.resolve(ROOT, env.BENCH_OUT ?? 'bench-results'),
};

// The issue's targets.
const TARGETS = {
  chatP99Ms: 20,
  // "Keep today's p99" is a check for a regression, so it allows the measurement's own noise: this
  // build measured against itself (BENCH_BASELINE=<its commit>) gave p99s 9% apart, and single runs
  // up to 64% apart.
  chatP99Tolerance: 0.15,
  socketsRssMB: 500,
  initialJsKB: 150,
  lighthouse: 90,
};

const started = Date.now();
const clock = () => {
  const s = Math.round((Date.now() - started) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};
const progress = (message: string) => console.log(`[${clock()}] ${message}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

function run(command: string, args: string[], cwd = ROOT) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')}: ${code}`))));
  });
}

/** RSS of a process, in bytes, from /proc. */
async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** A forked helper that answers `{ id }` requests over IPC, after a first `{ type: 'ready' }`. */
async function helper<Ready>(script: string, extraEnv: Record<string, string>) {
  const child = fork(path.join(ROOT, script), [], {
    // --expose-gc: the load process collects before timing turns (see scripts/bench/load.ts).
    execArgv: [...process.execArgv, '--expose-gc'],
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let ready: (value: Ready) => void = () => {};
  const readyPromise = new Promise<Ready>((resolve, reject) => {
    ready = resolve;
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
  });
  child.on('message', (message: { type?: string; id?: number; result?: unknown; error?: string }) => {
    if (message.type === 'ready') ready(message as Ready);
    const call = message.id === undefined ? undefined : pending.get(message.id);
    if (!call) return;
    pending.delete(message.id as number);
    if (message.error) call.reject(new Error(message.error));
    else call.resolve(message.result);
  });
  child.on('exit', () => {
    for (const call of pending.values()) call.reject(new Error(`${script} exited`));
  });
  let seq = 0;
  const ask = <T>(request: object) =>
    new Promise<T>((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...request, id });
    });
  return { child, ready: await readyPromise, ask };
}

/** The results folder; runs are this machine's and this hour's, kept for comparison, never committed. */
async function ensureOut() {
  await mkdir(S.out, { recursive: true });
  await writeFile(path.join(S.out, '.gitignore'), '*\n');
}

const runLine = (e: Endpoint, r: HttpRun) =>
  `    ${e.name.padEnd(22)} ${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms` +
  `  other processes ${Math.round((r.foreignCpu ?? 0) * 100)
    .toString()
    .padStart(3)}% CPU` +
  (r.lagP99 !== undefined ? `  sent late p99 ${r.lagP99.toFixed(1)} ms` : '') +
  (r.non2xx + r.errors + r.timeouts ? `  ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts` : '');

async function stop(child: ReturnType<typeof spawn>, ms = 12_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(ms)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

// ---------------------------------------------------------------------------------------------
const commit = git('rev-parse', '--short', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no')
  .split('\n')
  .filter(Boolean)
  .map((l) => l.slice(3));
console.log(
  `Daybook speed (issue 15) at ${commit}${dirty.length ? ` with ${dirty.length} uncommitted changes` : ''}; ` +
    `${os.cpus().length} cores, load average ${os.loadavg()[0]?.toFixed(1)} at the start`,
);

// One benchmark at a time on this machine: two at once would each measure the other.
const LOCK = path.join(tmpdir(), 'daybook-bench.lock');
async function takeLock() {
  for (let waited = 0; ; waited += 5) {
    try {
      await writeFile(LOCK, String(process.pid), { flag: 'wx' });
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
    const holder = Number(await readFile(LOCK, 'utf8').catch(() => '0'));
    let alive = false;
    try {
      alive = holder > 0 && process.kill(holder, 0);
    } catch {}
    if (!alive) {
      await rm(LOCK, { force: true });
      continue;
    }
    if (waited % 60 === 0) progress(`waiting for another npm run bench (pid ${holder}) to finish`);
    if (waited > 30 * 60) throw new Error(`another npm run bench (pid ${holder}) has held ${LOCK} for 30 minutes`);
    await sleep(5000);
  }
}
await takeLock();
const cleanups: Array<() => Promise<unknown>> = [
  async () => {
    if ((await readFile(LOCK, 'utf8').catch(() => '')) === String(process.pid)) await rm(LOCK, { force: true });
  },
];
const buildDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-build-'));
cleanups.unshift(() => rm(buildDir, { recursive: true, force: true }));
// Builds of this run's own, so another build of apps/server/dist or apps/web/dist meanwhile (other
// work on the same checkout) cannot change what is measured halfway through.
let serverDist = env.BENCH_SERVER_DIST ? path.resolve(env.BENCH_SERVER_DIST) : path.join(ROOT, 'apps/server/dist');
let webDist = path.join(ROOT, 'apps/web/dist');
if (S.build) {
  progress('building the server and the web app for this run (BENCH_BUILD=0 measures apps/*/dist as they are)');
  try {
    await run('npm', ['run', 'db:generate', '--silent']);
    webDist = path.join(buildDir, 'web');
    await run('npx', ['vite', 'build', 'apps/web', '--logLevel', 'warn', '--outDir', webDist, '--emptyOutDir']);
    // Beside apps/server/dist (the compiled code finds the repository from its depth); ignored by git.
    serverDist = path.join(ROOT, `apps/server/dist.tmp-bench-${process.pid}`);
    cleanups.unshift(() => rm(serverDist, { recursive: true, force: true }));
    await buildServer(serverDist);
  } catch (err) {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    throw err;
  }
}

/**
 * Daybook as production runs it, in a process of its own on `databaseUrl` (migrated by its own
 * start), its first account signed up over HTTP and the rest written with SQL (see seed.ts).
 */
async function startDaybook(o: {
  dist: string;
  cwd: string;
  databaseUrl: string;
  dataDir: string;
  modelUrl: string;
  cloneCount: number;
  onLog?: (text: string) => void;
}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const origin = base;
  progress(
    `starting Daybook (node ${path.relative(ROOT, o.dist)}/server.js${S.serverFlags.length ? ` ${S.serverFlags.join(' ')}` : ''}) on ${base}`,
  );
  const server = spawn(process.execPath, [...S.serverFlags, path.join(o.dist, 'server.js')], {
    cwd: o.cwd,
    env: {
      ...env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: base,
      DATABASE_URL: o.databaseUrl,
      DATA_DIR: o.dataDir,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop',
      LLM_BASE_URL: o.modelUrl,
      LLM_MODEL: 'bench-model',
      WEATHER_PROVIDER: 'none',
      WEB_DIST_DIR: webDist,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.unshift(() => stop(server));
  let log = '';
  const keepLog = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-200_000);
    o.onLog?.(log);
  };
  server.stdout.on('data', keepLog);
  server.stderr.on('data', keepLog);

  // Ready, and the first-run invite the server logs for a new installation.
  let token = '';
  for (let waited = 0; !token; waited += 200) {
    if (server.exitCode !== null) throw new Error(`Daybook exited (${server.exitCode})`);
    if (waited > 60_000) throw new Error('Daybook did not log its first invite within 60 s');
    token = /[?&]itoken=([A-Za-z0-9_-]+)/.exec(log)?.[1] ?? '';
    if (!token) await sleep(200);
  }
  const ready = await fetch(`${base}/readyz`);
  if (!ready.ok) throw new Error(`/readyz answered ${ready.status}`);

  progress(
    `seeding: one account through signup, ${MEMORY_COUNT.toLocaleString('en')} memories and more accounts with SQL`,
  );
  const email = 'main@bench.example';
  const main = await signUp(base, origin, token, email);
  const db = new pg.Client({ connectionString: o.databaseUrl });
  await db.connect();
  const seeded = await seed(db, email, o.cloneCount).finally(() => db.end());
  return { base, origin, pid: server.pid as number, seeded, main, stop: () => stop(server) };
}

/** The server at `rev`, built in a git worktree of its own (scripts/lib/worktree.ts). Returns its dist folder. */
async function buildBaseline(rev: string): Promise<{ dir: string; dist: string }> {
  progress(`building the server at ${rev} (the chat baseline) in a worktree`);
  const { dir, remove } = await checkoutAt(rev);
  cleanups.unshift(remove);
  await run('npm', ['run', 'build:server', '--silent'], dir);
  return { dir, dist: path.join(dir, 'apps/server/dist') };
}

// A baseline that cannot be built (no git history, say) leaves the chat line held to 20 ms.
const baseline =
  S.baseline && S.phases.has('chat') && S.chatUsers > 0
    ? await buildBaseline(S.baseline).catch((err: Error) => {
        console.log(`    the chat baseline could not be built: ${err.message.split('\n')[0]}`);
        return null;
      })
    : null;
const scratch = await scratchDatabase(S.databaseUrl);
const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-'));
cleanups.unshift(
  () => rm(dataDir, { recursive: true, force: true }),
  () => scratch.drop(),
);
const results: Record<string, unknown> = {};
const failures: string[] = [];
let serverLog = '';

try {
  progress(`scratch database ${new URL(scratch.url).pathname.slice(1)}; starting the load and the bare references`);
  const load = await helper<{ modelUrl: string }>('scripts/bench/load.ts', {});
  cleanups.unshift(() => load.ask({ type: 'close' }).catch(() => {}));
  const bare = await helper<{ httpUrl: string; wsUrl: string; pid: number }>('scripts/bench/bare.ts', {
    BENCH_DATABASE_URL: scratch.url,
  });
  cleanups.unshift(async () => {
    bare.child.send({ type: 'close' });
    await stop(bare.child, 5000);
  });
  const ask = <T>(request: LoadRequest) => load.ask<T>(request);

  const cloneCount = Math.max(S.chatUsers, 0) + Math.ceil(S.sockets / S.socketsPerUser);
  const daybook = await startDaybook({
    dist: serverDist,
    cwd: ROOT,
    databaseUrl: scratch.url,
    dataDir,
    modelUrl: load.ready.modelUrl,
    cloneCount,
    onLog: (text) => {
      serverLog = text;
    },
  });
  const { base, origin, seeded, main } = daybook;
  const serverPid = daybook.pid;
  const chatCookies = seeded.clones.slice(0, S.chatUsers);
  const socketCookies = seeded.clones
    .slice(S.chatUsers)
    .flatMap((c) => Array.from({ length: S.socketsPerUser }, () => c))
    .slice(0, S.sockets);

  const ENDPOINTS: Endpoint[] = [
    { name: 'bare', label: 'bare Fastify + one `pg` lookup', path: `${bare.ready.httpUrl}/lookup/${seeded.userId}` },
    {
      name: 'session',
      label: '`GET /_allauth/browser/v1/auth/session` (signed in)',
      path: '/_allauth/browser/v1/auth/session',
      minShare: 0.5,
      maxRateP99: 20,
    },
    {
      name: 'memories',
      label: '`GET /api/memories/?limit=30&offset=0` (10,000 memories)',
      path: '/api/memories/?limit=30&offset=0',
      minShare: 0.5,
      maxRateP99: 20,
    },
    {
      name: 'search',
      label: 'same with `&search=detail 42`',
      path: '/api/memories/?limit=30&offset=0&search=detail%2042',
      minShare: 0.25,
      maxRateP99: 20,
    },
    {
      // The line above repeats one search, which the server answers from what it kept; this one
      // pays for a real search every time (and takes its turn: at most 2 at a time per user).
      name: 'search-new',
      label: 'a new search text each time (`&search=detail {n}`, nothing kept)',
      path: '/api/memories/?limit=30&offset=0&search=detail%20{n}',
    },
  ];
  // Every other signed-in read under /api (the GET routes of apps/server/src/modules/*/*.routes.ts),
  // but the two exports, which are rate-limited downloads of everything (5 an hour).
  const OTHER_READS: Array<[string, string]> = [
    ['users-me', '/api/users/me/'],
    ['resources', '/api/resources/'],
    ['chat-messages', '/api/chat/messages/'],
    ['memory', `/api/memories/${seeded.memoryId}/`],
    ['memory-categories', '/api/memories/categories/'],
    ['calendar-connections', '/api/calendar/connections/'],
    ['calendar-events', `/api/calendar/events/?date=${new Date().toISOString().slice(0, 10)}`],
    ['site', '/api/site/'],
    ['web-research', `/api/web-research/${seeded.researchId}/`],
    ['daily-message', `/api/daily-messages/${seeded.dailyMessageId}/`],
    ['admin-users', '/api/admin/users/'],
    ['admin-invites', '/api/admin/invites/'],
  ];
  for (const [name, p] of OTHER_READS)
    ENDPOINTS.push({
      name,
      label: `\`GET ${p.replace(/\/\d+\//, '/{id}/').replace(/=\d{4}-\d\d-\d\d/, '={today}')}\``,
      path: p,
      minShare: 0.3,
    });
  const endpoints = ENDPOINTS.filter((e) => e.name === 'bare' || !S.endpoints || S.endpoints.has(e.name));
  const urlOf = (e: Endpoint) => (e.path.startsWith('http') ? e.path : base + e.path);
  const headers = { cookie: main.cookie };

  // Each read answers 200 with what it should before it is timed: a fast error would flatter it.
  const checks: Record<string, (body: string) => boolean> = {
    session: (b) => b.includes('"is_authenticated":true'),
    memories: (b) => JSON.parse(b).count === MEMORY_COUNT,
    search: (b) => JSON.parse(b).count === 111,
  };
  const measurable: Endpoint[] = [];
  for (const e of endpoints) {
    const res = await fetch(urlOf(e), { headers });
    const body = await res.text();
    const ok = res.status === 200 && (checks[e.name]?.(body) ?? true);
    if (ok) measurable.push(e);
    else failures.push(`${e.label}: answered ${res.status} ${body.slice(0, 200)}`);
  }
  for (const f of failures) console.log(`  skipped, not a correct answer: ${f}`);

  const runsOf = new Map<string, HttpRun[]>(measurable.map((e) => [e.name, []]));
  const rateRunsOf = new Map<string, HttpRun[]>(measurable.map((e) => [e.name, []]));
  const secondsOf = (e: Endpoint) => (OTHER_READS.some(([n]) => n === e.name) ? S.otherSeconds : S.seconds);
  const meterDb = new pg.Client({ connectionString: scratch.url });
  await meterDb.connect();
  cleanups.unshift(() => meterDb.end());
  const ourPids = () => [process.pid, serverPid, bare.child.pid ?? 0, load.child.pid ?? 0];
  const measure = cpuMeter(ourPids, meterDb, new URL(scratch.url).pathname.slice(1));
  const foreignShares: number[] = [];
  const http = async (e: Endpoint, seconds: number, rate?: number) => {
    const { value, cpu } = await measure(() =>
      ask<HttpRun>(
        rate
          ? {
              type: 'paced',
              url: urlOf(e),
              headers,
              connections: S.connections,
              rate,
              seconds,
              // Opens the connections and warms the server when the full-speed runs did not.
              warmupSeconds: Math.min(1, S.warmupSeconds),
            }
          : { type: 'http', url: urlOf(e), headers, connections: S.connections, seconds },
      ),
    );
    foreignShares.push(cpu.foreign);
    return { ...value, foreignCpu: cpu.foreign };
  };

  if (S.phases.has('http')) {
    progress(`warm-up: ${S.warmupSeconds} s per endpoint (1 s for the other reads), ${S.connections} connections`);
    for (const e of measurable)
      await http(e, secondsOf(e) < S.seconds ? Math.min(1, S.warmupSeconds) : S.warmupSeconds);
    // Rounds: every endpoint once per round, so a slow minute on this machine touches all of them.
    for (let round = 1; round <= S.runs; round++) {
      progress(`full speed, round ${round} of ${S.runs}`);
      for (const e of measurable) {
        const r = await http(e, secondsOf(e));
        runsOf.get(e.name)?.push(r);
        console.log(runLine(e, r));
      }
    }
  }
  if (S.phases.has('rate')) {
    const rated = measurable.filter((e) => e.name === 'bare' || e.maxRateP99 !== undefined);
    for (let round = 1; round <= S.runs; round++) {
      progress(
        `fixed rate ${S.rate} req/s, open loop (evenly spaced, up to ${S.connections} connections), round ${round} of ${S.runs}`,
      );
      for (const e of rated) {
        const r = await http(e, S.rateSeconds, S.rate);
        rateRunsOf.get(e.name)?.push(r);
        console.log(runLine(e, r));
      }
    }
  }
  const bareRps = median(runsOf.get('bare')?.map((r) => r.rps) ?? []);
  const httpResults: EndpointResult[] = measurable
    .filter((e) => runsOf.get(e.name)?.length || rateRunsOf.get(e.name)?.length)
    .map((e) => summarize(e, runsOf.get(e.name) ?? [], rateRunsOf.get(e.name) ?? [], bareRps, S.rate));
  results.http = httpResults;
  results.httpSkipped = failures;

  const other: OtherLine[] = [];
  // A part that fails (a chat turn that never ends, Lighthouse that cannot read a page) is reported
  // as not measured; the rest of the run still counts.
  const phase = async (name: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      const message = (err as Error).message.split('\n')[0] ?? String(err);
      console.log(`    ${name} failed: ${message}`);
      failures.push(`${name}: ${message}`);
      other.push({
        label: `${name}: not measured`,
        value: message.slice(0, 120),
        reference: '',
        target: '',
        met: false,
      });
    }
  };
  if (S.phases.has('chat') && S.chatUsers > 0)
    await phase('chat', async () => {
      const wsUrl = `${base.replace(/^http/, 'ws')}/ws/chat/`;
      const summary = (t: TurnTimes) => ({
        turns: t.server.length,
        p50: percentile(t.server, 50),
        p99: percentile(t.server, 99),
        max: Math.max(...t.server),
        totalP99: percentile(t.totals, 99),
        beforeP50: percentile(t.before, 50),
        beforeP99: percentile(t.before, 99),
        afterP50: percentile(t.after, 50),
        afterP99: percentile(t.after, 99),
        lost: t.server.filter((v) => !Number.isFinite(v)).length,
      });
      // The baseline build beside it, on a database of its own, seeded the same way; stopped after.
      const old = baseline
        ? await (async () => {
            const database = await scratchDatabase(S.databaseUrl);
            cleanups.unshift(() => database.drop());
            const dir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-'));
            cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
            const started = await startDaybook({
              dist: baseline.dist,
              cwd: baseline.dir,
              databaseUrl: database.url,
              dataDir: dir,
              modelUrl: load.ready.modelUrl,
              cloneCount: S.chatUsers,
            });
            return {
              ...started,
              wsUrl: `${started.base.replace(/^http/, 'ws')}/ws/chat/`,
              cpu: cpuUse(meterDb, started.pid, new URL(database.url).pathname.slice(1)),
            };
          })()
        : null;
      const ourCpu = cpuUse(meterDb, serverPid, new URL(scratch.url).pathname.slice(1));
      /** CPU ms each build spent (server and database backends) over the measured turns, and their count. */
      const cpuSpent = { daybook: 0, baseline: 0 };
      const chatOn = (server: ChatServer) =>
        measure(() => ask<TurnTimes>({ type: 'chat', ...server, turns: S.turns, thinkMs: S.thinkMs }));
      const split = (name: string, run: ReturnType<typeof summary>) =>
        console.log(
          `    ${name}: p99 ${run.p99.toFixed(1)} ms: before the model ${run.beforeP99.toFixed(1)} ms (p50 ${run.beforeP50.toFixed(1)}), after it ${run.afterP99.toFixed(1)} ms (p50 ${run.afterP50.toFixed(1)})`,
        );
      // Every turn of every run, per build: the line's p99 is over all of them (5,000 turns: the 50th-
      // worst), not a median of runs, whose p99s are each a run's 10th-worst turn and which a single
      // slow second of the machine decides. Interleaved with the earlier build's, this build's turns
      // meet the same seconds of the machine as its turns do, so pooling them compares like with like.
      const turns: { daybook: TurnTimes[]; baseline: TurnTimes[]; echo: TurnTimes[] } = {
        daybook: [],
        baseline: [],
        echo: [],
      };
      const pool = (list: TurnTimes[]): TurnTimes => ({
        totals: list.flatMap((t) => t.totals),
        server: list.flatMap((t) => t.server),
        before: list.flatMap((t) => t.before),
        after: list.flatMap((t) => t.after),
      });
      type Measured = ReturnType<typeof summary> & { foreignCpu: number };
      const runs: Array<{ daybook: Measured; echo: Measured; baseline?: ReturnType<typeof summary> }> = [];
      for (let round = 1; round <= S.chatRuns; round++) {
        progress(
          `chat, run ${round} of ${S.chatRuns}: ${S.chatUsers} users, ${S.turns} turns each, ~${S.thinkMs} ms between a user's messages${old ? `, taking turns with the build at ${S.baseline}` : ''}; then the bare ws echo`,
        );
        // With the earlier build: a round of messages on each in turn (see chatPair in load.ts).
        const cpuBefore = await Promise.all([ourCpu(), old?.cpu()]);
        const { value: chats, cpu: chatCpu } = old
          ? await measure(() =>
              ask<[TurnTimes, TurnTimes]>({
                type: 'chat-pair',
                servers: [
                  { wsUrl, origin, cookies: chatCookies },
                  { wsUrl: old.wsUrl, origin: old.origin, cookies: old.seeded.clones },
                ],
                turns: S.turns,
                thinkMs: S.thinkMs,
              }),
            )
          : await chatOn({ wsUrl, origin, cookies: chatCookies }).then(({ value, cpu }) => ({
              value: [value, null] as const,
              cpu,
            }));
        const [chat, oldChat] = chats;
        const cpuAfter = await Promise.all([ourCpu(), old?.cpu()]);
        // (The warm-up round is inside too: CPU per turn counts it, as one more turn per user.)
        cpuSpent.daybook += spentMs(cpuBefore[0], cpuAfter[0]);
        if (cpuBefore[1] && cpuAfter[1]) cpuSpent.baseline += spentMs(cpuBefore[1], cpuAfter[1]);
        turns.daybook.push(chat);
        if (oldChat) turns.baseline.push(oldChat);
        const { value: echo, cpu: echoCpu } = await measure(() =>
          ask<TurnTimes>({
            type: 'echo',
            wsUrl: bare.ready.wsUrl,
            origin,
            users: S.chatUsers,
            turns: S.turns,
            thinkMs: S.thinkMs,
          }),
        );
        turns.echo.push(echo);
        foreignShares.push(chatCpu.foreign, echoCpu.foreign);
        const ours = summary(chat);
        const theirs = oldChat ? summary(oldChat) : null;
        split('this build', ours);
        if (theirs) split(`at ${S.baseline}`, theirs);
        runs.push({
          daybook: { ...ours, foreignCpu: chatCpu.foreign },
          echo: { ...summary(echo), foreignCpu: echoCpu.foreign },
          ...(theirs ? { baseline: theirs } : {}),
        });
      }
      await old?.stop();
      const chatSummary = {
        ...summary(pool(turns.daybook)),
        foreignCpu: median(runs.map((r) => r.daybook.foreignCpu)),
      };
      const echoSummary = summary(pool(turns.echo));
      const olds = runs.flatMap((r) => (r.baseline ? [r.baseline] : []));
      const baselineSummary = turns.baseline.length ? summary(pool(turns.baseline)) : null;
      // A round is one turn per user (chatPair keeps them in order), and round i of each build ran
      // back to back: the pairs the interval resamples.
      const roundsOf = (list: TurnTimes[]) =>
        list.flatMap((t) =>
          Array.from({ length: Math.ceil(t.server.length / S.chatUsers) }, (_, i) =>
            t.server.slice(i * S.chatUsers, (i + 1) * S.chatUsers),
          ),
        );
      const interval = baselineSummary
        ? pairedRatioInterval(roundsOf(turns.daybook), roundsOf(turns.baseline), 99)
        : null;
      const turnsRun = S.chatRuns * (S.turns + 1) * S.chatUsers;
      const cpuPerTurn = {
        daybook: cpuSpent.daybook / turnsRun,
        baseline: baselineSummary ? cpuSpent.baseline / turnsRun : null,
      };
      results.chat = {
        daybook: chatSummary,
        echo: echoSummary,
        baseline: baselineSummary,
        baselineCommit: S.baseline,
        p99Ratio: interval,
        cpuPerTurnMs: cpuPerTurn,
        runs,
      };
      const lost = chatSummary.lost;
      const runList = runs.length > 1 ? `; runs: ${runs.map((r) => r.daybook.p99.toFixed(1)).join(', ')} ms` : '';
      other.push({
        label: `chat: server-added per turn, p99 of all runs' turns (${S.chatUsers} users; p50 in brackets)`,
        value:
          `${chatSummary.p99.toFixed(1)} ms (${chatSummary.p50.toFixed(1)} ms${runList})` +
          (lost ? `, ${lost} of ${chatSummary.turns} turns without a reply in 30 s` : '') +
          (interval
            ? `; ${pct(interval.ratio)} of the earlier build's p99 (${interval.confidence * 100}% interval, resampling paired rounds: ${pct(interval.low)}–${pct(interval.high)})`
            : '') +
          `; CPU ${cpuPerTurn.daybook.toFixed(1)} ms per turn (server and database)` +
          (chatSummary.foreignCpu > BUSY_WARNING
            ? ` (busy machine: others took ${Math.round(chatSummary.foreignCpu * 100)}% CPU)`
            : ''),
        reference:
          `bare ws echo: ${echoSummary.p99.toFixed(1)} ms (${echoSummary.p50.toFixed(1)} ms)` +
          (baselineSummary
            ? `; ${S.baseline === BASELINE_COMMIT ? 'before issue 15' : 'the build at'} (${S.baseline}): ${baselineSummary.p99.toFixed(1)} ms (${baselineSummary.p50.toFixed(1)} ms; runs: ${olds.map((r) => r.p99.toFixed(1)).join(', ')} ms)`
            : '') +
          (cpuPerTurn.baseline !== null ? `; CPU ${cpuPerTurn.baseline.toFixed(1)} ms per turn` : ''),
        target: baselineSummary
          ? `≤ the earlier build's in the same run, within ${TARGETS.chatP99Tolerance * 100}% (the spread of one build against itself; the issue's ~15 ms was another machine's)`
          : `≤ ${TARGETS.chatP99Ms} ms (today's ~15 ms, with this machine's spread)`,
        met:
          lost === 0 &&
          chatSummary.p99 <=
            (baselineSummary ? baselineSummary.p99 * (1 + TARGETS.chatP99Tolerance) : TARGETS.chatP99Ms) &&
          (!baselineSummary || baselineSummary.lost === 0),
      });
    });

  if (S.phases.has('sockets') && S.sockets > 0)
    await phase('sockets', async () => {
      await sleep(2000);
      const before = await rss(serverPid);
      progress(
        `sockets: opening ${S.sockets.toLocaleString('en')} authenticated chat sockets (${S.socketsPerUser} per user)`,
      );
      const wsUrl = `${base.replace(/^http/, 'ws')}/ws/chat/`;
      const opened = await ask<IdleSockets>({ type: 'open-idle', wsUrl, origin, cookies: socketCookies, parallel: 50 });
      await sleep(3000);
      const samples: number[] = [];
      for (let i = 0; i < 5; i++, await sleep(500)) samples.push(await rss(serverPid));
      const after = Math.max(...samples);
      await ask({ type: 'close-idle' });
      const mb = (b: number) => b / 1e6;
      results.sockets = { requested: S.sockets, ...opened, rssBeforeMB: mb(before), rssMB: mb(after) };
      const failed = Object.entries(opened.failures).map(([k, v]) => `${v} × ${k}`);
      other.push({
        label: `${S.sockets.toLocaleString('en')} idle authenticated sockets: server RSS`,
        value: `${Math.round(mb(after))} MB (${opened.open.toLocaleString('en')} open${failed.length ? `; ${failed.join(', ')}` : ''})`,
        reference: `${Math.round(mb(before))} MB before, after the HTTP runs`,
        target: `< ${TARGETS.socketsRssMB} MB`,
        met: opened.open === S.sockets && mb(after) < TARGETS.socketsRssMB,
      });
    });

  if (S.phases.has('web'))
    await phase('web', async () => {
      const js: InitialJs = await initialJs(webDist);
      other.push({
        label: 'web: initial JavaScript, gzipped',
        value: `${(js.gzipBytes / 1000).toFixed(1)} KB (${js.files.length} files)`,
        reference: '',
        target: `≤ ${TARGETS.initialJsKB} KB`,
        met: js.gzipBytes / 1000 <= TARGETS.initialJsKB,
      });
      const lighthouse: Record<string, { runs: LighthouseRun[]; score: number }> = {};
      for (const [page, signedIn] of [
        ['/', false],
        ['/chat', true],
      ] as const) {
        const runs: LighthouseRun[] = [];
        for (let i = 1; i <= S.lighthouseRuns; i++) {
          // Lighthouse scales the page's CPU work by 4: anything else running meanwhile lowers the score.
          const quiet = await waitForQuiet();
          progress(
            `Lighthouse ${page}${signedIn ? ' (signed in)' : ''}, run ${i} of ${S.lighthouseRuns} (after ${(quiet.waitedMs / 1000).toFixed(1)} s waiting for the machine to be quiet; ${Math.round(quiet.busy * 100)}% busy)`,
          );
          // A trace Lighthouse could not read (NO_NAVSTART on a busy machine) is run again, twice at most.
          for (let attempt = 1; ; attempt++) {
            try {
              runs.push(await lighthouseRun(base + page, signedIn ? main.cookies : {}));
              break;
            } catch (err) {
              if (attempt === 3) throw err;
              console.log(`    ${(err as Error).message.slice(0, 160)}; again`);
            }
          }
        }
        const { screenshot: shot, report } = runs.at(-1) ?? {};
        const name = `lighthouse-${page === '/' ? 'home' : page.slice(1)}`;
        if (shot || report) await ensureOut();
        if (shot) await writeFile(path.join(S.out, `${name}.jpg`), shot);
        if (report) await writeFile(path.join(S.out, `${name}.json`), report);
        for (const r of runs) {
          delete r.screenshot;
          delete r.report;
        }
        const score = median(runs.map((r) => r.score));
        lighthouse[page] = { runs, score };
        const wrongPage = runs.filter(
          (r) => new URL(r.finalUrl).pathname.replace(/\/$/, '') !== page.replace(/\/$/, ''),
        );
        other.push({
          label: `web: Lighthouse performance, \`${page}\`${signedIn ? ' (signed in)' : ''}`,
          value: `${score} (runs: ${runs.map((r) => r.score).join(', ')})`,
          reference: `LCP ${Math.round(median(runs.map((r) => r.lcpMs)))} ms, TBT ${Math.round(median(runs.map((r) => r.tbtMs)))} ms`,
          target: `≥ ${TARGETS.lighthouse}`,
          met: wrongPage.length ? false : score >= TARGETS.lighthouse,
        });
        if (wrongPage.length) failures.push(`Lighthouse ${page} ended at ${wrongPage[0]?.finalUrl}`);
      }
      results.web = { initialJs: js, lighthouse };
    });
  results.other = other;

  // ---------------------------------------------------------------------------------------------
  const finished = new Date();
  const header =
    `Measured by \`npm run bench\` at ${commit}${dirty.length ? ' (with uncommitted changes)' : ''}, ` +
    `${finished.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${S.connections} connections, ` +
    `median of ${S.runs} runs of ${S.seconds} s (other reads ${S.otherSeconds} s; fixed rate ${S.rateSeconds} s) ` +
    `after a ${S.warmupSeconds} s warm-up; ${os.cpus().length} cores, load average ${os.loadavg()[0]?.toFixed(1)}.`;
  const busy = {
    median: median(foreignShares),
    max: foreignShares.length ? Math.max(...foreignShares) : Number.NaN,
  };
  const contention = foreignShares.length
    ? `Other processes on this machine used ${Math.round(busy.median * 100)}% of its CPU during the median run ` +
      `(${Math.round(busy.max * 100)}% at most)` +
      (busy.median > BUSY_WARNING
        ? ': a busy machine, so the figures are lower and noisier than on a quiet one; ratios within the run hold better than absolute numbers.'
        : '.')
    : '';
  console.log(`\n${header}${contention ? ` ${contention}` : ''}\n`);
  if (httpResults.length) console.log(`${httpTable(httpResults, S.rate)}\n`);
  if (other.length) console.log(`${otherTable(other)}\n`);
  for (const f of failures) console.log(`Not measured or wrong: ${f}`);
  const lines = [
    ...httpResults.map((e) => ({ label: e.label, met: e.failures ? false : e.met })),
    ...other.map((o) => ({ label: o.label, met: o.met })),
  ].filter((l) => l.met !== null);
  const missed = lines.filter((l) => !l.met);
  console.log(
    `${lines.length - missed.length} of ${lines.length} targets met${missed.length ? `; not met: ${missed.map((l) => l.label).join('; ')}` : ''}.`,
  );

  const report = {
    version: 1,
    commit,
    uncommitted: dirty,
    startedAt: new Date(started).toISOString(),
    finishedAt: finished.toISOString(),
    seconds: Math.round((finished.getTime() - started) / 1000),
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, loadAverage: os.loadavg(), node: process.version },
    settings: { ...S, phases: [...S.phases], endpoints: S.endpoints ? [...S.endpoints] : null },
    targetsMet: lines.length - missed.length,
    targets: lines.length,
    foreignCpu: busy,
    ...results,
    header,
    contention,
  };
  await ensureOut();
  const latest = path.join(S.out, 'latest.json');
  await writeFile(latest, `${JSON.stringify(report, null, 2)}\n`);
  const stamped = path.join(S.out, `${finished.toISOString().replace(/[:.]/g, '-')}-${commit}.json`);
  await copyFile(latest, stamped);
  progress(`wrote ${path.relative(ROOT, latest)} and ${path.relative(ROOT, stamped)}`);
} catch (err) {
  console.error(err);
  if (serverLog) console.error(`Daybook's last log lines:\n${serverLog.split('\n').slice(-20).join('\n')}`);
  process.exitCode = 1;
} finally {
  for (const cleanup of cleanups) await cleanup().catch((err) => console.error('cleanup:', err));
}
