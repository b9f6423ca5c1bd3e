// `npm run bench:model`: how Daybook spends the model (issue 33), against a model server that costs
// what a real one does (scripts/bench/slot-model.ts: slots, a prefix cache per slot, time per token),
// this checkout side by side with Daybook at BENCH_MODEL_BASELINE (the commit before issue 33),
// each run from source in a process of its own on a scratch PostgreSQL database.
// - Prompt prefix: one user with 500 memories holds a scripted 60-turn conversation over the chat's
//   WebSocket. For each turn's chat prompt: the share of it that is a byte-identical prefix of the
//   turn before's (median; target ≥ 85%), its tokens, and the tokens the model had cached (what the
//   model reports as usage.prompt_tokens_details.cached_tokens; Daybook counts them in /metrics).
// - Fan-out (scripts/bench/model-fanout.ts): BENCH_MODEL_CHAT_USERS (50) users chat while
//   BENCH_MODEL_FANOUT_USERS (1,000) users' daily messages are written by two workers: the chat's
//   time to first token, idle and during the fan-out (target: within 1.5x), and the fan-out's time.
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres), BENCH_MODEL_BASELINE
// (85f7e9f, the last commit before issue 33 in this history; 'none' measures this checkout only), BENCH_MODEL_TURNS (60), BENCH_MODEL_MEMORIES (500),
// BENCH_MODEL_SLOTS (2; this checkout runs with LLM_CONCURRENCY at the same), BENCH_MODEL_PROMPT_MS
// (0.05 per token not cached), BENCH_MODEL_GEN_MS (0.5 per token), BENCH_MODEL_ONLY (prefix,fanout),
// BENCH_MODEL_REV (measure that commit, in a worktree, instead of the working tree),
// BENCH_MODEL_SHARED_HISTORY (1: every chat user's earlier conversation is the same text, as in the
// first measurements; see model-fanout.ts).
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { installation, METRICS_TOKEN } from './bench/daybook-procs.ts';
import { type FanoutLine, measureFanout } from './bench/model-fanout.ts';
import { commonPrefix, type ModelCall, tokensOf } from './bench/slot-model.ts';
import { startSlotModelThread } from './bench/slot-model-thread.ts';
import { checkoutAt } from './lib/worktree.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const ANSWERS = new URL('./bench/model-answers.ts', import.meta.url).href;
const env = process.env;
const DATABASE_URL = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// The first measurements used 011785c, which did not survive: issues 32 and 33 landed as one
// recovered commit on top of 85f7e9f.
const BASELINE = env.BENCH_MODEL_BASELINE ?? '85f7e9f';
const TURNS = Number(env.BENCH_MODEL_TURNS ?? 60);
const MEMORIES = Number(env.BENCH_MODEL_MEMORIES ?? 500);
const SLOTS = Number(env.BENCH_MODEL_SLOTS ?? 2);
const PROMPT_MS = Number(env.BENCH_MODEL_PROMPT_MS ?? 0.05);
const GEN_MS = Number(env.BENCH_MODEL_GEN_MS ?? 0.5);
const ONLY = new Set((env.BENCH_MODEL_ONLY ?? 'prefix,fanout').split(','));
const PREFIX_TARGET = 0.85;
const TTFT_TARGET = 1.5;
const PERSONA = 'You are Daybook, a personal assistant.';

