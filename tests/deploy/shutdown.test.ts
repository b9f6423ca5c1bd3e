// SIGTERM during a streamed answer (issue 30, S7), against the server run as production runs it: a
// child process, real sockets, a model that streams slowly. The server stops taking connections,
// lets the answer finish (or stores what was streamed with the interrupted note), closes the socket
// with 1012 (service restart) and exits within its limit; the stored history then holds the answer,
// read from a second instance on the same PostgreSQL database or, on the embedded one, after a
// restart. And `npm start` passes SIGTERM on to the server.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ANSWER_INTERRUPTED, type TChatMessage, type TServerEvent } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SHUTDOWN_LIMIT_MS } from '../../apps/server/src/process.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { freePort } from '../helpers/free-port.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { createDatabaseUrl } from '../helpers/test-db.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { ALLAUTH as API, HttpSession, openTab, PUBLIC_URL, type Tab } from './http-session.ts';
import { type Proc, spawnProc, untilReady } from './proc.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SERVER = path.join(ROOT, 'apps/server/src/server.ts');
const PASSWORD = 'correct horse battery';
/** 50 pieces of 4 characters: the fake streams one per chunk. */
const PIECES = Array.from({ length: 50 }, (_, i) => `w${String(i).padStart(2, '0')} `);
const ANSWER = PIECES.join('');

