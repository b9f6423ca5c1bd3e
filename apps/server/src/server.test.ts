// The real entry point as a child process: how it starts, refuses bad config, and shuts down.
import { type ChildProcess, spawn } from 'node:child_process';
import { lstat, mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../tests/helpers/free-port.ts';
import { waitFor } from '../../../tests/helpers/wait-for.ts';
import { REPO_ROOT } from './config.ts';

const ENTRY = path.join(REPO_ROOT, 'apps/server/src/server.ts');

function start(env: Record<string, string>) {
  // One process, as `npm start` runs it: tsx's CLI would stand between the test and the server, and on a
  // busy machine it SIGKILLs a child that has not acknowledged a relayed signal within 30 ms (exit 143).
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

// A cold start of the embedded database takes a while on a busy machine.
const WAIT = { timeoutMs: 60_000, intervalMs: 100 };
/** Until /readyz answers 200 (the connection is refused until the server listens). */
const ready = (port: number) =>
  waitFor(
    `/readyz on ${port}`,
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200,
    WAIT,
  );
/** Until the server's output has `text`. */
const logged = (run: ReturnType<typeof start>, text: string) =>
  waitFor(
    () => `"${text}" in the output:\n${run.output()}`,
    () => run.output().includes(text),
    WAIT,
  );

const stop = (child: ChildProcess) => child.kill('SIGKILL');

/** DATA_DIR and what is in it that a user other than the owner could read, write or enter. */
async function openToOthers(dir: string): Promise<string[]> {
  const open: string[] = [];
  if ((await stat(dir)).mode & 0o077) open.push(dir);
  for (const entry of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, entry);
    if ((await lstat(file)).mode & 0o077) open.push(file);
  }
  return open;
}

describe('server.ts', () => {
  it('exits with a message naming the bad variable', async () => {
    const run = start({ PORT: 'not-a-port', DATABASE_URL: 'mysql://nope' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('Invalid configuration:');
    expect(run.output()).toContain('PORT: must be a port number from 1 to 65535 (got "not-a-port")');
    expect(run.output()).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL (got "mysql://nope")');
  });

  it('starts on the embedded database with no other service, then closes cleanly on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-data-'));
    const run = start({ PORT: String(port), DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_FORMAT: 'json' });
    try {
      await ready(port);
      // The first invite is logged just after the server starts listening.
      await logged(run, 'No accounts yet');
      expect(run.output()).toContain(`database: embedded PGlite in ${dataDir}`);
      // The start line says what this process runs on; levels are names.
      expect(run.output()).toContain(
        `is ready at http://localhost:${port} (database: embedded PGlite in ${dataDir}; realtime bus: memory; background jobs: run in this process)`,
      );
      expect(run.output()).toMatch(/"level":"info"/);
      expect(run.output()).not.toMatch(/"level":\d/);
      expect(run.output()).toMatch(/applied \d+ migration\(s\)/);
      expect(run.output()).toMatch(
        /No accounts yet\. Create the first one with this invite link \(one use, valid 7 days\): http:\/\/localhost:\d+\/auth\/signup\?itoken=/,
      );
      // Nothing in DATA_DIR (database, secret key, mail outbox) is open to other users: the folder
      // is shut while running, and every file in it after a clean stop.
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      // Request log lines carry the path, never the query (what someone searched for, a key).
      await fetch(`http://127.0.0.1:${port}/api/memories/?search=my-secret-diagnosis`);
      await logged(run, 'GET /api/memories/ 401');
      // ... and the client's address, for fail2ban or CrowdSec.
      expect(run.output()).toMatch(/"ip":"127\.0\.0\.1","method":"GET","url":"\/api\/memories\/","status":401/);
      expect(run.output()).not.toContain('my-secret-diagnosis');
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.output()).toContain('SIGTERM received, closing');
      expect(await openToOthers(dataDir)).toEqual([]);
    } finally {
      stop(run.child);
    }

    // A second start on the same data directory applies nothing and keeps the data.
    const again = start({ PORT: String(port), DATA_DIR: dataDir, HOST: '127.0.0.1' });
    try {
      await ready(port);
      expect(again.output()).not.toContain('applied');
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
    // Two cold starts of the embedded database.
  }, 150_000);

  it('does not start when the database cannot be reached', async () => {
    const run = start({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PORT: String(await freePort()) });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('Daybook could not start:');
  });
});