const started = Date.now();
const progress = (message: string) =>
  console.log(`[${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s] ${message}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] ?? 0) : Number.NaN;
};
const cleanups: Array<() => Promise<unknown>> = [];

// --- the scripted user -------------------------------------------------------------------------

const TOPICS = ['climbing', 'sourdough', 'jazz', 'chess', 'cycling', 'gardening', 'photography', 'sailing', 'poetry'];
const TOPICS_MORE = ['espresso', 'birdwatching', 'pottery', 'running', 'astronomy', 'knitting', 'surfing', 'woodwork'];

/** 60 turns of an ordinary conversation: questions, things about themselves, thanks. */
function conversation(turns: number): string[] {
  const kinds = [
    (t: string) => `Can you suggest something about ${t} I could try this weekend?`,
    (t: string) => `I started going to a ${t} club on Tuesdays, it's great.`,
    (t: string) => `What should I read to get better at ${t}?`,
    () => 'Thanks, that helps!',
    (t: string) => `How does ${t} compare with what we talked about earlier?`,
    (t: string) => `Remember that my sister loves ${t} too.`,
  ];
  const all = [...TOPICS, ...TOPICS_MORE];
  // Each text once (6 kinds, 17 topics): the chat takes a text sent again soon after as a resend.
  return Array.from({ length: turns }, (_, i) =>
    (kinds[i % kinds.length] as (t: string) => string)(all[i % all.length] ?? ''),
  );
}

// --- Daybook ---------------------------------------------------------------------------------

/** MEMORIES memories: where they live, their name and zone (core), and interests, activities, people. */
async function seedMemories(db: pg.Client, userId: number) {
  await db.query(
    `INSERT INTO memories (user_id, key, data, memory_type, source, created_at, updated_at) VALUES
       ($1, 'home city', 'Lives in Lisbon, in Alfama', 'location', 'onboarding', now() - interval '90 days', now() - interval '90 days'),
       ($1, 'name', 'Likes to be called Ana', 'text', 'onboarding', now() - interval '90 days', now() - interval '90 days'),
       ($1, 'time zone', 'Europe/Lisbon', 'text', 'onboarding', now() - interval '90 days', now() - interval '90 days')`,
    [userId],
  );
  const topics = [...TOPICS, ...TOPICS_MORE];
  // Short sentences, as the learning step writes them ("data is a short sentence about the user").
  await db.query(
    `INSERT INTO memories (user_id, key, data, memory_type, source, created_at, updated_at)
     SELECT $1, t || ' ' || i,
            (ARRAY['Enjoys ' || t || ', mostly at weekends', 'Does ' || t || ' with friends every other week',
                   'Prefers ' || t || ' in the morning', 'Their friend Sam ' || i || ' is into ' || t,
                   'Mentioned ' || t || ' on a trip last spring'])[1 + i % 5],
            (ARRAY['interest','activity','preference','person','text'])[1 + i % 5], 'chat',
            now() - make_interval(hours => $4 - i), now() - make_interval(hours => $4 - i)
     FROM generate_series(1, $4) AS i, LATERAL (SELECT ($2::text[])[1 + i % $3] AS t) AS topic`,
    [userId, topics, topics.length, MEMORIES - 3],
  );
}

/** The cached prompt tokens Daybook counted from the model's usage, from its /metrics. */
async function countedCached(base: string): Promise<number | null> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const m = /daybook_model_tokens_total\{operation="chat",type="cached"\} (\d+)/.exec(await res.text());
  return m ? Number(m[1]) : null;
}

// --- the conversation --------------------------------------------------------------------------

