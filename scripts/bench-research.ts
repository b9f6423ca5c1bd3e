// Web research speed, against local fakes: a site of 15 long reads of about 100 KB each, a
// SearXNG-compatible search answering with them, and a zero-latency OpenAI-compatible model that
// plans and writes a report citing every source. The server runs in a child process
// (bench-research-server.ts), so its CPU time, worker threads included, is measured alone; the fakes
// and the simulated chat users run here. Reports:
// - server CPU time per research (researches run one after another, nothing else running);
// - p50/p99 time per page in an extraction worker;
// - the server's peak RSS;
// - chat p99 (server-added time per turn, as bench-chat measures it) over a window with 5
//   researches running beside it (5 users, each asking again as soon as theirs is delivered)
//   versus an equal window without them, in this run.
// Prints PASS/MISS against the issue's targets. Run with `npm run bench`.

import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { type CompletionRequest, startFakeOpenAI } from '../tests/helpers/fake-openai.ts';
import { fakeResults, startFakeSearch } from '../tests/helpers/fake-search.ts';
import { bigArticles, startFakeSite } from '../tests/helpers/fake-site.ts';
import { BENCH_ORIGIN, benchSettings } from './lib/bench-settings.ts';
import { scratchDatabase } from './lib/scratch-db.ts';

const PAGES = 15;
const PER_QUERY = 5;
const SEQUENTIAL = Number(process.env.BENCH_RESEARCHES ?? 5);
const CONCURRENT = 5;
const CHAT_USERS = Number(process.env.BENCH_CHAT_USERS ?? 30);
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000);
/** How long chat is measured, alone and then beside the researches. */
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 15_000);
const TARGET_CPU_S = 1;
const TARGET_RATIO = 1.5;

const site = await startFakeSite();
const pages = bigArticles(PAGES);
// The model plans "<topic> part 2" and "<topic> part 3"; with the user's wording that makes three
// searches, answered with pages 1-5, 6-10 and 11-15, so a research reads all 15.
const search = await startFakeSearch({
  results: (query) => {
    const part = Number(/ part (\d)$/.exec(query)?.[1] ?? 1);
    return fakeResults(site.origin, pages.slice((part - 1) * PER_QUERY, part * PER_QUERY));
  },
});
const fake = await startFakeOpenAI();
const lastUser = (req: CompletionRequest) => req.messages.findLast((m) => m.role === 'user')?.content ?? '';
fake.onJson((req) => {
  const tool = req.tools?.[0]?.function.name;
  if (tool === 'plan_research') {
    const topic = lastUser(req);
    return { text: JSON.stringify({ queries: [`${topic} part 2`, `${topic} part 3`] }) };
  }
  if (tool === 'write_report') {
    const urls = [...lastUser(req).matchAll(/^URL: (.+)$/gm)].map((m) => m[1] as string);
    return {
      text: JSON.stringify({
        introduction: 'What the sources say [1].',
        body: `### Findings\n\n${urls.map((_, i) => `- Point ${i + 1} [${i + 1}]`).join('\n')}`,
        conclusion: 'In short [1].',
        sources: urls.map((url, i) => ({ url, title: `Source ${i + 1}` })),
      }),
    };
  }
  return { text: '{"operations":[]}' };
});
fake.onChat(() => ({ text: 'Sure, here is a short answer.', chunks: 4 }));

const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-research-'));
const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : null;
const server = fork(new URL('./bench-research-server.ts', import.meta.url), {
  // e.g. BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server and its workers.
  execArgv: [...process.execArgv, ...(process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [])],
  env: {
    ...benchSettings({ dataDir, scratch, llmBaseUrl: fake.baseUrl }),
    SEARXNG_URL: search.searxngUrl,
    SEARCH_PROVIDERS: 'searxng',
    FETCH_ALLOW: '127.0.0.1',
    RESEARCH_DAILY_LIMIT: '1000',
  },
});
const ask = <T>(message: object | null, type: string) =>
  new Promise<T>((resolve, reject) => {
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== type) return;
      server.off('message', onMessage);
      server.off('exit', onExit);
      resolve(reply as T);
    };
    const onExit = (code: number | null) => reject(new Error(`the server exited (${code}) before answering ${type}`));
    server.on('message', onMessage);
    server.once('exit', onExit);
    if (message) server.send(message);
  });

