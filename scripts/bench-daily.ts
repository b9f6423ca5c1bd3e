// Daily message fan-out (issue 13): BENCH_DAILY_USERS (10,000) users due at the same minute across
// 20 time zones, each with a weather location, on PostgreSQL (a scratch database on the server
// DATABASE_URL names; without one the bench is skipped), a model taking 1 s per call, and TWO worker
// processes running the real `apps/server/src/worker.ts` with DAILY_CONCURRENCY each. The schedule
// is the workers' own cron tick; nothing here calls the service. Reports:
// - seconds from the due minute until every user's message is in their chat (target < 5 minutes),
//   and until every copy is mailed (to a local SMTP server);
// - messages per user: rows, chat messages and mails, each exactly 1 (a duplicate fails the bench);
// - peak connections to the database (pg_stat_activity, sampled every 500 ms);
// - chat p99 (server-added time per turn, as bench-chat measures it) for BENCH_CHAT_USERS (20) users
//   on a web process with RUN_WORKERS=false, alone and during the fan-out (target ≤ 1.5x).
// Prints PASS/MISS against the targets, and where the CPU went. The model, Open-Meteo and SMTP are
// fakes in a low-priority thread here (bench-daily-fakes.ts). Run with
// `DATABASE_URL=postgres://... npm run bench`; BENCH_DAILY_USERS=300 for a quick look. Experiments:
// BENCH_DAILY_CONCURRENCY, BENCH_DAILY_NICE (extra `nice` for the workers, which already lower
// their own priority to 10), BENCH_DAILY_EMAIL=0,
// BENCH_DAILY_PROFILE=1 (the database's busiest statements), BENCH_WORKER_FLAGS="--cpu-prof ...".

import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import WebSocket from 'ws';
import { startFakeOpenAI } from '../tests/helpers/fake-openai.ts';
import { BENCH_ORIGIN, benchSettings } from './lib/bench-settings.ts';
import { scratchDatabase } from './lib/scratch-db.ts';

const USERS = Number(process.env.BENCH_DAILY_USERS ?? 10_000);
// Two workers × 40 messages at a time: about 60 a second with a 1 s model, near what two cores
// can do (more only queues for the CPU); 10,000 then take under 3 minutes after the tick.
const CONCURRENCY = Number(process.env.BENCH_DAILY_CONCURRENCY ?? 40);
const WORKERS = 2;
/** BENCH_DAILY_NICE=10 runs the workers at that CPU priority (as `nice -n 10 npm run worker` would). */
const NICE = Number(process.env.BENCH_DAILY_NICE ?? 0);
const MODEL_MS = 1000;
const EMAIL = process.env.BENCH_DAILY_EMAIL !== '0';
const CHAT_USERS = Number(process.env.BENCH_CHAT_USERS ?? 20);
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000);
/** At least this long of chat alone before the users fall due. */
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 60_000);
/** Gives up on the fan-out this long after the due minute. */
const TIMEOUT_MS = Number(process.env.BENCH_DAILY_TIMEOUT_S ?? 900) * 1000;
/** BENCH_DAILY_PROFILE=1: samples the database's active statements every 20 ms during the fan-out. */
const PROFILE = process.env.BENCH_DAILY_PROFILE === '1';
const TARGET_S = 300;
const TARGET_RATIO = 1.5;
const EMAIL_PREFIX = 'daily-bench-';

