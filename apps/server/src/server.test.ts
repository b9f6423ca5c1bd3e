// The real entry point as a child process: how it starts, refuses bad config, and shuts down.
import { type ChildProcess, spawn } from 'node:child_process';
import { lstat, mkdtemp, readdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './config.ts';

const ENTRY = path.join(REPO_ROOT, 'apps/server/src/server.ts');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

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

async function waitFor(check: () => Promise<boolean>, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

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
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200);
      // The first invite is logged just after the server starts listening.
      await waitFor(async () => run.output().includes('No accounts yet'));
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
      await waitFor(async () => run.output().includes('GET /api/memories/ 401'));
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
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200);
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
