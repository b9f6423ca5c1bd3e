// The model benchmark's second part (issue 33): chat users' time to first token, idle and during a
// daily-message fan-out, against the slot-limited model; and how long the fan-out takes. Daybook
// runs as compose runs it: a web process (RUN_WORKERS=false) for the chat and two worker processes
// whose own cron tick starts the fan-out, on one scratch PostgreSQL database.
import pg from 'pg';
import WebSocket from 'ws';
import { installation } from './daybook-procs.ts';
import { seed } from './seed.ts';
import { startSlotModelThread } from './slot-model-thread.ts';

export interface FanoutOptions {
  tree: string;
  databaseUrl: string;
  users: number;
  chatUsers: number;
  /** LLM_CONCURRENCY for the installation (the commit before issue 33 has no such setting). */
  concurrency: number;
  slots: number;
  promptMsPerToken: number;
  genMsPerToken: number;
  /**
   * The chat users' earlier conversations are the same text for every user (the first measurements
   * did this): their prompts then share most of their length across users, which real users' never
   * do, so a slot's cache served any of them. Default: each user's history is their own.
   */
  sharedHistory: boolean;
  /** Chat alone before the users fall due, at least. */
  idleMs: number;
  timeoutMs: number;
  progress: (message: string) => void;
}

export interface FanoutLine {
  idle: { n: number; p50: number; p95: number };
  during: { n: number; p50: number; p95: number };
  /** From the due minute until every message was in its user's chat (null: not within the timeout). */
  completedS: number | null;
  delivered: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
  return { n: s.length, p50: at(0.5), p95: at(0.95) };
}

/** A chat user: a message every 5 to 15 s, each turn's time to its answer's first piece recorded. */
function chatUser(
  wsUrl: string,
  origin: string,
  cookie: string,
  i: number,
  samples: Array<{ at: number; ttft: number }>,
) {
  let running = true;
  const done = (async () => {
    const ws = new WebSocket(wsUrl, { headers: { cookie, origin } });
    await new Promise((resolve, reject) => {
      ws.once('message', resolve);
      ws.once('error', reject);
    });
    await sleep(Math.random() * 10_000);
    for (let n = 0; running; n++) {
      const sent = now();
      await new Promise<void>((resolve) => {
        let first = 0;
        const timer = setTimeout(() => finish(), 120_000);
        const onMessage = (data: WebSocket.RawData) => {
          const m = JSON.parse(data.toString()) as { message_type?: string; author_type?: string };
          if (m.author_type !== 'assistant') return;
          if (!first && (m.message_type === 'stream' || m.message_type === 'markdown')) {
            first = now();
            samples.push({ at: sent, ttft: first - sent });
          }
          if (m.message_type === 'markdown' || m.message_type === 'system_message') finish();
        };
        const finish = () => {
          clearTimeout(timer);
          ws.off('message', onMessage);
          resolve();
        };
        ws.on('message', onMessage);
        ws.send(
          JSON.stringify({
            author_type: 'human',
            message_type: 'message',
            raw_text: `Message ${n} from user ${i}: what should I read this week?`,
          }),
        );
      });
      await sleep(5000 + Math.random() * 10_000);
    }
    ws.close();
  })();
  return {
    stop: async () => {
      running = false;
      await done.catch(() => {});
    },
  };
}

