// Lighthouse's performance score for / and /chat (signed in), driving Debian's Chromium against the
// production server (built web app, NODE_ENV=production, its own database):
//   npx tsx scripts/lighthouse.ts [--build] [--runs N] [--desktop] [--unverified] [--dist apps/web/dist]
//   (or against a running server: --url http://host:port --cookie '...')
// It starts the server (a scratch PostgreSQL database on DATABASE_URL, else embedded PGlite), signs a
// user up through the real API, runs Lighthouse's default mobile emulation (and the desktop preset
// with --desktop) N times per page, and prints the median score with the main opportunities.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import lighthouse, { type Config, desktopConfig, type Flags } from 'lighthouse';
import { chromium } from 'playwright-core';
import { freePort } from '../tests/helpers/free-port.ts';
import { startSmtp, type TestSmtp } from '../tests/helpers/smtp.ts';
import { scratchDatabase } from './lib/scratch-db.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export const LIGHTHOUSE_PATHS = ['/', '/chat'] as const;
export type LighthousePath = (typeof LIGHTHOUSE_PATHS)[number];
export type Preset = 'mobile' | 'desktop';

export interface PageReport {
  path: string;
  /** 0-100, Lighthouse's performance category. */
  score: number;
  finalUrl: string;
  metrics: { fcpMs: number; lcpMs: number; tbtMs: number; cls: number; speedIndexMs: number };
  /** Audits that cost the page points, worst first ("Reduce unused JavaScript: 20 KB", ...). */
  opportunities: string[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * A fresh headless Chromium (its own profile: a cold cache, as a first visit) with a debugging port
 * for Lighthouse. The session cookie goes into the browser's cookie jar, which Lighthouse keeps: an
 * extraHeaders Cookie would reach the page's request but not the app's fetch calls.
 */
async function launchChromium(baseUrl: string, cookie?: string) {
  const port = await freePort();
  const profile = await mkdtemp(path.join(tmpdir(), 'daybook-lighthouse-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [...CHROMIUM_FLAGS, `--remote-debugging-port=${port}`],
  });
  if (cookie) {
    const pairs = cookie.split(/;\s*/).filter(Boolean);
    await context.addCookies(
      pairs.map((pair) => ({
        name: pair.slice(0, pair.indexOf('=')),
        value: pair.slice(pair.indexOf('=') + 1),
        url: baseUrl,
      })),
    );
  }
  return {
    port,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Lighthouse's full result (performance only) for one URL, in a fresh Chromium. */
export async function lighthouseResult(url: string, options: { cookie?: string; preset?: Preset } = {}) {
  // Now and then Chromium's trace misses the navigation start (NO_NAVSTART); Lighthouse says to run again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await lighthouseOnce(url, options);
    } catch (err) {
      if (attempt >= 3 || !/NO_NAVSTART|NO_FCP|PROTOCOL_TIMEOUT/.test(String(err))) throw err;
    }
  }
}

async function lighthouseOnce(url: string, options: { cookie?: string; preset?: Preset }) {
  const chrome = await launchChromium(new URL(url).origin, options.cookie);
  try {
    const flags: Flags = { port: chrome.port, logLevel: 'error', output: 'json', onlyCategories: ['performance'] };
    const config: Config | undefined = options.preset === 'desktop' ? desktopConfig : undefined;
    const lhr = (await lighthouse(url, flags, config))?.lhr;
    if (!lhr) throw new Error(`Lighthouse returned nothing for ${url}`);
    if (lhr.runtimeError) throw new Error(`Lighthouse on ${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    return lhr;
  } finally {
    await chrome.close();
  }
}

/** One Lighthouse run of one page: the score, the metrics, and what costs points. */
export async function lighthousePage(
  baseUrl: string,
  pagePath: string,
  options: { cookie?: string; preset?: Preset } = {},
): Promise<PageReport> {
  const lhr = await lighthouseResult(new URL(pagePath, baseUrl).href, options);
  const value = (id: string) => lhr.audits[id]?.numericValue ?? Number.NaN;
  const opportunities = Object.values(lhr.audits)
    .filter((a) => a.score !== null && a.score < 0.9 && a.scoreDisplayMode !== 'informative')
    .filter((a) => a.scoreDisplayMode === 'metricSavings' || a.scoreDisplayMode === 'numeric' || a.details)
    .filter((a) => !['first-contentful-paint', 'largest-contentful-paint', 'speed-index'].includes(a.id))
    .filter((a) => !['total-blocking-time', 'cumulative-layout-shift', 'interactive'].includes(a.id))
    .sort((a, b) => (a.score ?? 1) - (b.score ?? 1))
    .map((a) => (a.displayValue ? `${a.title}: ${a.displayValue}` : a.title));
  return {
    path: pagePath,
    score: Math.round((lhr.categories.performance?.score ?? 0) * 100),
    finalUrl: lhr.finalDisplayedUrl,
    metrics: {
      fcpMs: Math.round(value('first-contentful-paint')),
      lcpMs: Math.round(value('largest-contentful-paint')),
      tbtMs: Math.round(value('total-blocking-time')),
      cls: Number(value('cumulative-layout-shift').toFixed(3)),
      speedIndexMs: Math.round(value('speed-index')),
    },
    opportunities,
  };
}

/**
 * The performance score of / and /chat on a running server (the median of `runs` Lighthouse runs,
 * default mobile emulation), both signed in with the given session Cookie header (without it, /chat
 * measures the sign-in page it redirects to).
 */
export async function lighthouseScores(
  baseUrl: string,
  options: { cookie?: string; preset?: Preset; runs?: number; onReport?: (report: PageReport) => void } = {},
): Promise<Record<LighthousePath, number>> {
  const scores = {} as Record<LighthousePath, number>;
  for (const pagePath of LIGHTHOUSE_PATHS) {
    const runs: number[] = [];
    for (let i = 0; i < (options.runs ?? 1); i++) {
      const report = await lighthousePage(baseUrl, pagePath, options);
      options.onReport?.(report);
      runs.push(report.score);
    }
    scores[pagePath] = median(runs);
  }
  return scores;
}

/**
 * The production server as a child process, with a user signed in, in a database of its own. The user
 * has verified their address (as everyone signing in a second time has) unless `unverified`: in their
 * first session, a reminder to verify appears under the nav bar once the account is read.
 */
export async function startProductionServer(
  options: { distDir?: string; unverified?: boolean } = {},
): Promise<{ baseUrl: string; cookie: string; stop(): Promise<void> }> {
  const port = await freePort();
  const smtp = await startSmtp();
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-lighthouse-'));
  const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : null;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    DATA_DIR: dataDir,
    WEATHER_PROVIDER: 'none',
    SMTP_URL: smtp.url,
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...(options.distDir ? { WEB_DIST_DIR: path.resolve(options.distDir) } : {}),
  };
  const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
  // Before the server starts: the embedded database allows one process at a time.
  const invite = spawnSync(tsx, [path.join(ROOT, 'scripts/invite.ts'), 'create'], { cwd: ROOT, env, encoding: 'utf8' });
  const token = /[?&]itoken=([^&\s]+)/.exec(invite.stdout)?.[1];
  if (invite.status !== 0 || !token) throw new Error(`invite.ts create failed: ${invite.stderr}${invite.stdout}`);

  let logs = '';
  const child: ChildProcess = spawn(tsx, [path.join(ROOT, 'apps/server/src/server.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => {
    logs += d;
  });
  child.stderr?.on('data', (d) => {
    logs += d;
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await scratch?.drop();
    await smtp.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    for (const until = Date.now() + 60_000; ; ) {
      if (child.exitCode !== null) throw new Error(`server exited early:\n${logs}`);
      if (
        await fetch(`${baseUrl}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (Date.now() > until) throw new Error(`server did not become ready:\n${logs}`);
      await new Promise((r) => setTimeout(r, 150));
    }
    const cookie = await signUp(baseUrl, token, options.unverified ? null : smtp);
    return { baseUrl, cookie, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const EMAIL = 'reader@example.com';

/** A real signup through the API (and the address verified with the mailed link); the session's Cookie header. */
async function signUp(baseUrl: string, token: string, smtp: TestSmtp | null): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  keep(await fetch(`${baseUrl}/_allauth/browser/v1/config`));
  const password = 'sunny side of the morning';
  const res = await fetch(`${baseUrl}/api/auth/signup/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: cookie(),
      origin: baseUrl,
      'x-csrftoken': jar.get('csrftoken') ?? '',
    },
    body: JSON.stringify({
      email: EMAIL,
      password1: password,
      password2: password,
      inviteToken: token,
    }),
  });
  if (res.status !== 201) throw new Error(`signup failed (${res.status}): ${await res.text()}`);
  keep(res);
  if (smtp) {
    // The link in the welcome mail, used as the verify-email page uses it.
    const mail = await smtp.waitFor(EMAIL, { subject: /Confirm your email/ });
    const key = mail.links.map((l) => /\/auth\/verify-email\/([^/?#\s]+)/.exec(l)?.[1]).find(Boolean);
    if (!key) throw new Error(`no verification link in: ${mail.text}`);
    const verify = await fetch(`${baseUrl}/_allauth/browser/v1/auth/email/verify`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: cookie(),
        origin: baseUrl,
        'x-csrftoken': jar.get('csrftoken') ?? '',
      },
      body: JSON.stringify({ key: decodeURIComponent(key) }),
    });
    if (!verify.ok) throw new Error(`verification failed (${verify.status}): ${await verify.text()}`);
    keep(verify);
  }
  return cookie();
}

function printReport(preset: Preset, r: PageReport) {
  const m = r.metrics;
  console.log(
    `${preset.padEnd(7)} ${r.path.padEnd(12)} score ${String(r.score).padStart(3)}   FCP ${m.fcpMs} ms  LCP ${m.lcpMs} ms  TBT ${m.tbtMs} ms  CLS ${m.cls}  SI ${m.speedIndexMs} ms  (ended at ${new URL(r.finalUrl).pathname})`,
  );
  for (const o of r.opportunities.slice(0, 6)) console.log(`                  - ${o}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (args.includes('--build')) {
    const built = spawnSync('npx', ['vite', 'build', 'apps/web', '--logLevel', 'warn'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    if (built.status !== 0) process.exit(1);
  }
  const runs = Number(option('--runs') ?? 3);
  const presets: Preset[] = args.includes('--desktop') ? ['mobile', 'desktop'] : ['mobile'];
  const given = option('--url');
  const server = given
    ? { baseUrl: given, cookie: option('--cookie') ?? '', stop: async () => {} }
    : await startProductionServer({ distDir: option('--dist'), unverified: args.includes('--unverified') });
  try {
    for (const preset of presets) {
      const scores = await lighthouseScores(server.baseUrl, {
        cookie: server.cookie,
        preset,
        runs,
        onReport: (r) => printReport(preset, r),
      });
      // The landing page as a visitor sees it, too (signed in, / shows the user's menu and links).
      const visitor: number[] = [];
      for (let i = 0; i < runs; i++) {
        const report = await lighthousePage(server.baseUrl, '/', { preset });
        printReport(preset, { ...report, path: '/ (visitor)' });
        visitor.push(report.score);
      }
      console.log(
        `${preset.padEnd(7)} median of ${runs}: / ${scores['/']}   /chat ${scores['/chat']}   / as a visitor ${median(visitor)}   (target ≥ 90)`,
      );
    }
  } finally {
    await server.stop();
  }
}