async function converse(base: string, cookie: string, texts: string[]) {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws/chat/`, { headers: { cookie, origin: base } });
  await new Promise((resolve, reject) => {
    ws.once('message', resolve);
    ws.once('error', reject);
  });
  let failTurn: (err: Error) => void = () => {};
  ws.once('close', (code, reason) => failTurn(new Error(`the chat closed the socket: ${code} ${reason}`)));
  try {
    for (const text of texts) {
      await new Promise<void>((resolve, reject) => {
        failTurn = reject;
        const timer = setTimeout(() => reject(new Error(`no answer to "${text}" within 60 s`)), 60_000);
        const onMessage = (data: WebSocket.RawData) => {
          const m = JSON.parse(data.toString()) as { message_type?: string; author_type?: string };
          if (env.BENCH_DEBUG) console.log(data.toString().slice(0, 300));
          if (m.author_type !== 'assistant' || m.message_type !== 'markdown') return;
          clearTimeout(timer);
          ws.off('message', onMessage);
          resolve();
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text }));
      });
      // A person reads the answer before writing again (the chat closes a socket sending over 20
      // frames in 10 s), and the turn's learning call ends meanwhile.
      await sleep(600);
    }
  } finally {
    ws.close();
  }
}

interface PrefixLine {
  turns: number;
  medianShare: number;
  lowShare: number;
  medianPromptTokens: number;
  promptTokens: number;
  cachedTokens: number;
  countedCached: number | null;
}

function prefixLine(chats: ModelCall[], counted: number | null): PrefixLine {
  const shares: number[] = [];
  for (let i = 1; i < chats.length; i++) {
    const [before, now] = [chats[i - 1]?.prompt ?? '', chats[i]?.prompt ?? ''];
    shares.push(commonPrefix(before, now) / now.length);
  }
  const sorted = [...shares].sort((a, b) => a - b);
  return {
    turns: chats.length,
    medianShare: median(shares),
    lowShare: sorted[Math.floor(sorted.length * 0.1)] ?? Number.NaN,
    medianPromptTokens: median(chats.map((c) => tokensOf(c.prompt ?? ''))),
    promptTokens: chats.reduce((n, c) => n + c.promptTokens, 0),
    cachedTokens: chats.reduce((n, c) => n + c.cachedTokens, 0),
    countedCached: counted,
  };
}

async function measurePrefix(tree: string): Promise<PrefixLine> {
  const model = await startSlotModelThread({
    slots: SLOTS,
    promptMsPerToken: PROMPT_MS,
    genMsPerToken: GEN_MS,
    answersModule: ANSWERS,
    answers: 'prefix',
    keepStreamedPrompts: true,
  });
  const inst = await installation({ tree, databaseUrl: DATABASE_URL, modelUrl: model.baseUrl });
  try {
    const web = await inst.web({ METRICS_ENABLED: 'true', METRICS_TOKEN });
    const user = await web.signUp('model@bench.example');
    const db = new pg.Client({ connectionString: inst.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: number }>('SELECT id FROM users WHERE email = $1', ['model@bench.example']);
      await seedMemories(db, rows[0]?.id ?? 0);
    } finally {
      await db.end();
    }
    progress(`  ${TURNS} turns with ${MEMORIES} memories`);
    await converse(web.base, user.cookie, conversation(TURNS)).catch((err: Error) => {
      throw new Error(`${err.message}\nDaybook's log:\n${inst.log('web').slice(-5000)}`);
    });
    const chats = (await model.calls()).filter((c) => c.stream && c.kind.startsWith(PERSONA));
    if (env.BENCH_DEBUG) showDifferences(chats);
    return prefixLine(chats, await countedCached(web.base).catch(() => null));
  } finally {
    await inst.close();
    await model.close();
  }
}

/** Where each turn's prompt first differs from the turn before's (BENCH_DEBUG=1). */
function showDifferences(chats: ModelCall[]) {
  for (let i = 1; i < chats.length; i++) {
    const [a, b] = [chats[i - 1]?.prompt ?? '', chats[i]?.prompt ?? ''];
    const at = commonPrefix(a, b);
    console.log(
      `turn ${i}: differs at ${at}:\n  before: ${JSON.stringify(a.slice(at - 80, at + 120))}\n  now:    ${JSON.stringify(b.slice(at - 80, at + 120))}`,
    );
  }
}

const fanout = (tree: string) =>
  measureFanout({
    tree,
    databaseUrl: DATABASE_URL,
    users: Number(env.BENCH_MODEL_FANOUT_USERS ?? 1000),
    chatUsers: Number(env.BENCH_MODEL_CHAT_USERS ?? 50),
    concurrency: SLOTS,
    slots: SLOTS,
    promptMsPerToken: PROMPT_MS,
    genMsPerToken: GEN_MS,
    sharedHistory: env.BENCH_MODEL_SHARED_HISTORY === '1',
    idleMs: Number(env.BENCH_MODEL_IDLE_S ?? 40) * 1000,
    timeoutMs: Number(env.BENCH_MODEL_FANOUT_TIMEOUT_S ?? 900) * 1000,
    progress,
  });