// Spread over the day and the world, half- and quarter-hour offsets too.
const ZONES: Array<[tz: string, place: string, country: string, lat: number, lon: number]> = [
  ['Europe/Lisbon', 'Lisbon', 'PT', 38.72, -9.14],
  ['Europe/Berlin', 'Berlin', 'DE', 52.52, 13.41],
  ['America/Chicago', 'Austin', 'US', 30.27, -97.74],
  ['Europe/Paris', 'Paris', 'FR', 48.85, 2.35],
  ['Australia/Sydney', 'Sydney', 'AU', -33.87, 151.21],
  ['America/New_York', 'New York', 'US', 40.71, -74.01],
  ['America/Los_Angeles', 'Los Angeles', 'US', 34.05, -118.24],
  ['America/Sao_Paulo', 'São Paulo', 'BR', -23.55, -46.63],
  ['Asia/Tokyo', 'Tokyo', 'JP', 35.69, 139.69],
  ['Asia/Kolkata', 'Mumbai', 'IN', 19.08, 72.88],
  ['Asia/Kathmandu', 'Kathmandu', 'NP', 27.72, 85.32],
  ['Africa/Lagos', 'Lagos', 'NG', 6.52, 3.38],
  ['Africa/Johannesburg', 'Johannesburg', 'ZA', -26.2, 28.05],
  ['Asia/Shanghai', 'Shanghai', 'CN', 31.23, 121.47],
  ['Asia/Dubai', 'Dubai', 'AE', 25.2, 55.27],
  ['Europe/London', 'London', 'GB', 51.51, -0.13],
  ['Pacific/Auckland', 'Auckland', 'NZ', -36.85, 174.76],
  ['America/Mexico_City', 'Mexico City', 'MX', 19.43, -99.13],
  ['Asia/Singapore', 'Singapore', 'SG', 1.35, 103.82],
  ['America/St_Johns', "St. John's", 'CA', 47.56, -52.71],
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
const percentile = (list: number[], p: number) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

if (!process.env.DATABASE_URL) {
  console.log(
    'Daily message fan-out: skipped, it needs PostgreSQL (set DATABASE_URL=postgres://... to a server it may create a scratch database on).',
  );
  process.exit(0);
}
const scratch = await scratchDatabase(process.env.DATABASE_URL).catch((err: Error) => {
  console.log(`Daily message fan-out: skipped, no scratch database on DATABASE_URL's server (${err.message}).`);
  return null;
});
if (!scratch) process.exit(0);
const dbName = new URL(scratch.url).pathname.slice(1);

/** CPU time in ms of a process (all its threads), from /proc; NaN where there is none. */
function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The whole machine's busy and total CPU time in ms, from /proc/stat. */
function machineCpuMs(): { busy: number; total: number } {
  try {
    const [, ...ticks] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
    const n = ticks.slice(0, 8).map(Number);
    const total = n.reduce((a, b) => a + b, 0);
    const idle = (n[3] ?? 0) + (n[4] ?? 0);
    return { busy: ((total - idle) * 1000) / 100, total: (total * 1000) / 100 };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

// The daily fakes in a thread of their own (see bench-daily-fakes.ts); a worker cannot start from a
// .ts file, so it registers tsx first.
const tsxApi = import.meta.resolve('tsx/esm/api');
const fakesScript = new URL('./bench-daily-fakes.ts', import.meta.url).href;
const fakes = new Worker(
  `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(fakesScript)}); });`,
  { eval: true, workerData: { modelMs: MODEL_MS } },
);
const askFakes = <T>(message: object | null, type: string) =>
  new Promise<T>((resolve) => {
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== type) return;
      fakes.off('message', onMessage);
      resolve(reply as T);
    };
    fakes.on('message', onMessage);
    if (message) fakes.postMessage(message);
  });
interface FakeCounts {
  modelCalls: number;
  forecasts: number;
  mails: number;
  perRecipient: Array<[string, number]>;
}

// The chat users' model answers at once: what is timed is the server's share of each turn.
const chatModel = await startFakeOpenAI();
chatModel.onChat(() => ({ text: 'Sure, here is a short answer.', chunks: 4 }));

const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-daily-'));
const children: ChildProcess[] = [];
const db = new pg.Client({ connectionString: scratch.url });

/** CPU time so far of each PostgreSQL backend connected to the scratch database (this bench's left out). */
async function backendCpu(): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [dbName],
  );
  return new Map(rows.map((r) => [r.pid, processCpuMs(r.pid)] as [number, number]).filter(([, ms]) => ms >= 0));
}