/** Resolves with `promise`, or rejects after `ms` saying what it waited for. */
function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what()}`)), ms);
    }),
  ]);
}

/** True once nothing accepts TCP connections on the port. */
const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/** The text of the answer's stream events the tab got, in order. */
const streamed = (tab: Tab) => tab.events.map((e) => (e.message_type === 'stream' ? e.raw_text : '')).join('');

const answersTo = (messages: TServerEvent[], id: number) =>
  messages.filter((m): m is TChatMessage => 'reply_to' in m && m.reply_to === id && m.message_type !== 'stream');

describe('a SIGTERM during a streamed answer', () => {
  let fake: FakeOpenAI;
  let smtp: TestSmtp;
  let db: Awaited<ReturnType<typeof createDatabaseUrl>> = null;
  let dataDir = '';
  let webDir = '';
  const procs: Proc[] = [];
  let session: HttpSession;
  /** The instance the tab talks to (started again once it has exited). */
  let a: Proc;
  /** On PostgreSQL: a second instance, whose tab sees what A publishes; it reads the history too. */
  let b: Proc | null = null;
  const signalled = new Set<Proc>();

  async function start(name: string): Promise<Proc> {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      SECRET_KEY: 'shutdown-test-secret-key-0123456789-abcdefgh',
      SMTP_URL: smtp.url,
      LLM_BASE_URL: fake.baseUrl,
      LLM_MODEL: 'fake-model',
      LLM_MAX_RETRIES: '0',
      WEATHER_PROVIDER: 'none',
      DATA_DIR: dataDir,
      WEB_DIST_DIR: webDir,
      ...(db ? { DATABASE_URL: db.url, REALTIME_BUS: 'postgres' } : {}),
    };
    const proc = spawnProc(name, process.execPath, ['--import', 'tsx', SERVER], env, port);
    procs.push(proc);
    await untilReady(proc, { timeoutMs: 90_000, intervalMs: 50 });
    return proc;
  }

  beforeAll(async () => {
    [fake, smtp] = await Promise.all([startFakeOpenAI(), startSmtp()]);
    db = await createDatabaseUrl();
    dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-shutdown-'));
    webDir = path.join(dataDir, 'web');
    await mkdir(webDir);
    await writeFile(path.join(webDir, 'index.html'), '<!doctype html><div id="root"></div>');
    a = await start('A');
    const inviteUrl = await waitFor(
      () => `the first invite\n${a.output.join('')}`,
      () => /invite link \(one use, valid 7 days\): ([^\s"]+)/.exec(a.output.join(''))?.[1],
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    if (db) b = await start('B');
    // Signs up with the invite, verifies by the mailed link, and signs in.
    session = new HttpSession();
    const email = 'someone@example.com';
    const signup = await session.post(a, '/api/auth/signup/', {
      email,
      password1: PASSWORD,
      password2: PASSWORD,
      inviteToken: new URL(inviteUrl).searchParams.get('itoken') ?? '',
    });
    expect(signup.status, signup.text).toBe(201);
    const mail = await smtp.waitFor(email, { subject: /Confirm your email/ });
    const link = mail.links.find((l) => l.includes('/auth/verify-email/')) ?? '';
    const key = decodeURIComponent(link.split('/auth/verify-email/')[1] ?? '');
    const verified = await session.post(a, `${API}/auth/email/verify`, { key });
    if (verified.status !== 200) {
      const login = await session.post(a, `${API}/auth/login`, { email, password: PASSWORD });
      expect(login.status, login.text).toBe(200);
    }
  }, 240_000);

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await Promise.all([fake?.close(), smtp?.close()]);
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /**
   * Sends a message to A, waits until `streamedSoFar` of its answer reached the tab, sends A SIGTERM,
   * and returns what the tab saw, how A ended, and the history as read afterwards.
   */
  async function terminateWhileAnswering(clientId: string, streamedSoFar: string) {
    if (signalled.has(a)) {
      if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
      await a.exited;
      a = await start('A');
    }
    const tab = await openTab(a, session);
    const watcher = b ? await openTab(b, session) : null;
    tab.say('Tell me a long story', clientId);
    await waitFor(
      () => `the answer to stream\n${JSON.stringify(tab.events)}`,
      () => streamed(tab).startsWith(streamedSoFar),
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const human = tab.events.find((e) => e.message_type === 'message' && e.author_type === 'human');
    const humanId = human && 'message_id' in human ? human.message_id : null;
    if (humanId === null) throw new Error(`no echo in ${JSON.stringify(tab.events)}`);
    const signalledAt = Date.now();
    const port = Number(new URL(a.base).port);
    a.child.kill('SIGTERM');
    signalled.add(a);
    const dump = () => `\n${a.output.join('')}\n${JSON.stringify(tab.events)}`;
    // New connections are refused at once, while the open socket is still served.
    const refused = await waitFor(
      () => 'A to refuse new connections',
      () => refusesConnections(port),
      { timeoutMs: 3_000, intervalMs: 50 },
    ).catch(() => false);
    const openWhileRefusing = refused && tab.ws.readyState === WebSocket.OPEN;
    const closeCode = await within(tab.closed, SHUTDOWN_LIMIT_MS + 5_000, () => `the socket to close${dump()}`);
    const beforeClose = [...tab.events];
    const exitCode = await within(a.exited, SHUTDOWN_LIMIT_MS + 5_000, () => `A to exit${dump()}`);
    const exitMs = Date.now() - signalledAt;
    const output = a.output.join('');
    // The history, from B at once, or from A started again on the same embedded database.
    if (!b) a = await start('A again');
    const reader = b ?? a;
    const history = await session.get(reader, '/api/chat/messages/');
    expect(history.status, history.text).toBe(200);
    const stored = answersTo(history.body.results, humanId);
    // What the tab on B got of the answer, once it has it all (or after a while: what it has then).
    const live = watcher
      ? await waitFor(
          () => 'the answer on B',
          () => answersTo(watcher.events, humanId).length === stored.length && answersTo(watcher.events, humanId),
          { timeoutMs: 5_000, intervalMs: 50 },
        ).catch(() => answersTo(watcher.events, humanId))
      : null;
    tab.ws.close();
    watcher?.ws.close();
    return { humanId, openWhileRefusing, closeCode, beforeClose, exitCode, exitMs, output, stored, live };
  }

  it('lets an answer that ends within the drain finish, delivers it, then closes with 1012', async () => {
    fake.onChat(() => ({ text: ANSWER, chunks: 50, delayMs: 60 }));
    const r = await terminateWhileAnswering('sigterm-finish', PIECES.slice(0, 3).join(''));
    expect(r.closeCode, r.output).toBe(1012);
    // The whole answer reached the tab before its socket closed, and it is stored once.
    const final = { author_type: 'assistant', message_type: 'markdown', raw_text: ANSWER.trim(), reply_to: r.humanId };
    expect(answersTo(r.beforeClose, r.humanId)).toEqual([expect.objectContaining(final)]);
    expect(r.stored).toEqual([expect.objectContaining(final)]);
    if (r.live) expect(r.live).toEqual([expect.objectContaining(final)]);
    expect(r.exitCode, r.output).toBe(0);
    expect(r.exitMs).toBeLessThan(SHUTDOWN_LIMIT_MS);
    expect(r.openWhileRefusing).toBe(true);
  }, 180_000);

  it('stores what an answer that outlasts the drain streamed, with the interrupted note, at once', async () => {
    // Ten pieces, then the model goes quiet with the connection open.
    fake.onChat(() => ({ text: ANSWER, chunks: 50, delayMs: 20, stallAfterChunks: 10 }));
    const soFar = PIECES.slice(0, 10).join('');
    const r = await terminateWhileAnswering('sigterm-interrupt', soFar);
    expect(r.closeCode, r.output).toBe(1012);
    const expected = [
      expect.objectContaining({ author_type: 'assistant', message_type: 'markdown', raw_text: soFar.trim() }),
      expect.objectContaining({ author_type: 'system', message_type: 'system_message', raw_text: ANSWER_INTERRUPTED }),
    ];
    expect(answersTo(r.beforeClose, r.humanId)).toEqual(expected);
    expect(r.stored).toEqual(expected);
    if (r.live) expect(r.live).toEqual(expected);
    expect(r.exitCode, r.output).toBe(0);
    expect(r.exitMs).toBeLessThan(SHUTDOWN_LIMIT_MS);
    expect(r.openWhileRefusing).toBe(true);
  }, 180_000);
});

// ---- npm start ---------------------------------------------------------------------------------

/** The process and every descendant of it (Linux: from /proc), by pid. */
async function processTree(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) parents.set(Number(entry), ppid);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++)
    for (const [pid, ppid] of parents) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid);
  return tree;
}

/** Running (a zombie has ended: only its parent has not read its exit status yet). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

describe.runIf(process.platform === 'linux')('npm start', () => {
  let dir = '';
  let tree: number[] = [];

  afterAll(async () => {
    // Whatever a failure left running is ours: ended by pid.
    for (const pid of tree) if (await alive(pid)) process.kill(pid, 'SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('passes SIGTERM sent to the npm process on to the server, which stops listening and exits', async () => {
    // The start script exactly as package.json has it, run by npm in a folder that links to this
    // repository's code; only its build step is left out (the web app is a stub page here).
    dir = await mkdtemp(path.join(tmpdir(), 'daybook-npm-start-'));
    const rootPackage = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name: 'daybook-start-check',
        private: true,
        type: 'module',
        scripts: { start: rootPackage.scripts.start, build: 'true' },
      }),
    );
    for (const name of ['apps', 'packages', 'node_modules', 'prisma', 'scripts', 'tsconfig.json', 'tsconfig.base.json'])
      await symlink(path.join(ROOT, name), path.join(dir, name));
    await mkdir(path.join(dir, 'web'));
    await writeFile(path.join(dir, 'web/index.html'), '<!doctype html><div id="root"></div>');
    const port = await freePort();
    const started = spawn('npm', ['start'], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: path.join(dir, 'data'),
        WEB_DIST_DIR: path.join(dir, 'web'),
        LOG_FORMAT: 'json',
        WEATHER_PROVIDER: 'none',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    started.stdout?.on('data', (d: Buffer) => {
      output += d;
    });
    started.stderr?.on('data', (d: Buffer) => {
      output += d;
    });
    const pid = started.pid ?? 0;
    await waitFor(
      () => `npm start to serve on ${port}\n${output}`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok || undefined,
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    tree = await processTree(pid);
    expect(tree.length).toBeGreaterThan(1);

    // To npm's process alone, as a service manager or `kill <pid>` sends it.
    process.kill(pid, 'SIGTERM');
    await waitFor(
      () => `port ${port} to close and the processes to end: ${tree.join(', ')}\n${output}`,
      async () => (await refusesConnections(port)) && !(await Promise.all(tree.map(alive))).some(Boolean),
      { timeoutMs: SHUTDOWN_LIMIT_MS, intervalMs: 50 },
    );
    // The server itself closed (not killed): it logged the signal it got.
    expect(output).toContain('SIGTERM received, closing');
  }, 180_000);
});