// --- the run -----------------------------------------------------------------------------------

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const ms = (x: number) => `${x.toFixed(0)} ms`;
interface Result {
  name: string;
  prefix?: PrefixLine;
  fanout?: FanoutLine;
}

async function measure(name: string, tree: string): Promise<Result> {
  progress(name);
  const result: Result = { name };
  if (ONLY.has('prefix')) result.prefix = await measurePrefix(tree);
  if (ONLY.has('fanout')) result.fanout = await fanout(tree);
  return result;
}

function printPrefix(results: Result[]) {
  console.log(`\nPrompt prefix over a scripted conversation (chat prompts, the model with ${SLOTS} slots)`);
  console.log(
    '| build | turns | prefix share, median | 10th percentile | prompt tokens per turn, median | prompt tokens | cached (model) | cached (Daybook /metrics) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { name, prefix: p } of results)
    if (p)
      console.log(
        `| ${name} | ${p.turns} | ${pct(p.medianShare)} | ${pct(p.lowShare)} | ${p.medianPromptTokens} | ${p.promptTokens} | ${p.cachedTokens} (${pct(p.cachedTokens / p.promptTokens)}) | ${p.countedCached ?? 'not counted'} |`,
      );
  const now = results.at(-1)?.prefix;
  if (now)
    console.log(
      `${now.medianShare >= PREFIX_TARGET ? 'PASS' : 'MISS'}: median prefix share ${pct(now.medianShare)} (target ≥ ${pct(PREFIX_TARGET)})`,
    );
}

function printFanout(results: Result[]) {
  console.log(`\nChat time to first token, idle and during a daily fan-out (the model with ${SLOTS} slots)`);
  console.log(
    '| build | idle p50 | idle p95 | during p50 | during p95 | during/idle p50 | p95 | fan-out done after the due minute |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { name, fanout: f } of results)
    if (f)
      console.log(
        `| ${name} | ${ms(f.idle.p50)} (${f.idle.n}) | ${ms(f.idle.p95)} | ${ms(f.during.p50)} (${f.during.n}) | ${ms(f.during.p95)} | ${(f.during.p50 / f.idle.p50).toFixed(2)}x | ${(f.during.p95 / f.idle.p95).toFixed(2)}x | ${f.completedS === null ? `not done (${f.delivered} delivered)` : `${f.completedS.toFixed(1)} s`} |`,
      );
  const now = results.at(-1)?.fanout;
  if (now) {
    const ratio = now.during.p50 / now.idle.p50;
    console.log(
      `${ratio <= TTFT_TARGET && now.completedS !== null ? 'PASS' : 'MISS'}: chat during the fan-out ${ratio.toFixed(2)}x idle (target ≤ ${TTFT_TARGET}x), fan-out ${now.completedS === null ? 'not done' : 'done'}`,
    );
  }
}

const results: Result[] = [];
try {
  if (BASELINE !== 'none') {
    const before = await checkoutAt(BASELINE);
    cleanups.unshift(before.remove);
    results.push(await measure(`before (${BASELINE})`, before.dir));
  }
  // BENCH_MODEL_REV: a commit of this checkout instead of its working tree (work can go on meanwhile).
  const rev = env.BENCH_MODEL_REV;
  const now = rev ? await checkoutAt(rev) : null;
  if (now) cleanups.unshift(now.remove);
  results.push(await measure(rev ? `now (${rev})` : 'now', now?.dir ?? ROOT));
  printPrefix(results);
  printFanout(results);
} finally {
  for (const cleanup of cleanups) await cleanup().catch(() => {});
}