export async function measureFanout(o: FanoutOptions): Promise<FanoutLine> {
  const model = await startSlotModelThread({
    slots: o.slots,
    promptMsPerToken: o.promptMsPerToken,
    genMsPerToken: o.genMsPerToken,
    answersModule: new URL('./model-answers.ts', import.meta.url).href,
    answers: 'fanout',
  });
  const inst = await installation({
    tree: o.tree,
    databaseUrl: o.databaseUrl,
    modelUrl: model.baseUrl,
    env: { LLM_CONCURRENCY: String(o.concurrency) },
  });
  const db = new pg.Client({ connectionString: inst.databaseUrl });
  const users: Array<{ stop: () => Promise<void> }> = [];
  try {
    const web = await inst.web({ RUN_WORKERS: 'false' });
    await web.signUp('main@bench.example');
    await db.connect();
    const { clones } = await seed(db, 'main@bench.example', o.chatUsers);
    // Conversations already under way, their window full: idle and during the fan-out, the chat's
    // prompts are alike (otherwise the later ones, during the fan-out, would be the longer). Each
    // user's is their own (its first words name them) unless sharedHistory.
    await db.query(
      `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, created_at)
       SELECT u.id, 'chat', CASE WHEN i % 2 = 0 THEN 'human' ELSE 'assistant' END,
              CASE WHEN i % 2 = 0 THEN 'message' ELSE 'markdown' END,
              CASE WHEN $1::boolean THEN '' ELSE u.email || ', ' END ||
              CASE WHEN i % 2 = 0 THEN 'earlier question ' || i || ': what should I cook this week?'
                   ELSE 'earlier answer ' || i || ': ' || repeat('try a simple dish with what you have, ', 12) END,
              now() - make_interval(mins => 120 - i)
       FROM users u, generate_series(0, 39) AS i WHERE u.email LIKE 'clone-%@bench.example'`,
      [o.sharedHistory],
    );
    // Verified, paused until they are made due all at once; no weather, calendar, research or mail.
    const { rows } = await db.query<{ first: number; last: number }>(
      `WITH u AS (
         INSERT INTO users (email, time_zone, is_daily_message_paused, daily_message_email, created_at)
         SELECT 'fanout-' || i || '@bench.example', 'UTC', true, false, (now() AT TIME ZONE 'UTC') - interval '30 days'
         FROM generate_series(1, $1::int) AS i RETURNING id, email, created_at
       ), e AS (
         INSERT INTO email_addresses (user_id, email, verified, "primary", created_at)
         SELECT id, email, true, true, created_at FROM u
       )
       SELECT min(id)::int AS first, max(id)::int AS last FROM u`,
      [o.users],
    );
    const ids = [rows[0]?.first ?? 0, rows[0]?.last ?? 0];
    await Promise.all([inst.worker('worker 1'), inst.worker('worker 2')]);

    const samples: Array<{ at: number; ttft: number }> = [];
    const wsUrl = `${web.base.replace(/^http/, 'ws')}/ws/chat/`;
    users.push(...clones.map((cookie, i) => chatUser(wsUrl, web.base, cookie, i, samples)));
    const idleFrom = Date.now() + 10_000;
    const due = Math.ceil((Date.now() + o.idleMs + 15_000) / 60_000) * 60_000;
    o.progress(
      `  ${o.chatUsers} users chatting; ${o.users} users fall due at ${new Date(due).toISOString().slice(11, 16)} UTC`,
    );
    await sleep(due - 4000 - Date.now());
    await db.query(
      `UPDATE users SET is_daily_message_paused = false,
         daily_message_time = to_char(to_timestamp($1::float8 / 1000) AT TIME ZONE 'UTC', 'HH24:MI')
       WHERE id BETWEEN $2 AND $3`,
      [due, ...ids],
    );
    const counts = async () =>
      (
        await db.query<{ claimed: number; delivered: number; first: number | null; last: number | null }>(
          `SELECT count(*)::int AS claimed, count(chat_message_id)::int AS delivered,
             (extract(epoch FROM min(created_at)) * 1000)::float8 AS first,
             (extract(epoch FROM max(delivered_at)) * 1000)::float8 AS last
           FROM daily_messages WHERE user_id BETWEEN $1 AND $2`,
          ids,
        )
      ).rows[0];
    let c = await counts();
    let printed = Date.now();
    while ((c?.delivered ?? 0) < o.users && Date.now() < due + o.timeoutMs) {
      await sleep(500);
      c = await counts();
      if (Date.now() - printed > 30_000) {
        o.progress(`    ${Math.round((Date.now() - due) / 1000)} s: ${c?.claimed} claimed, ${c?.delivered} delivered`);
        printed = Date.now();
      }
    }
    const fanEnd = Date.now();
    await Promise.all(users.splice(0).map((u) => u.stop()));
    const fanStart = c?.first ?? due;
    const delivered = c?.delivered ?? 0;
    if (process.env.BENCH_DEBUG) {
      const chats = (await model.calls()).filter((k) => k.stream && !k.kind.includes('writing the user'));
      for (const [name, from, to] of [
        ['idle', idleFrom, due],
        ['during', fanStart, fanEnd],
      ] as const) {
        const within = chats.filter((k) => k.receivedAt >= from && k.receivedAt < to);
        const med = (f: (k: (typeof within)[number]) => number) => stats(within.map(f)).p50.toFixed(1);
        o.progress(
          `    ${name}: model queue ${med((k) => k.startedAt - k.receivedAt)} ms, to first token ${med((k) => k.firstTokenAt - k.startedAt)} ms, uncached tokens ${med((k) => k.promptTokens - k.cachedTokens)}`,
        );
        // What the slot's cache held before each chat call: which calls evict the chat's prefix.
        const byAfter = new Map<string, number[]>();
        for (const k of within) {
          const key = (k.after ?? '').slice(0, 40) || '(empty)';
          byAfter.set(key, [...(byAfter.get(key) ?? []), k.promptTokens - k.cachedTokens]);
        }
        for (const [after, xs] of byAfter)
          o.progress(`      after "${after}": ${xs.length} calls, uncached p50 ${stats(xs).p50}`);
      }
    }
    return {
      idle: stats(samples.filter((s) => s.at >= idleFrom && s.at < due).map((s) => s.ttft)),
      during: stats(samples.filter((s) => s.at >= fanStart && s.at < fanEnd).map((s) => s.ttft)),
      completedS: delivered >= o.users && c?.last ? (c.last - due) / 1000 : null,
      delivered,
    };
  } finally {
    await Promise.all(users.map((u) => u.stop()));
    await db.end().catch(() => {});
    await inst.close();
    await model.close();
  }
}