interface Stats {
  cpu: NodeJS.CpuUsage;
  /** Split by thread, where Linux tells it: main (the event loop), extraction workers, the rest. */
  threads: { main: number; workers: number; other: number; mainWaiting: number };
  maxRssKb: number;
  rssKb: number;
  /** The server's event loop delay since the last stats. */
  loopDelayMs: { p99: number; max: number };
  /** The main thread's garbage-collection pauses since the last stats. */
  gc: { ms: number; max: number; count: number };
  /** Per page extracted since the last stats: time in the worker, and the worker's CPU time. */
  extractions: Array<{ ms: number; cpuMs: number }>;
}
const stats = () => ask<Stats>({ type: 'stats' }, 'stats');
const cpuSeconds = (a: Stats, b: Stats) => (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1e6;
const percentile = (list: number[], p: number) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();

interface Socket {
  ws: WebSocket;
  /** Resolves on the next message of one of these types. */
  next(types: string[]): Promise<{ message_type: string; raw_text?: string }>;
}

function openSocket(wsUrl: string, cookie: string): Promise<Socket> {
  const ws = new WebSocket(wsUrl, { headers: { cookie, origin: BENCH_ORIGIN } });
  const waiting: Array<{ types: string[]; resolve: (m: { message_type: string; raw_text?: string }) => void }> = [];
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { message_type: string; raw_text?: string };
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
  const i = fake.requests.findLastIndex((r) => r.stream && r.messages.at(-1)?.content === text);
  const t = fake.timings[i];
  if (!t) return Number.NaN;
  return performance.timeOrigin + t.receivedAt - start + (end - (performance.timeOrigin + t.finishedAt));
}

let researchCount = 0;
/** Asks for a research in the chat and waits for its report; fails if the research failed. */
async function research(socket: Socket): Promise<void> {
  const topic = `commuting topic ${++researchCount}`;
  const outcome = socket.next(['research_report', 'system_message']);
  socket.ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: `/research ${topic}` }));
  const message = await outcome;
  if (message.message_type !== 'research_report') throw new Error(`research failed: ${message.raw_text}`);
  const report = JSON.parse(message.raw_text ?? '{}') as { sources?: unknown[] };
  if (report.sources?.length !== PAGES) throw new Error(`the report cites ${report.sources?.length} of ${PAGES} pages`);
}

/** Chat users taking turns with think time until `until()`; server-added time per turn. */
async function chatLoad(sockets: Socket[], until: () => boolean, label: string): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(
    sockets.map(async (socket, i) => {
      await sleep(Math.random() * THINK_MS);
      for (let n = 0; !until(); n++) {
        const t = await turn(socket, `${label} message ${n} from user ${i}: what should I read this week?`);
        times.push(t);
        await sleep(THINK_MS * (0.5 + Math.random()));
      }
    }),
  );
  return times;
}