/** Transactions the scratch database has committed or rolled back so far (every statement outside one is one). */
async function transactions(): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
    [dbName],
  );
  return Number(rows[0]?.n ?? Number.NaN);
}

/** Which statements the database is busy with, and what they wait for: a sampling profile. */
function profileStatements() {
  const client = new pg.Client({ connectionString: scratch?.url });
  const seen = new Map<string, number>();
  let total = 0;
  let on = true;
  const run = (async () => {
    await client.connect();
    while (on) {
      const { rows } = await client.query<{ q: string; w: string | null }>(
        `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS q, wait_event_type || ':' || wait_event AS w
         FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [dbName],
      );
      total++;
      for (const r of rows) {
        const key = `${r.w ?? 'CPU'}  ${r.q}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      await sleep(20);
    }
    await client.end();
  })();
  return {
    async stop() {
      on = false;
      await run;
      return { total, top: [...seen].sort((a, b) => b[1] - a[1]).slice(0, 15) };
    },
  };
}
let sampling = false;

try {
  const daily = await askFakes<{ llmBaseUrl: string; forecastUrl: string; geocodingUrl: string; smtpUrl: string }>(
    null,
    'ready',
  );

  // The web process (bench-research-server.ts: the real app, answering the bench over IPC) serves the
  // chat and runs no jobs; it also migrates the scratch database before the workers start.
  const web = fork(new URL('./bench-research-server.ts', import.meta.url), {
    execArgv: process.execArgv,
    env: { ...benchSettings({ dataDir, scratch, llmBaseUrl: chatModel.baseUrl }), RUN_WORKERS: 'false' },
  });
  children.push(web);
  const askWeb = <T>(message: object | null, type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (reply: { type: string }) => {
        if (reply.type !== type) return;
        web.off('message', onMessage);
        web.off('exit', onExit);
        resolve(reply as T);
      };
      const onExit = (code: number | null) => reject(new Error(`the web process exited (${code}) before ${type}`));
      web.on('message', onMessage);
      web.once('exit', onExit);
      if (message) web.send(message);
    });
  interface WebStats {
    cpu: NodeJS.CpuUsage;
    threads: { mainWaiting: number };
    loopDelayMs: { p99: number; max: number };
  }
  const webStats = () => askWeb<WebStats>({ type: 'stats' }, 'stats');
  const { base } = await askWeb<{ base: string }>(null, 'ready');
  const { cookies } = await askWeb<{ cookies: string[] }>({ type: 'users', users: CHAT_USERS }, 'users');

  await db.connect();
  // The chat users get no daily message: the fan-out is the bench users'.
  await db.query(`UPDATE users SET is_daily_message_paused = true`);
  console.log(`Creating ${USERS.toLocaleString('en')} users in ${ZONES.length} time zones...`);
  // Verified primary addresses, created a month ago, paused until they are made due all at once.
  const [range] = (
    await db.query<{ first: number; last: number }>(
      `WITH z AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::float8[])
           WITH ORDINALITY AS z(tz, place, country, lat, lon, n)
       ), u AS (
         INSERT INTO users (email, time_zone, daily_message_email, location_name, location_country, latitude, longitude,
                            is_daily_message_paused, created_at)
         SELECT '${EMAIL_PREFIX}' || i || '@example.com', z.tz, $6, z.place, z.country, z.lat, z.lon, true,
                (now() AT TIME ZONE 'UTC') - interval '30 days'
         FROM generate_series(1, $7::int) AS i JOIN z ON z.n = i % ${ZONES.length} + 1
         RETURNING id, email, created_at
       ), e AS (
         INSERT INTO email_addresses (user_id, email, verified, "primary", created_at)
         SELECT id, email, true, true, created_at FROM u
       )
       SELECT min(id)::int AS first, max(id)::int AS last FROM u`,
      [
        ZONES.map((z) => z[0]),
        ZONES.map((z) => z[1]),
        ZONES.map((z) => z[2]),
        ZONES.map((z) => z[3]),
        ZONES.map((z) => z[4]),
        EMAIL,
        USERS,
      ],
    )
  ).rows;
  if (!range) throw new Error('no users were created');
  await db.query('ANALYZE');
  const ids = [range.first, range.last];

  // Connections to the scratch database (this bench's own left out), every 500 ms from here on.
  interface Sample {
    at: number;
    total: number;
    jobs: number;
    active: number;
  }
  const samples: Sample[] = [];
  sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await db.query<{ total: number; jobs: number; active: number }>(
        `SELECT count(*)::int AS total, count(*) FILTER (WHERE application_name = 'daybook-jobs')::int AS jobs,
           count(*) FILTER (WHERE state = 'active')::int AS active
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [dbName],
      );
      if (rows[0]) samples.push({ at: Date.now(), ...rows[0] });
      await sleep(500);
    }
  })();

  // The worker processes: `npm run worker`'s entry point, its settings from the environment.
  const workerEnv = {
    ...benchSettings({ dataDir, scratch, llmBaseUrl: daily.llmBaseUrl }),
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DAILY_CONCURRENCY: String(CONCURRENCY),
    WEATHER_PROVIDER: 'open-meteo',
    OPEN_METEO_FORECAST_URL: daily.forecastUrl,
    OPEN_METEO_GEOCODING_URL: daily.geocodingUrl,
    SMTP_URL: daily.smtpUrl,
  };
  const workerFlags = process.env.BENCH_WORKER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const ticks: Array<{ at: number; claimed: number }> = [];
  const problems: string[] = [];
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, (_, w) => {
      const child = fork(new URL('../apps/server/src/worker.ts', import.meta.url), {
        // With NICE: `nice -n NICE node ... worker.ts`, every thread at that priority.
        // BENCH_WORKER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the workers.
        ...(NICE
          ? { execPath: 'nice', execArgv: ['-n', String(NICE), process.execPath, ...process.execArgv, ...workerFlags] }
          : { execArgv: [...process.execArgv, ...workerFlags] }),
        env: workerEnv,
        silent: true,
      });
      children.push(child);
      return new Promise<ChildProcess>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`worker ${w + 1} exited (${code})`)));
        child.stderr?.on('data', (d: Buffer) => process.stderr.write(`[worker ${w + 1}] ${d}`));
        // Its JSON log: when it is up, each tick's claims, and anything at warn or above.
        createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
          let entry: { level?: string; time?: number; msg?: string; claimed?: number };
          try {
            entry = JSON.parse(line);
          } catch {
            return;
          }
          if (entry.msg === 'Daybook worker is running') resolve(child);
          if (entry.msg === 'daily messages claimed') ticks.push({ at: entry.time ?? 0, claimed: entry.claimed ?? 0 });
          if (['warn', 'error', 'fatal'].includes(entry.level ?? '')) problems.push(`worker ${w + 1}: ${entry.msg}`);
        });
      });
    }),
  );

  const wsUrl = `${base.replace(/^http/, 'ws')}/ws/chat/`;
  const sockets = await Promise.all(cookies.map((c) => openSocket(wsUrl, c)));
  for (const [i, socket] of sockets.entries()) await turn(socket, `Warm-up from user ${i}`);

  // The users fall due at the first minute after at least WINDOW_MS of chat alone.
  const due = Math.ceil((Date.now() + WINDOW_MS + 5000) / 60_000) * 60_000;
  console.log(
    `${CHAT_USERS} chat users, a turn every ~${THINK_MS} ms each; the ${USERS.toLocaleString('en')} users fall due at ${new Date(due).toISOString().slice(11, 16)} UTC...`,
  );
  const turns: Array<{ start: number; ms: number }> = [];
  let chatting = true;
  const chat = Promise.all(
    sockets.map(async (socket, i) => {
      await sleep(Math.random() * THINK_MS);
      for (let n = 0; chatting; n++) {
        const start = Date.now();
        const ms = await turn(socket, `Message ${n} from user ${i}: what should I read this week?`);
        turns.push({ start, ms });
        await sleep(THINK_MS * (0.5 + Math.random()));
      }
    }),
  );

  const aloneStart = Date.now();
  const x0 = await transactions();
  const webA = await webStats();
  const cpu0 = machineCpuMs();
  await sleep(due - 4000 - Date.now());
  const aloneEnd = Date.now();
  const x1 = await transactions();
  const aloneWeb = await webStats();
  const cpu1 = machineCpuMs();
  // Every bench user's delivery time becomes that minute, in their own zone.
  await db.query(
    `UPDATE users SET is_daily_message_paused = false,
       daily_message_time = to_char(to_timestamp($1::float8 / 1000) AT TIME ZONE time_zone, 'HH24:MI')
     WHERE id BETWEEN $2 AND $3`,
    [due, ...ids],
  );

  interface Progress {
    claimed: number;
    delivered: number;
    emailed: number;
    firstClaim: number | null;
    lastDelivered: number | null;
    lastEmailed: number | null;
  }
  const progress = async () =>
    (
      await db.query<Progress>(
        `SELECT count(*)::int AS claimed, count(chat_message_id)::int AS delivered, count(emailed_at)::int AS emailed,
           (extract(epoch FROM min(created_at)) * 1000)::float8 AS "firstClaim",
           (extract(epoch FROM max(delivered_at)) * 1000)::float8 AS "lastDelivered",
           (extract(epoch FROM max(emailed_at)) * 1000)::float8 AS "lastEmailed"
         FROM daily_messages WHERE user_id BETWEEN $1 AND $2`,
        ids,
      )
    ).rows[0] as Progress;

  // Fan-out: from the first claim until every message is in its user's chat.
  let p = await progress();
  let lastPrint = 0;
  while (!p.claimed && Date.now() < due + TIMEOUT_MS) {
    await sleep(250);
    p = await progress();
  }
  const fanStart = Date.now();
  const x2 = await transactions();
  const web0 = await webStats();
  const cpu2 = machineCpuMs();
  const workerCpu0 = workers.map((w) => processCpuMs(w.pid));
  const benchCpu0 = process.cpuUsage();
  const pg0 = await backendCpu();
  const profile = PROFILE ? profileStatements() : null;
  while (p.delivered < USERS && Date.now() < due + TIMEOUT_MS) {
    if (Date.now() - lastPrint > 30_000) {
      lastPrint = Date.now();
      console.log(
        `  ${((Date.now() - due) / 1000).toFixed(0)} s: ${p.claimed} claimed, ${p.delivered} delivered, ${p.emailed} mailed`,
      );
    }
    await sleep(500);
    p = await progress();
  }
  const fanEnd = Date.now();
  const fanWeb = await webStats();
  const cpu3 = machineCpuMs();
  const workerCpu = workers.map((w, i) => processCpuMs(w.pid) - (workerCpu0[i] ?? 0));
  const pg1 = await backendCpu();
  const pgFan = [...pg1].reduce((sum, [pid, ms]) => sum + ms - (pg0.get(pid) ?? 0), 0);
  const statements = await profile?.stop();
  const benchCpu = process.cpuUsage(benchCpu0);
  chatting = false;
  await chat;
  // The last copies to be mailed, then a moment for a duplicate to show.
  while (EMAIL && p.emailed < p.delivered && Date.now() < due + TIMEOUT_MS) {
    await sleep(500);
    p = await progress();
  }
  await sleep(3000);
  // Backends report their counts within a second or so of being busy; the chat's share is taken out.
  const x3 = await transactions();
  const chatRate = (x1 - x0) / (aloneEnd - aloneStart);
  const xactsPerMessage = (x3 - x2 - chatRate * (Date.now() - fanStart)) / USERS;
  p = await progress();
  sampling = false;
  await sampler;

  // Each user: rows for the day, chat messages from the assistant, mails.
  const [counts] = (
    await db.query<{ rowsMin: number; rowsMax: number; chatMin: number; chatMax: number }>(
      `SELECT min(r)::int AS "rowsMin", max(r)::int AS "rowsMax", min(c)::int AS "chatMin", max(c)::int AS "chatMax"
       FROM (
         SELECT u.id,
           (SELECT count(*) FROM daily_messages d WHERE d.user_id = u.id) AS r,
           (SELECT count(*) FROM chat_messages m WHERE m.user_id = u.id AND m.author_type = 'assistant') AS c
         FROM users u WHERE u.id BETWEEN $1 AND $2
       ) per_user`,
      ids,
    )
  ).rows;
  const fakeCounts = await askFakes<FakeCounts>({ type: 'counts' }, 'counts');
  const mailed = new Map(fakeCounts.perRecipient);
  const mailCounts = Array.from({ length: USERS }, (_, i) => mailed.get(`${EMAIL_PREFIX}${i + 1}@example.com`) ?? 0);
  const jobs = (
    await db.query<{ state: string; n: number; retried: number }>(
      `SELECT state, count(*)::int AS n, count(*) FILTER (WHERE retry_count > 0)::int AS retried
       FROM pgboss.job WHERE name = 'daily-message' GROUP BY state ORDER BY state`,
    )
  ).rows;
  const latency = (
    await db.query<{ ms: number }>(
      `SELECT (extract(epoch FROM delivered_at) * 1000)::float8 - $3 AS ms FROM daily_messages
       WHERE user_id BETWEEN $1 AND $2 AND delivered_at IS NOT NULL`,
      [...ids, due],
    )
  ).rows.map((r) => r.ms);

  // Report.
  const s = (ms: number | null | undefined) => (ms === null || ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
  const msText = (v: number) => `${v.toFixed(1)} ms`;
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  const table = (title: string, rows: Array<[string, string, string]>) => {
    console.log(title);
    const width = Math.max(...rows.map((r) => r[0].length));
    const valueWidth = Math.max(...rows.map((r) => r[1].length));
    for (const [name, value, note] of rows)
      console.log(`  ${name.padEnd(width)}  ${value.padStart(valueWidth)}   ${note}`);
  };
  const allDelivered = p.delivered === USERS && p.lastDelivered !== null;
  const deliveredS = allDelivered ? ((p.lastDelivered as number) - due) / 1000 : Number.POSITIVE_INFINITY;
  const firstTick = ticks.find((t) => t.at >= due - 5000);
  const alone = turns.filter((t) => t.start >= aloneStart && t.start < aloneEnd).map((t) => t.ms);
  const during = turns.filter((t) => t.start >= fanStart && t.start < fanEnd).map((t) => t.ms);
  const ratio = percentile(during, 99) / percentile(alone, 99);
  const peak = (list: Sample[]) =>
    list.reduce((a, b) => (b.total > a.total ? b : a), { at: 0, total: 0, jobs: 0, active: 0 });
  const peakAll = peak(samples);
  const peakFan = peak(samples.filter((x) => x.at >= fanStart && x.at <= fanEnd));
  const mailMin = Math.min(...mailCounts);
  const mailMax = Math.max(...mailCounts);
  const onePerUser =
    counts?.rowsMin === 1 &&
    counts.rowsMax === 1 &&
    counts.chatMin === 1 &&
    counts.chatMax === 1 &&
    (!EMAIL || (mailMin === 1 && mailMax === 1));
  const busy = (a: { busy: number; total: number }, b: { busy: number; total: number }) =>
    `${(((b.busy - a.busy) / (b.total - a.total)) * 100).toFixed(0)}%`;
  const fanS = (fanEnd - fanStart) / 1000;
  const totalWorkerCpu = workerCpu.reduce((a, b) => a + b, 0);
  const webCpu = (a: WebStats, b: WebStats) => (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1000;
  const machineFan = cpu3.busy - cpu2.busy;
  const benchFan = (benchCpu.user + benchCpu.system) / 1000;
  const webFan = webCpu(web0, fanWeb);

  table(
    `Daily messages: ${USERS.toLocaleString('en')} users due at ${new Date(due).toISOString().slice(11, 16)} UTC in ${ZONES.length} time zones, model ${MODEL_MS / 1000} s per call, local weather, ${EMAIL ? 'email copy on (local SMTP)' : 'no email copy'}, PostgreSQL, ${WORKERS} workers × DAILY_CONCURRENCY=${CONCURRENCY}${NICE ? ` at nice ${NICE}` : ''}:`,
    [
      [
        'schedule tick ran',
        firstTick ? s(firstTick.at - due) : p.firstClaim ? s(p.firstClaim - due) : '-',
        `after the due minute (claimed ${ticks.map((t) => t.claimed).join(' + ') || 0}; claim and sends done ${firstTick ? s(firstTick.at - (p.firstClaim ?? firstTick.at)) : '-'} after it began)`,
      ],
      [
        'every message delivered',
        allDelivered ? `${deliveredS.toFixed(1)} s` : `${p.delivered} of ${USERS}`,
        `after the due minute; target < ${TARGET_S} s: ${verdict(deliveredS < TARGET_S)}   (p50 user ${s(percentile(latency, 50))}, p90 ${s(percentile(latency, 90))}; ${p.firstClaim && p.lastDelivered ? ((USERS * 1000) / (p.lastDelivered - p.firstClaim)).toFixed(1) : '-'} messages/s from the tick)`,
      ],
      [
        'every copy mailed',
        EMAIL ? (p.emailed === USERS ? s((p.lastEmailed ?? 0) - due) : `${p.emailed} of ${USERS}`) : 'off',
        EMAIL ? `after the due minute (${fakeCounts.mails} mails received)` : '',
      ],
      [
        'messages per user, min / max',
        `${counts?.rowsMin ?? '-'} / ${counts?.rowsMax ?? '-'}`,
        `daily_messages rows; in the chat ${counts?.chatMin ?? '-'} / ${counts?.chatMax ?? '-'}${EMAIL ? `, mailed ${mailMin} / ${mailMax}` : ''}; exactly 1: ${onePerUser ? 'PASS' : 'FAIL'}`,
      ],
      [
        'generation jobs',
        String(jobs.reduce((a, j) => a + j.n, 0)),
        jobs.map((j) => `${j.n} ${j.state}${j.retried ? ` (${j.retried} retried)` : ''}`).join(', ') +
          ` (${fakeCounts.modelCalls} model calls, ${fakeCounts.forecasts} forecasts)`,
      ],
      [
        'peak database connections',
        String(peakAll.total),
        `(jobs pools ${peakAll.jobs}, active ${peakAll.active}; during the fan-out ${peakFan.total}; ${samples.length} samples, this bench's own left out)`,
      ],
      [
        'chat p99, alone',
        msText(percentile(alone, 99)),
        `(${alone.length} turns, p50 ${msText(percentile(alone, 50))}, p95 ${msText(percentile(alone, 95))})`,
      ],
      [
        'chat p99, during the fan-out',
        msText(percentile(during, 99)),
        `(${during.length} turns, p50 ${msText(percentile(during, 50))}, p95 ${msText(percentile(during, 95))})`,
      ],
      ['  ratio', `${ratio.toFixed(2)}x`, `target ≤ ${TARGET_RATIO}x: ${verdict(ratio <= TARGET_RATIO)}`],
    ],
  );
  table('Where the time goes (chat alone / during the fan-out):', [
    ['machine CPU busy (all cores)', busy(cpu0, cpu1), `/ ${busy(cpu2, cpu3)}`],
    [
      'CPU per message, all processes',
      msText(machineFan / USERS),
      `workers ${msText(totalWorkerCpu / USERS)} (${workerCpu.map((c) => (c / 1000).toFixed(1)).join(' + ')} s), PostgreSQL ${msText(pgFan / USERS)}, this bench's fakes and chat ${msText(benchFan / USERS)}, web ${msText(webFan / USERS)}, the rest (other programs too) ${msText((machineFan - totalWorkerCpu - pgFan - benchFan - webFan) / USERS)}; over ${fanS.toFixed(0)} s of fan-out`,
    ],
    [
      'web event loop delay p99 / max',
      `${msText(aloneWeb.loopDelayMs.p99)} / ${msText(aloneWeb.loopDelayMs.max)}`,
      `/ ${msText(fanWeb.loopDelayMs.p99)} / ${msText(fanWeb.loopDelayMs.max)}`,
    ],
    [
      'web process CPU (share of one core)',
      `${((webCpu(webA, aloneWeb) / (aloneEnd - aloneStart)) * 100).toFixed(0)}%`,
      `/ ${((webCpu(web0, fanWeb) / (fanEnd - fanStart)) * 100).toFixed(0)}%`,
    ],
    [
      'web main thread waiting for a core',
      `${(((aloneWeb.threads.mainWaiting - webA.threads.mainWaiting) / (aloneEnd - aloneStart)) * 100).toFixed(1)}%`,
      `/ ${(((fanWeb.threads.mainWaiting - web0.threads.mainWaiting) / (fanEnd - fanStart)) * 100).toFixed(1)}% of the time`,
    ],
    [
      'database transactions per message',
      `≈ ${xactsPerMessage.toFixed(1)}`,
      "(pg_stat_database over the fan-out, less the chat's rate alone; each statement outside a transaction is one)",
    ],
    ['warnings from the workers', String(problems.length), problems.slice(0, 3).join(' | ')],
  ]);
  if (statements) {
    console.log(
      `Database statements during the fan-out (${statements.total} samples, 20 ms apart; backends busy per sample):`,
    );
    for (const [q, n] of statements.top) console.log(`  ${(n / statements.total).toFixed(2).padStart(6)}  ${q}`);
  }
  for (const socket of sockets) socket.ws.close();
  if (!onePerUser) {
    console.error('A user got more or less than one daily message: see the table above.');
    process.exitCode = 1;
  }
} finally {
  sampling = false;
  for (const child of children.reverse()) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.connected && child.send) child.send({ type: 'close' });
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(12_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await db.end().catch(() => {});
  fakes.postMessage({ type: 'close' });
  await chatModel.close();
  await rm(dataDir, { recursive: true, force: true });
  await scratch.drop();
}

