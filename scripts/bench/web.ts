// The web app's figures for `npm run bench`: the JavaScript index.html loads up front, gzipped, and
// Lighthouse's performance score driving Debian's Chromium.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import lighthouse from 'lighthouse';
import WebSocket from 'ws';

export interface InitialJs {
  /** Gzipped bytes of the entry script and every module it preloads. */
  gzipBytes: number;
  files: Array<{ file: string; bytes: number; gzipBytes: number }>;
}

// Static imports in a built chunk (`import x from "./a.js"`, `import "./a.js"`, `export * from "./a.js"`);
// a dynamic `import("./a.js")` loads later and is not counted.
const STATIC_IMPORT = /(?:^|[;\s}])(?:import|export)\s*(?:[\w*$\s{},]*?\s*from\s*)?["']([^"']+\.js)["']/g;

/**
 * What the browser must fetch before the app runs: index.html's module script, its modulepreload
 * links and anything they import statically (Vite preloads all of it), each gzipped with zlib's
 * default level, as Vite's report and most servers compress. 1 KB = 1,000 bytes, as Vite prints.
 */
export async function initialJs(distDir: string): Promise<InitialJs> {
  const html = await readFile(path.join(distDir, 'index.html'), 'utf8');
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
  const queue = (html.match(/<(script|link)\b[^>]*>/g) ?? []).flatMap((tag) => {
    if (tag.startsWith('<script') && attr(tag, 'type') === 'module') return [attr(tag, 'src') ?? ''];
    if (tag.startsWith('<link') && attr(tag, 'rel') === 'modulepreload') return [attr(tag, 'href') ?? ''];
    return [];
  });
  if (!queue.length) throw new Error(`no module script in ${distDir}/index.html`);
  const seen = new Set<string>();
  const files: InitialJs['files'] = [];
  for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
    const file = url.replace(/^\//, '');
    if (seen.has(file)) continue;
    seen.add(file);
    const data = await readFile(path.join(distDir, file));
    files.push({ file, bytes: data.length, gzipBytes: gzipSync(data).length });
    for (const [, spec = ''] of data.toString('utf8').matchAll(STATIC_IMPORT)) {
      if (spec.startsWith('.')) queue.push(path.posix.join(path.posix.dirname(file), spec));
      else if (spec.startsWith('/')) queue.push(spec);
    }
  }
  return { gzipBytes: files.reduce((n, f) => n + f.gzipBytes, 0), files };
}

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian's Chromium with a debugging port, headless, in a profile of its own. */
async function launchChromium(): Promise<{ port: number; browserUrl: string; close: () => Promise<void> }> {
  const profile = await mkdtemp(path.join(tmpdir(), 'daybook-bench-chromium-'));
  const child: ChildProcess = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const browserUrl = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`Chromium did not start: ${text.slice(-500)}`)), 20_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`Chromium exited (${code}): ${text.slice(-500)}`)));
  });
  return {
    port: Number(new URL(browserUrl).port),
    browserUrl,
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      // Chromium's helpers may still be writing the profile a moment after it exits.
      await rm(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}

export interface LighthouseRun {
  score: number;
  /** Where the page ended (a signed-out /chat would end at the sign-in page). */
  finalUrl: string;
  fcpMs: number;
  lcpMs: number;
  tbtMs: number;
  cls: number;
  /** The page as it ended (JPEG), to look at; not kept in the results file. */
  screenshot?: Buffer;
  /** Lighthouse's whole report (JSON), to see where the time went; not kept in the results file. */
  report?: string;
}

function screenshotOf(details: unknown): Buffer | undefined {
  const data = (details as { data?: unknown } | undefined)?.data;
  return typeof data === 'string' ? Buffer.from(data.replace(/^data:[^,]*,/, ''), 'base64') : undefined;
}

/** Sets cookies in the browser's own jar over the DevTools protocol, as a signed-in visitor has them. */
async function setCookies(browserUrl: string, url: string, cookies: Record<string, string>) {
  const ws = new WebSocket(browserUrl);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const params = { cookies: Object.entries(cookies).map(([name, value]) => ({ name, value, url })) };
  ws.send(JSON.stringify({ id: 1, method: 'Storage.setCookies', params }));
  const reply = await new Promise<{ error?: { message: string } }>((resolve) =>
    ws.once('message', (data) => resolve(JSON.parse(data.toString()))),
  );
  ws.close();
  if (reply.error) throw new Error(`Storage.setCookies: ${reply.error.message}`);
}

/**
 * Lighthouse's default (mobile, simulated throttling) performance category, once, in a fresh
 * Chromium profile. With `cookies`, the browser holds them before the page loads (Lighthouse then
 * keeps storage as it is: the profile is new, so nothing else is cached).
 */
export async function lighthouseRun(url: string, cookies: Record<string, string> = {}): Promise<LighthouseRun> {
  const chromium = await launchChromium();
  try {
    await setCookies(chromium.browserUrl, new URL(url).origin, cookies);
    const result = await lighthouse(url, {
      port: chromium.port,
      logLevel: 'error',
      output: 'json',
      onlyCategories: ['performance'],
      disableStorageReset: true,
    });
    const lhr = result?.lhr;
    if (!lhr) throw new Error(`Lighthouse returned nothing for ${url}`);
    if (lhr.runtimeError) throw new Error(`Lighthouse: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    const metric = (id: string) => lhr.audits[id]?.numericValue ?? Number.NaN;
    return {
      score: Math.round((lhr.categories.performance?.score ?? 0) * 100),
      finalUrl: lhr.finalDisplayedUrl,
      fcpMs: metric('first-contentful-paint'),
      lcpMs: metric('largest-contentful-paint'),
      tbtMs: metric('total-blocking-time'),
      cls: metric('cumulative-layout-shift'),
      screenshot: screenshotOf(lhr.audits['final-screenshot']?.details),
      report: JSON.stringify(lhr),
    };
  } finally {
    await chromium.close();
  }
}
