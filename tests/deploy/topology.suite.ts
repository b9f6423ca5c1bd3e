// The docker compose topology, run natively (no Docker daemon here): the very commands the compose
// services run — the compiled server twice (web only) and the compiled worker twice — on one
// PostgreSQL database, each on its own port, against local fake providers. Checked with supertest and
// real WebSockets: the instances behave as one.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TServerEvent } from '@daybook/contracts';
import pg from 'pg';
import PgBoss from 'pg-boss';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { type FakeSearch, fakeResults, startFakeSearch } from '../helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../helpers/fake-site.ts';
import { freePort } from '../helpers/free-port.ts';
import type { Runtime } from '../helpers/runtimes.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { createDatabaseUrl } from '../helpers/test-db.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { ALLAUTH as API, HttpSession, openTab, PUBLIC_URL } from './http-session.ts';
import { type Proc, spawnProc, untilReady } from './proc.ts';
/**
 * The suite, on one Node runtime: topology.test.ts runs it on the node running the tests,
 * topology.node24.test.ts on Node 24, which the Docker image runs.
 */
export function topologySuite(runtime: Runtime) {
  const ROOT = path.resolve(import.meta.dirname, '../..');
  const SERVER = process.env.TOPOLOGY_SOURCE
    ? path.join(ROOT, 'apps/server/src/server.ts')
    : path.join(ROOT, 'apps/server/dist/server.js');
  const WORKER = process.env.TOPOLOGY_SOURCE
    ? path.join(ROOT, 'apps/server/src/worker.ts')
    : path.join(ROOT, 'apps/server/dist/worker.js');
  const PASSWORD = 'correct horse battery';
  const onPostgres = inject('testDb').kind === 'postgres';

  let dbUrl = '';
  let dropDb: () => Promise<void> = async () => {};
  let fake: FakeOpenAI;
  /** Reports are not written while set: researches stay at their writing step. */
  let holdReports = false;
  let search: FakeSearch;
  let site: FakeSite;
  let smtp: TestSmtp;
  const procs: Proc[] = [];
  let a: Proc;
  let b: Proc;
  let workerMetricsPort = 0;
  const METRICS_TOKEN = 'topology-metrics-token-0123456789';

  function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      DATABASE_URL: dbUrl,
      REALTIME_BUS: 'postgres',
      SECRET_KEY: 'topology-secret-key-0123456789-abcdefghijkl',
      PUBLIC_URL,
      SMTP_URL: smtp.url,
      LLM_BASE_URL: fake.baseUrl,
      LLM_MODEL: 'fake-model',
      LLM_MAX_RETRIES: '0',
      SEARXNG_URL: search.searxngUrl,
      SEARCH_PROVIDERS: 'searxng',
      FETCH_ALLOW: '127.0.0.1',
      WEATHER_PROVIDER: 'none',
      DATA_DIR: path.join(ROOT, `test-results/topology-data-${runtime.name.replace(/\W+/g, '-')}`),
      ...extra,
    };
  }

  async function start(name: string, entry: string, extra: Record<string, string> = {}): Promise<Proc> {
    const port = await freePort();
    const args = entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry];
    const proc = spawnProc(name, runtime.node, args, env({ PORT: String(port), ...extra }), port);
    procs.push(proc);
    return proc;
  }

  const ready = (p: Proc) => untilReady(p, { timeoutMs: 60_000, intervalMs: 100 });
  const logged = (p: Proc, pattern: RegExp) =>
    waitFor(
      () => `${p.name} to log ${pattern}\n${p.output.join('')}`,
      () => pattern.exec(p.output.join(''))?.[1],
      { timeoutMs: 60_000, intervalMs: 100 },
    );

  /** The job schedule's state in the database, for a failure message. */
  async function scheduleState(): Promise<string> {
    const client = new pg.Client({ connectionString: dbUrl });
    const lines: string[] = [];
    try {
      await client.connect();
      for (const sql of [
        'SELECT now(), cron_on, maintained_on FROM pgboss.version',
        'SELECT name, cron, timezone, created_on, updated_on FROM pgboss.schedule',
        'SELECT name, state, count(*)::int AS n, min(created_on) AS first, max(completed_on) AS last FROM pgboss.job GROUP BY 1, 2 ORDER BY 1, 2',
        'SELECT daily_message_time, time_zone, created_at FROM users',
        'SELECT user_id, local_date, created_at FROM daily_messages',
        `SELECT application_name, state, wait_event_type, wait_event, now() - query_start AS running, left(query, 120) AS query
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
      ]) {
        const { rows } = await client.query(sql).catch((e: Error) => ({ rows: [{ error: e.message }] }));
        lines.push(sql.split('\n')[0] ?? sql, ...rows.map((r) => `  ${JSON.stringify(r)}`));
      }
    } catch (e) {
      lines.push(`(could not read the database: ${(e as Error).message})`);
    } finally {
      await client.end().catch(() => {});
    }
    return lines.join('\n');
  }

  /** A browser behind the proxy (its address as the proxy reports it). */
  class Session extends HttpSession {
    constructor() {
      super({ forwardedFor: '10.9.9.9' });
    }
  }

  const text = (kind: string, pattern: string | RegExp) => (e: TServerEvent) =>
    e.message_type === kind &&
    'raw_text' in e &&
    (typeof pattern === 'string' ? e.raw_text === pattern : pattern.test(e.raw_text));

  /** Signs up through instance `p` with an invite link, verifies by the mailed link, and signs in. */
  async function signUp(p: Proc, inviteUrl: string, email: string): Promise<Session> {
    const token = new URL(inviteUrl).searchParams.get('itoken') ?? '';
    const session = new Session();
    const mailsBefore = smtp.messages.length;
    const signup = await session.send(p, 'post', '/api/auth/signup/', {
      email,
      password1: PASSWORD,
      password2: PASSWORD,
      inviteToken: token,
    });
    expect(signup.status, signup.text).toBe(201);
    const mail = await smtp.waitFor(email, { subject: /Confirm your email/, after: mailsBefore });
    const link = mail.links.find((l) => l.includes('/auth/verify-email/'));
    const key = decodeURIComponent(link?.split('/auth/verify-email/')[1] ?? '');
    expect(key).toBeTruthy();
    const verified = await session.send(p, 'post', `${API}/auth/email/verify`, { key });
    expect([200, 401]).toContain(verified.status);
    // Verifying in the browser that signed up signs it in.
    if (verified.status === 200) return session;
    const login = await session.send(p, 'post', `${API}/auth/login`, { email, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    return session;
  }

  describe.runIf(onPostgres)(`the compose topology, natively, on ${runtime.name}`, () => {
    let admin: Session;
    let inviteUrl = '';

    beforeAll(async () => {
      if (!existsSync(SERVER) || !existsSync(WORKER))
        throw new Error('apps/server/dist is missing: run `npm run build:server` (npm test does)');
      const created = await createDatabaseUrl();
      if (!created) throw new Error('needs PostgreSQL');
      dbUrl = created.url;
      dropDb = created.drop;
      [fake, search, site, smtp] = await Promise.all([
        startFakeOpenAI(),
        startFakeSearch(),
        startFakeSite(),
        startSmtp(),
      ]);
      fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3 }));
      search.onSearch(() => fakeResults(site.origin, ['/articles/e-bike-commuting', '/articles/battery-care']));
      fake.onJson((req) => {
        const tool = req.tools?.[0]?.function.name;
        if (tool === 'plan_research') return { text: JSON.stringify({ queries: ['e-bike commute tips'] }) };
        if (tool === 'write_report') {
          if (holdReports) return { stall: true };
          const prompt = req.messages.map((m) => m.content).join('\n');
          const urls = [...prompt.matchAll(/^URL: (.+)$/gm)].map((m) => m[1] as string);
          return {
            text: JSON.stringify({
              introduction: 'Commuting by e-bike is popular [1].',
              body: urls.map((_, i) => `- Point ${i + 1} [${i + 1}]`).join('\n'),
              conclusion: 'Ride on [1].',
              sources: urls.map((url, i) => ({ url, title: `Source ${i + 1}` })),
            }),
          };
        }
        return { text: '{"operations":[]}' };
      });
      // Web-only instances, as the compose `app` service runs them, all starting at once (they apply
      // the migrations once between them), and a worker.
      a = await start('app A', SERVER, { RUN_WORKERS: 'false' });
      b = await start('app B', SERVER, { RUN_WORKERS: 'false' });
      workerMetricsPort = await freePort();
      const workers = [
        await start('worker 1', WORKER, {
          LOG_LEVEL: 'debug',
          METRICS_ENABLED: 'true',
          METRICS_TOKEN,
          WORKER_METRICS_PORT: String(workerMetricsPort),
        }),
        // Debug: each daily tick logs the zones' clocks it compared, which a failure here prints.
        await start('worker 2', WORKER, { LOG_LEVEL: 'debug' }),
      ];
      await Promise.all([ready(a), ready(b), ...workers.map((w) => logged(w, /(Daybook worker is running)/))]);
      // The operator finds the first invite in an instance's log; its account is an administrator.
      inviteUrl = await Promise.race([
        logged(a, /invite link \(one use, valid 7 days\): ([^\s"]+)/),
        logged(b, /invite link \(one use, valid 7 days\): ([^\s"]+)/),
      ]);
    }, 120_000);

    afterAll(async () => {
      for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exited));
      await Promise.all([fake?.close(), search?.close(), site?.close(), smtp?.close()]);
      await dropDb();
    }, 60_000);

    it('shares accounts and sessions: signed up on A, signed in on B', async () => {
      admin = await signUp(a, inviteUrl, 'admin@example.com');
      const onB = await admin.get(b, `${API}/auth/session`);
      expect(onB.status).toBe(200);
      expect(onB.body.data.user.email).toBe('admin@example.com');
      const me = await admin.get(b, '/api/users/me/');
      expect(me.status).toBe(200);
      // The daily message falls due at the start of the next minute (UTC): the last test waits for it,
      // written by one of two workers. (A time already past on the day the account was made is
      // tomorrow's, so it must be ahead.)
      const due = new Date(Date.now() + 60_000);
      const time = `${String(due.getUTCHours()).padStart(2, '0')}:${String(due.getUTCMinutes()).padStart(2, '0')}`;
      const set = await admin.send(b, 'patch', '/api/users/me/', { daily_message_time: time, time_zone: 'UTC' });
      expect(set.status, set.text).toBe(200);
    });

    it("delivers what a tab on B sends to the user's tab on A, answer included", async () => {
      const tabA = await openTab(a, admin);
      const tabB = await openTab(b, admin);
      tabB.say('hello from B');
      const echo = await tabA.next(text('message', 'hello from B'));
      const answerA = await tabA.next((e) => e.message_type === 'markdown');
      expect(answerA).toMatchObject({ raw_text: 'You said: hello from B' });
      expect(await tabB.next(text('message', 'hello from B'))).toEqual(echo);
      expect(await tabB.next((e) => e.message_type === 'markdown')).toEqual(answerA);
      tabA.ws.close();
      tabB.ws.close();
    });

    it('runs a research started on A on the worker, and delivers it to a tab on B', async () => {
      const tabA = await openTab(a, admin);
      const tabB = await openTab(b, admin);
      tabA.say('/research e-bike commuting');
      const done = await tabB.next((e) => e.message_type === 'research' && e.research.stage === 'done', 30_000);
      expect(done).toBeTruthy();
      const report = await tabB.next((e) => e.message_type === 'markdown' && /e-bike/i.test(e.raw_text), 30_000);
      expect(report).toBeTruthy();
      const resources = await admin.get(b, '/api/resources/');
      expect(resources.body.some((r: { resource_type: string }) => r.resource_type === 'research')).toBe(true);
      tabA.ws.close();
      tabB.ws.close();
    });

    it('a Cancel on B stops the research the worker runs, at once', async () => {
      holdReports = true;
      try {
        const tabA = await openTab(a, admin);
        const tabB = await openTab(b, admin);
        const abandoned = fake.abandoned;
        tabA.say('/research folding bikes on trains');
        const writing = await tabB.next((e) => e.message_type === 'research' && e.research.stage === 'writing', 30_000);
        if (writing.message_type !== 'research') throw new Error('not a card');
        tabB.ws.send(JSON.stringify({ message_type: 'cancel_research', id: writing.research.id }));
        await tabA.next((e) => e.message_type === 'research' && e.research.stage === 'cancelled', 10_000);
        // The worker gave up the model call it was waiting on: the run is over, not left to time out.
        await waitFor(
          () => 'the held model call to be abandoned',
          async () => fake.abandoned > abandoned,
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        tabA.ws.close();
        tabB.ws.close();
      } finally {
        holdReports = false;
      }
    });

    it("serves the worker's own metrics on its port, behind the token", async () => {
      const url = `http://127.0.0.1:${workerMetricsPort}`;
      expect((await request(url).get('/metrics')).status).toBe(401);
      expect((await request(url).get('/api/users/me/')).status).toBe(404);
      const res = await request(url).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`);
      expect(res.status).toBe(200);
      expect(res.text).toContain('daybook_jobs_waiting');
      expect(res.text).toContain('daybook_process_cpu_seconds_total');
    });

    it('counts rate limits across instances', async () => {
      const stranger = new Session();
      const codes: string[] = [];
      // Five failed sign-ins for one address are allowed per five minutes, wherever they land.
      for (let i = 0; i < 6; i++) {
        const res = await stranger.send(i % 2 ? b : a, 'post', `${API}/auth/login`, {
          email: 'someone-else@example.com',
          password: 'wrong password',
        });
        expect(res.status).toBe(400);
        codes.push(res.body.errors?.[0]?.code);
      }
      expect(codes).toEqual([...Array(5).fill('email_password_mismatch'), 'too_many_login_attempts']);
    });

    it("closes the user's socket on B when the session signs out on A", async () => {
      const phone = new Session();
      const login = await phone.send(a, 'post', `${API}/auth/login`, {
        email: 'admin@example.com',
        password: PASSWORD,
      });
      expect(login.status, login.text).toBe(200);
      const tabB = await openTab(b, phone);
      const out = await phone.send(a, 'delete', `${API}/auth/session`);
      expect(out.status).toBe(401);
      expect(await tabB.closed).toBe(1008);
    });

    it("loses no acknowledged message when A is killed, and A's clients carry on through B", async () => {
      const tabA = await openTab(a, admin);
      fake.onChat(() => ({ text: 'thinking…', chunks: 50, delayMs: 100 }));
      tabA.say('remember this one', 'kill-1');
      await tabA.next(text('message', 'remember this one'));
      a.child.kill('SIGKILL');
      await a.exited;
      fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
      // The client reconnects to the other instance and resends what it had not seen answered.
      const tabB = await openTab(b, admin);
      tabB.say('remember this one', 'kill-1');
      await tabB.next(text('message', 'remember this one'));
      tabB.say('and carry on');
      await tabB.next(text('markdown', 'You said: and carry on'));
      const history = await admin.get(b, '/api/chat/messages/');
      const mine = history.body.results.filter(
        (m: { author_type: string; raw_text: string }) =>
          m.author_type === 'human' && m.raw_text === 'remember this one',
      );
      expect(mine).toHaveLength(1);
      tabB.ws.close();
    });

    it('gives one daily message per user with two workers', async () => {
      const workers = procs.filter((p) => p.name.startsWith('worker'));
      const daily = await waitFor(
        () => `the daily message\n${workers.map((w) => `${w.name}:\n${w.output.join('')}`).join('\n')}`,
        async () => {
          const res = await admin.get(b, '/api/resources/');
          const found = res.body.filter((r: { resource_type: string }) => r.resource_type === 'daily_message');
          return found.length ? found : undefined;
        },
        { timeoutMs: 150_000, intervalMs: 100 },
      ).catch(async (err: Error) => {
        // What the schedule, the queues and the database connections were doing: why nothing came.
        err.message += `\n${await scheduleState()}`;
        throw err;
      });
      expect(daily).toHaveLength(1);
      // The message's mail has gone out and no daily job is waiting or running; then one more tick, sent
      // now rather than waited for from the minute's schedule, runs on a worker: it wrote no second one.
      await smtp.waitFor('admin@example.com', { subject: /daily|today/i, timeoutMs: 30_000 });
      const boss = new PgBoss({ connectionString: dbUrl, schema: 'pgboss', supervise: false, schedule: false });
      boss.on('error', () => {});
      await boss.start();
      const db = new pg.Client({ connectionString: dbUrl });
      await db.connect();
      try {
        const tick = await boss.send('daily-tick', {});
        await waitFor(
          'the tick sent after the message to finish, and no daily job left',
          async () => {
            const result = await db.query<{ done: number; unfinished: number }>(
              `SELECT count(*) FILTER (WHERE id = $1 AND state = 'completed')::int AS done,
                      count(*) FILTER (WHERE name = 'daily-message' AND state IN ('created', 'retry', 'active'))::int AS unfinished
                 FROM pgboss.job WHERE name IN ('daily-tick', 'daily-message')`,
              [tick],
            );
            const jobs = result.rows[0];
            return jobs && jobs.done === 1 && jobs.unfinished === 0 ? true : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 100 },
        ).catch(async (err: Error) => {
          err.message += `\n${await scheduleState()}`;
          throw err;
        });
      } finally {
        await db.end().catch(() => {});
        await boss.stop({ graceful: false, close: true }).catch(() => {});
      }
      const again = await admin.get(b, '/api/resources/');
      expect(again.body.filter((r: { resource_type: string }) => r.resource_type === 'daily_message')).toHaveLength(1);
      expect(smtp.messages.filter((m) => m.to === 'admin@example.com' && /daily|today/i.test(m.subject))).toHaveLength(
        1,
      );
    }, 180_000);
  });
}