interface Socket {
  ws: WebSocket;
  next(types: string[]): Promise<{ message_type: string }>;
}

function openSocket(wsUrl: string, cookie: string): Promise<Socket> {
  const ws = new WebSocket(wsUrl, { headers: { cookie, origin: BENCH_ORIGIN } });
  const waiting: Array<{ types: string[]; resolve: (m: { message_type: string }) => void }> = [];
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { message_type: string };
    const i = waiting.findIndex((w) => w.types.includes(message.message_type));
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(message);
  });
  const socket: Socket = { ws, next: (types) => new Promise((resolve) => waiting.push({ types, resolve })) };
  return new Promise((resolve, reject) => {
    ws.once('message', () => resolve(socket));
    ws.once('error', reject);
  });
}

/** One chat turn: the server's share is frame sent → model request, plus model done → reply at the client. */
async function turn(socket: Socket, text: string): Promise<number> {
  const start = now();
  const reply = socket.next(['markdown']);
  socket.ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text }));
  await reply;
  const end = now();
  const i = chatModel.requests.findLastIndex((r) => r.stream && r.messages.at(-1)?.content === text);
  const t = chatModel.timings[i];
  if (!t) return Number.NaN;
  return performance.timeOrigin + t.receivedAt - start + (end - (performance.timeOrigin + t.finishedAt));
}
