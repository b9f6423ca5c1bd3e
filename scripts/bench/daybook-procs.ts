// Daybook as the model benchmark runs it: from the source of a checkout (this one, or a worktree at
// another commit), a web process and worker processes in processes of their own on one scratch
// PostgreSQL database, talking to the bench's model.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../tests/helpers/free-port.ts';
import { scratchDatabase } from '../lib/scratch-db.ts';
import { signUp } from './seed.ts';

export const METRICS_TOKEN = 'bench-model-metrics-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** One scratch database and data folder, for the processes of one installation. */
export async function installation(o: {
  tree: string;
  databaseUrl: string;
  modelUrl: string;
  env?: Record<string, string>;
}) {
  const scratch = await scratchDatabase(o.databaseUrl);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-model-'));
  // The bench loads no page: production's check for a built web app is met by an empty one.
  const web = path.join(dataDir, 'web');
  await mkdir(web);
  await writeFile(path.join(web, 'index.html'), '<!doctype html><title>Daybook</title>');
  const children: ChildProcess[] = [];
  const logs = new Map<string, string>();

  function spawnDaybook(name: string, entry: string, env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: o.tree,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        DATABASE_URL: scratch.url,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
        SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop',
        LLM_BASE_URL: o.modelUrl,
        LLM_MODEL: 'bench-model',
        WEATHER_PROVIDER: 'none',
        WEB_DIST_DIR: web,
        ...o.env,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    logs.set(name, '');
    const keep = (chunk: Buffer) => logs.set(name, ((logs.get(name) ?? '') + chunk.toString()).slice(-100_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    return child;
  }

  return {
    databaseUrl: scratch.url,
    log: (name: string) => logs.get(name) ?? '',
    /** The web process (its first account signed up), and workers unless `workers` is 0. */
    async web(env: Record<string, string> = {}) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const child = spawnDaybook('web', 'apps/server/src/server.ts', { PORT: String(port), PUBLIC_URL: base, ...env });
      let token = '';
      for (let waited = 0; !token; waited += 200) {
        if (child.exitCode !== null) throw new Error(`Daybook exited (${child.exitCode}):\n${logs.get('web')}`);
        if (waited > 120_000) throw new Error(`Daybook did not log its first invite within 120 s:\n${logs.get('web')}`);
        token = /[?&]itoken=([A-Za-z0-9_-]+)/.exec(logs.get('web') ?? '')?.[1] ?? '';
        if (!token) await sleep(200);
      }
      return { base, token, signUp: (email: string) => signUp(base, base, token, email) };
    },
    /** A worker process (npm run worker), ready once it says so. */
    async worker(name: string, env: Record<string, string> = {}) {
      const child = spawnDaybook(name, 'apps/server/src/worker.ts', { LOG_LEVEL: 'info', ...env });
      for (let waited = 0; !/Daybook worker is running/.test(logs.get(name) ?? ''); waited += 200) {
        if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${logs.get(name)}`);
        if (waited > 120_000) throw new Error(`${name} did not start within 120 s:\n${logs.get(name)}`);
        await sleep(200);
      }
    },
    async close() {
      await Promise.all(children.map(stop));
      await scratch.drop().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export type Installation = Awaited<ReturnType<typeof installation>>;
