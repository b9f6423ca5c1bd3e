// Starts the real server as production runs it (node on the compiled apps/server/dist, the built web
// app, its own database) and a real Chromium. global-setup.ts builds what is missing or stale.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { freePort } from '../helpers/free-port.ts';
import { createDatabaseUrl } from '../helpers/test-db.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.join(ROOT, 'test-results/screenshots');
const SERVER_DIST = path.join(ROOT, 'apps/server/dist');

/** Test-only entry points (a movable clock, fake providers' endpoints), compiled beside the server. */
export const E2E_ENTRIES = {
  'daily-server': 'tests/e2e/daily-server.ts',
  'calendar-server': 'tests/e2e/calendar-server.ts',
} as const;
export const E2E_ENTRY_DIR = path.join(ROOT, 'test-results/e2e-entries');

/** The compiled file for a source entry point: the server, one of E2E_ENTRIES or an operator command. */
function compiled(source: string): string {
  const name = path.basename(source, '.ts');
  if (name in E2E_ENTRIES) return path.join(E2E_ENTRY_DIR, `${name}.js`);
  return path.join(SERVER_DIST, `${name}.js`);
}

export { freePort };

/** The servers running now, for the failure report (tests/e2e/setup.ts). */
export const runningApps = new Set<RunningApp>();

export interface RunningApp {
  baseUrl: string;
  logs(): string;
  stop(): Promise<void>;
  /** Kills the server process and starts it again on the same port and database. */
  restart(): Promise<void>;
}

/** Runs one of the operator commands (scripts/*.ts) against the app's database. */
export type RunCommand = (script: string, ...args: string[]) => string;

export async function startApp(
  env: Record<string, string> = {},
  /** Runs before the server starts, e.g. operator commands (the embedded database allows one process). */
  beforeStart?: (run: RunCommand) => Promise<void> | void,
  /** `entry`: the source of a test-only entry point (one of E2E_ENTRIES) to run instead of the server. */
  options: { entry?: string } = {},
): Promise<RunningApp & { run: RunCommand }> {
  const entry = compiled(options.entry ?? 'server.ts');
  const port = await freePort();
  const database = await createDatabaseUrl();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-e2e-'));
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    DATA_DIR: dataDir,
    // Nothing reaches the internet; the daily message test points it at the fake Open-Meteo.
    WEATHER_PROVIDER: 'none',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  };
  const run: RunCommand = (script, ...args) => {
    const res = spawnSync(process.execPath, ['--enable-source-maps', compiled(script), ...args], {
      cwd: ROOT,
      env: fullEnv,
      encoding: 'utf8',
    });
    if (res.status !== 0) throw new Error(`${script} ${args.join(' ')} failed: ${res.stderr}`);
    return res.stdout;
  };
  await beforeStart?.(run);
  const baseUrl = `http://127.0.0.1:${port}`;
  let logs = '';
  let child: ChildProcess;
  let exited: Promise<void>;

  const spawnServer = () => {
    child = spawn(process.execPath, ['--enable-source-maps', entry], {
      cwd: ROOT,
      env: fullEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => {
      logs += d;
    });
    child.stderr?.on('data', (d) => {
      logs += d;
    });
    exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  };

  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      child.kill('SIGKILL');
      await exited;
    }
  };

  const waitReady = async () => {
    const until = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited early:\n${logs}`);
      const ready = await fetch(`${baseUrl}/readyz`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ready) return;
      if (Date.now() > until) throw new Error(`server did not become ready:\n${logs}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };

  const stop = async () => {
    runningApps.delete(app);
    await kill();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };

  spawnServer();
  try {
    await waitReady();
  } catch (err) {
    await stop();
    throw err;
  }
  const restart = async () => {
    await kill();
    spawnServer();
    await waitReady();
  };
  const app = { baseUrl, logs: () => logs, stop, restart, run };
  runningApps.add(app);
  return app;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** Full-page screenshot under test-results/screenshots, for people to look at. */
export async function screenshot(page: Page, name: string) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  // Entrance animations jump to their end, so a picture never catches a message half faded in.
  await page.screenshot({
    path: path.join(SCREENSHOT_DIR, `${name}-${width}.png`),
    fullPage: true,
    animations: 'disabled',
  });
}

/** Creates an invite with the operator command (`invite.ts create ...args`) and returns its signup link. */
export function createInviteLink(run: RunCommand, ...args: string[]): string {
  const link = /Signup link \(shown once\): (\S+)/.exec(run('invite.ts', 'create', ...args))?.[1];
  if (!link) throw new Error('invite.ts printed no signup link');
  return link;
}

/** Signs up on the signup page an invite link opens; a new account lands on the demo tour, signed in. */
export async function signUpInBrowser(page: Page, signupLink: string, email: string, password: string) {
  await page.goto(signupLink);
  const field = page.getByLabel('Email');
  await field.waitFor();
  // An invite bound to an address comes with it filled in and locked.
  if (await field.isEditable()) await field.fill(email);
  else if ((await field.inputValue()) !== email) throw new Error(`the invite is for ${await field.inputValue()}`);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Confirm Password').fill(password);
  await page.getByRole('button', { name: 'Sign Up' }).click();
  await page.waitForURL((u) => u.pathname === '/demo-tour');
}