try {
  const { base } = await ask<{ base: string }>(null, 'ready');
  console.log(
    `Database: ${scratch ? 'PostgreSQL (a scratch database on DATABASE_URL)' : 'embedded PGlite (set DATABASE_URL to measure with PostgreSQL)'}`,
  );
  const { cookies } = await ask<{ cookies: string[] }>({ type: 'users', users: CONCURRENT + CHAT_USERS }, 'users');
  const wsUrl = `${base.replace(/^http/, 'ws')}/ws/chat/`;
  const researchers = await Promise.all(cookies.slice(0, CONCURRENT).map((c) => openSocket(wsUrl, c)));
  const chatters = await Promise.all(cookies.slice(CONCURRENT).map((c) => openSocket(wsUrl, c)));
  const first = researchers[0] as Socket;

  const startRssKb = (await stats()).rssKb;
  // Warm-up, unmeasured: a research (workers started, code compiled) and one turn per chat user.
  await research(first);
  for (const [i, socket] of chatters.entries()) await turn(socket, `Warm-up from user ${i}`);

  console.log(`${SEQUENTIAL} researches one after another, ${PAGES} pages of ~100 KB each, zero-latency model:`);
  const before = await stats();
  const each: number[] = [];
  const pageTimes: number[] = [];
  const pageCpu: number[] = [];
  let after = before;
  for (let i = 0; i < SEQUENTIAL; i++) {
    const start = after;
    await research(first);
    after = await stats();
    each.push(cpuSeconds(start, after));
    pageTimes.push(...after.extractions.map((e) => e.ms));
    pageCpu.push(...after.extractions.map((e) => e.cpuMs));
  }
  // The median: one research now and then meets a full garbage collection or a busy neighbour.
  const cpuPerResearch = percentile(each, 50);
  const perResearch = (kind: 'main' | 'workers' | 'other') =>
    ((after.threads[kind] - before.threads[kind]) / 1000 / SEQUENTIAL).toFixed(2);

  console.log(`Chat: ${CHAT_USERS} users, a turn every ~${THINK_MS} ms each, for ${WINDOW_MS / 1000} s alone...`);
  const aloneUntil = Date.now() + WINDOW_MS;
  const benchCpu0 = process.cpuUsage();
  const alone = await chatLoad(chatters, () => Date.now() > aloneUntil, 'Alone');
  const quiet = await stats();
  const benchCpu1 = process.cpuUsage();

  console.log(`... and for ${WINDOW_MS / 1000} s beside ${CONCURRENT} researches at a time...`);
  const besideUntil = Date.now() + WINDOW_MS;
  const over = () => Date.now() > besideUntil;
  let researched = 0;
  const researches = Promise.all(
    researchers.map(async (socket) => {
      while (!over()) {
        researched++;
        await research(socket);
      }
    }),
  );
  const beside = await chatLoad(chatters, over, 'Beside');
  const busy = await stats();
  const benchCpu2 = process.cpuUsage();
  // The researches under way when the window closed finish unmeasured.
  await researches;
  const concurrentPages = busy.extractions.map((e) => e.ms);

  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const split = (a: Stats, b: Stats) =>
    (['main', 'workers', 'other', 'mainWaiting'] as const)
      .map(
        (k) =>
          `${k === 'mainWaiting' ? 'main waiting for a core' : k} ${((b.threads[k] - a.threads[k]) / 1000).toFixed(1)}`,
      )
      .join(', ');
  const benchSeconds = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1e6;
  const p99Alone = percentile(alone, 99);
  const p99Beside = percentile(beside, 99);
  const ratio = p99Beside / p99Alone;
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  const table = (title: string, rows: Array<[string, string, string]>) => {
    console.log(title);
    const width = Math.max(...rows.map((r) => r[0].length));
    const valueWidth = Math.max(...rows.map((r) => r[1].length));
    for (const [name, value, note] of rows)
      console.log(`  ${name.padEnd(width)}  ${value.padStart(valueWidth)}   ${note}`);
  };
  table(`Research speed (${PAGES} pages of ~100 KB, zero-latency model):`, [
    [
      'server CPU per research',
      `${cpuPerResearch.toFixed(2)} s`,
      `target < ${TARGET_CPU_S} s: ${verdict(cpuPerResearch < TARGET_CPU_S)}   (median of ${SEQUENTIAL}, ${percentile(each, 0).toFixed(2)}-${percentile(each, 100).toFixed(2)} s; main thread ${perResearch('main')}, extraction workers ${perResearch('workers')}, other threads ${perResearch('other')})`,
    ],
    [
      'extraction per page p50 / p99',
      `${ms(percentile(pageTimes, 50))} / ${ms(percentile(pageTimes, 99))}`,
      `(${pageTimes.length} pages, one research at a time; worker CPU p50 ${ms(percentile(pageCpu, 50))}; beside ${CONCURRENT} researches ${ms(percentile(concurrentPages, 50))} / ${ms(percentile(concurrentPages, 99))})`,
    ],
    [
      'server peak RSS',
      `${(busy.maxRssKb / 1024).toFixed(0)} MB`,
      `(${(startRssKb / 1024).toFixed(0)} MB before the first research)`,
    ],
    ['chat p99, alone', ms(p99Alone), `(${alone.length} turns, p50 ${ms(percentile(alone, 50))})`],
    [
      `chat p99, beside ${CONCURRENT} researches`,
      ms(p99Beside),
      `(${beside.length} turns, p50 ${ms(percentile(beside, 50))}; ${researched} researches asked for in the window)`,
    ],
    ['  ratio', `${ratio.toFixed(2)}x`, `target ≤ ${TARGET_RATIO}x: ${verdict(ratio <= TARGET_RATIO)}`],
  ]);
  table('Where the chat time goes (chat window alone / beside the researches):', [
    [
      'chat p90 / p95',
      `${ms(percentile(alone, 90))} / ${ms(percentile(alone, 95))}`,
      `/ ${ms(percentile(beside, 90))} / ${ms(percentile(beside, 95))}`,
    ],
    [
      'event loop delay p99 / max',
      `${ms(quiet.loopDelayMs.p99)} / ${ms(quiet.loopDelayMs.max)}`,
      `/ ${ms(busy.loopDelayMs.p99)} / ${ms(busy.loopDelayMs.max)}`,
    ],
    ['server CPU, s', cpuSeconds(after, quiet).toFixed(2), `/ ${cpuSeconds(quiet, busy).toFixed(2)}`],
    ['  by thread, s', split(after, quiet), `/ ${split(quiet, busy)}`],
    [
      'main thread GC pauses',
      `${quiet.gc.ms.toFixed(0)} ms (longest ${ms(quiet.gc.max)})`,
      `/ ${busy.gc.ms.toFixed(0)} ms (longest ${ms(busy.gc.max)})`,
    ],
    [
      "this bench's CPU (fakes, users), s",
      benchSeconds(benchCpu0, benchCpu1).toFixed(2),
      `/ ${benchSeconds(benchCpu1, benchCpu2).toFixed(2)}`,
    ],
  ]);
  for (const s of [...researchers, ...chatters]) s.ws.close();
} finally {
  if (server.connected) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    await ask({ type: 'close' }, 'closed').catch(() => undefined);
    await Promise.race([exited, sleep(10_000)]);
  }
  server.kill();
  await fake.close();
  await search.close();
  await site.close();
  await rm(dataDir, { recursive: true, force: true });
  await scratch?.drop();
}
