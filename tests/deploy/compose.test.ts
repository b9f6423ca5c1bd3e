// The Docker deployment without Docker (none runs on these machines): docker-compose.yml, the
// Dockerfile, .env.example and the Caddyfile are read and checked against the code, and the image's
// files (laid out as the Dockerfile copies them) run the compiled server and worker natively.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../apps/server/src/config.ts';
import { buildServer, ENTRY_POINTS, ROOT } from '../../scripts/lib/server-build.ts';
import { freePort } from '../helpers/free-port.ts';
import { deployRuntimes } from '../helpers/runtimes.ts';
import { createDatabaseUrl } from '../helpers/test-db.ts';
import { waitFor } from '../helpers/wait-for.ts';

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

// ---- What the files say ------------------------------------------------------------------------

/** The variables loadConfig reads: the keys of config.ts's EnvSchema. */
function configVariables(): string[] {
  const source = read('apps/server/src/config.ts');
  const start = source.indexOf('const EnvSchema = z.object({');
  const end = source.indexOf('\n});', start);
  expect(start, 'config.ts defines EnvSchema').toBeGreaterThan(0);
  return [...source.slice(start, end).matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1] as string);
}

type Service = {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  ports?: string[];
  profiles?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  deploy?: { replicas?: string | number };
};

const composeText = read('docker-compose.yml');
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = compose.services;

/** docker compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (_, name, colon, op, arg) => {
    const given = env[name];
    const unset = given === undefined || (colon === ':' && given === '');
    if (!op) return given ?? '';
    if (op === '-') return unset ? arg : (given as string);
    if (unset) throw new Error(`required variable ${name}: ${arg}`);
    return given as string;
  });
}

/** Every ${...} in the compose file: name, operator and default. */
const interpolations = [...composeText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g)].map((m) => ({
  name: m[1] as string,
  op: m[2] ?? '',
  arg: m[3] ?? '',
}));

/** .env.example: each variable (commented out or not), its value, and the comment above it. */
function envExample() {
  const lines = read('.env.example').split('\n');
  const vars = new Map<string, { value: string; comment: string; active: boolean }>();
  lines.forEach((line, i) => {
    const m = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) return;
    const above = lines[i - 1] ?? '';
    vars.set(m[2] as string, {
      value: m[3] as string,
      comment: above.startsWith('#') && !/^# [A-Z][A-Z0-9_]*=/.test(above) ? above.slice(1).trim() : '',
      active: !m[1],
    });
  });
  return vars;
}

/** A .env as an operator fills it in: .env.example with its required values set. */
function filledEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, { value, active }] of envExample()) if (active) env[name] = value;
  return {
    ...env,
    DAYBOOK_DOMAIN: 'daybook.example.test',
    POSTGRES_PASSWORD: randomBytes(32).toString('hex'),
    SECRET_KEY: randomBytes(32).toString('hex'),
    ...overrides,
  };
}

/** The environment a service's container gets, interpolated with `env`. */
function containerEnv(service: Service, env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(String(value), env)]),
  );
}

/** The Dockerfile's instructions (continuation lines joined), each with the stage it is in. */
function dockerfile() {
  const joined = read('Dockerfile').replace(/\\\n/g, ' ');
  let stage = '';
  const instructions: { stage: string; op: string; args: string }[] = [];
  for (const line of joined.split('\n')) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (!m || line.trim().startsWith('#')) continue;
    const [, op, args] = m as unknown as [string, string, string];
    if (op === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? '';
    instructions.push({ stage, op, args });
  }
  const runtime = instructions.filter((i) => i.stage === 'runtime');
  const one = (op: string) => runtime.filter((i) => i.op === op).at(-1)?.args ?? '';
  const env = Object.fromEntries([...one('ENV').matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]])) as Record<
    string,
    string
  >;
  return { instructions, runtime, one, env };
}

const SECRET = /SECRET|PASSWORD|TOKEN|API_KEY|SMTP_URL|REDIS_URL|DATABASE_URL/;
// Settings the image fixes (Dockerfile ENV and its file layout); compose does not pass them on.
const SET_BY_IMAGE = ['NODE_ENV', 'HOST', 'PORT', 'DATA_DIR', 'WEB_DIST_DIR', 'MIGRATIONS_DIR'];
// Compose-only variables: they configure services, not the app.
const COMPOSE_ONLY = ['DAYBOOK_DOMAIN', 'POSTGRES_PASSWORD', 'APP_REPLICAS', 'SEARXNG_SECRET', 'COMPOSE_PROFILES'];

describe('docker-compose.yml', () => {
  const settings = configVariables();

  it('reads the settings list from config.ts', () => {
    expect(settings).toEqual(expect.arrayContaining(['DATABASE_URL', 'SECRET_KEY', 'RUN_WORKERS', 'REALTIME_BUS']));
    expect(settings.length).toBeGreaterThan(40);
  });

  it('gives the app and the worker only settings config.ts reads, and every one the image does not fix', () => {
    for (const name of ['app', 'worker']) {
      const given = Object.keys(services[name]?.environment ?? {});
      expect(
        given.filter((v) => !settings.includes(v)),
        `${name}: unknown variables`,
      ).toEqual([]);
      const missing = settings.filter((v) => !SET_BY_IMAGE.includes(v) && !given.includes(v));
      // The worker runs jobs whatever RUN_WORKERS says (worker.ts).
      expect(
        missing.filter((v) => name === 'app' || v !== 'RUN_WORKERS'),
        `${name}: settings not passed on`,
      ).toEqual([]);
    }
    const { env } = dockerfile();
    expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '3000', DATA_DIR: '/data' });
  });

  it('configures web replicas that run no jobs, share chat events through PostgreSQL and trust Caddy', () => {
    const env = filledEnv();
    const app = loadConfig(containerEnv(services.app as Service, env));
    expect(app.jobs.runWorkers).toBe(false);
    expect(app.realtime.bus).toBe('postgres');
    expect(app.trustProxy).toBe(1);
    expect(app.publicUrl).toBe('https://daybook.example.test');
    expect(app.secretKey).toBe(env.SECRET_KEY);
    expect(app.db.url).toBe(`postgres://daybook:${env.POSTGRES_PASSWORD}@db:5432/daybook`);
    expect(interpolate(String(services.app?.deploy?.replicas), env)).toBe('2');
    expect(interpolate(String(services.app?.deploy?.replicas), { ...env, APP_REPLICAS: '4' })).toBe('4');

    // Every optional setting left empty in .env means the app's own default.
    expect(app.llm.model).toBeUndefined();
    expect(app.mail.smtpUrl).toBeUndefined();
    expect(app.research.dailyLimit).toBe(20);

    const worker = loadConfig(containerEnv(services.worker as Service, env));
    expect(worker.db.url).toBe(app.db.url);
    expect(worker.secretKey).toBe(app.secretKey);
  });

  it('will not start without the secrets, and gives no secret a default', () => {
    const unfilled = filledEnv({ POSTGRES_PASSWORD: '', SECRET_KEY: '' });
    expect(() => containerEnv(services.db as Service, unfilled)).toThrow(/POSTGRES_PASSWORD: set POSTGRES_PASSWORD/);
    expect(() => containerEnv(services.app as Service, filledEnv({ SECRET_KEY: '' }))).toThrow(/SECRET_KEY/);

    for (const { name, op, arg } of interpolations.filter((i) => SECRET.test(i.name))) {
      // SearXNG's placeholder key is the value it refuses to start with: an unset secret stops it.
      if (name === 'SEARXNG_SECRET') expect(arg).toBe('ultrasecretkey');
      else expect(op.endsWith('-') ? arg : '', `${name} has a default`).toBe('');
    }
    // No secret is written into the file itself.
    for (const [serviceName, service] of Object.entries(services)) {
      for (const [name, value] of Object.entries(service.environment ?? {})) {
        if (SECRET.test(name)) expect(String(value), `${serviceName}.${name}`).toMatch(/\$\{/);
      }
    }
    const dbUrl = String(services.app?.environment?.DATABASE_URL);
    expect(new URL(interpolate(dbUrl, filledEnv({ POSTGRES_PASSWORD: 'p' }))).password).toBe('p');
  });

  it('describes every setting and every compose variable in .env.example, with secrets left empty', () => {
    const example = envExample();
    const composeVars = [...new Set(interpolations.map((i) => i.name))];
    for (const name of [...settings, ...composeVars, ...COMPOSE_ONLY]) {
      expect(example.has(name), `${name} in .env.example`).toBe(true);
      expect(example.get(name)?.comment, `${name}'s comment`).not.toBe('');
    }
    expect([...example.keys()].filter((v) => !settings.includes(v) && !COMPOSE_ONLY.includes(v))).toEqual([]);
    for (const [name, { value }] of example) if (SECRET.test(name)) expect(value, name).toBe('');
    for (const name of ['POSTGRES_PASSWORD', 'SECRET_KEY', 'SEARXNG_SECRET', 'METRICS_TOKEN']) {
      expect(example.get(name)?.comment).toContain('openssl rand -hex 32');
    }
    // What compose fixes is documented as such (commented out), not offered as a setting that does nothing.
    for (const name of [...SET_BY_IMAGE, 'DATABASE_URL', 'PUBLIC_URL', 'RUN_WORKERS']) {
      expect(example.get(name)?.active, name).toBe(false);
    }
  });

  it('runs what the server build produces, in the app, the worker and the image', () => {
    const built = Object.keys(ENTRY_POINTS).map((name) => `apps/server/dist/${name}.js`);
    const cmd = JSON.parse(dockerfile().one('CMD')) as string[];
    expect(cmd).toEqual(['node', 'apps/server/dist/server.js']);
    expect(services.app?.command).toEqual(cmd);
    expect(services.worker?.command).toEqual(['node', 'apps/server/dist/worker.js']);
    for (const command of [cmd, services.worker?.command ?? []]) expect(built).toContain(command[1]);
  });

  it('checks health on /readyz, a route the server has, and waits for PostgreSQL', () => {
    const healthcheck = dockerfile().one('HEALTHCHECK');
    expect(healthcheck).toContain("'/readyz'");
    expect(healthcheck).toContain('process.env.PORT');
    expect(read('apps/server/src/modules/health/health.routes.ts')).toContain("app.get('/readyz'");
    expect(services.worker?.healthcheck?.disable).toBe(true);

    const db = services.db as Service;
    expect(db.image).toBe('postgres:17');
    expect(db.volumes).toEqual(['db-data:/var/lib/postgresql/data']);
    expect(db.healthcheck?.test?.join(' ')).toContain('pg_isready -U daybook -d daybook');
    expect(db.environment).toMatchObject({ POSTGRES_USER: 'daybook', POSTGRES_DB: 'daybook' });
    for (const name of ['app', 'worker']) expect(services[name]?.depends_on?.db?.condition).toBe('service_healthy');
    expect(services.proxy?.depends_on?.app?.condition).toBe('service_healthy');
  });

  it('publishes only Caddy, which proxies to the app on its port; optional services are profiles', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length);
    expect(published.map(([name]) => name).sort()).toEqual(['mailpit', 'proxy']);
    expect(services.proxy?.ports).toEqual(['80:80', '443:443', '443:443/udp']);
    // Mailpit's inbox holds every account link: this machine only.
    for (const port of services.mailpit?.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);

    const caddyfile = read('deploy/Caddyfile');
    const port = dockerfile().env.PORT;
    expect(caddyfile).toMatch(new RegExp(`^\\s*dynamic a app ${port}\\b`, 'm'));
    expect(caddyfile).toMatch(/^\{\$DAYBOOK_DOMAIN:localhost\} \{/m);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's interpolation, not JavaScript's
    expect(services.proxy?.environment?.DAYBOOK_DOMAIN).toBe('${DAYBOOK_DOMAIN:-localhost}');

    for (const [name, service] of Object.entries(services)) {
      expect(service.profiles ?? [], name).toEqual(['searxng', 'ollama', 'mailpit'].includes(name) ? [name] : []);
      for (const volume of service.volumes ?? []) {
        if (volume.startsWith('./'))
          expect(existsSync(path.join(ROOT, volume.split(':')[0] as string)), volume).toBe(true);
      }
    }
  });

  it("enables SearXNG's JSON format, which Daybook's search client reads", () => {
    const mount = services.searxng?.volumes?.find((v) => v.endsWith(':/etc/searxng/settings.yml:ro')) ?? '';
    const settingsFile = parse(read(mount.split(':')[0] as string)) as { search: { formats: string[] } };
    expect(settingsFile.search.formats).toContain('json');
    expect(read('apps/server/src/modules/research/search.ts')).toContain("searchParams.set('format', 'json')");
  });
});

describe('Dockerfile', () => {
  it('runs Node 24 LTS as the unprivileged node user, with production dependencies only', () => {
    const { instructions, runtime, one } = dockerfile();
    expect(read('Dockerfile')).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's ARG, not JavaScript's
    const base = '${NODE_IMAGE}';
    expect(instructions.filter((i) => i.op === 'FROM').map((i) => i.args)).toEqual([
      `${base} AS deps`,
      'deps AS build',
      `${base} AS prod-deps`,
      `${base} AS runtime`,
    ]);
    expect(instructions.find((i) => i.stage === 'prod-deps' && i.op === 'RUN')?.args).toMatch(
      /^npm ci --omit=dev .*--ignore-scripts/,
    );
    expect(runtime.find((i) => i.args.includes('node_modules'))?.args).toBe(
      '--from=prod-deps /app/node_modules ./node_modules',
    );
    expect(one('USER')).toBe('node');
    expect(one('STOPSIGNAL')).toBe('SIGTERM');
    // No TypeScript at run time.
    expect(runtime.filter((i) => /tsx|\.ts\b/.test(i.args))).toEqual([]);
  });

  it('builds without a compiler: prebuilt binaries come as optional dependencies, which the image keeps', () => {
    const installs = dockerfile().instructions.filter((i) => i.stage === 'prod-deps' && i.op === 'RUN');
    expect(installs.map((i) => i.args)).toEqual([
      'npm ci --omit=dev --legacy-peer-deps --ignore-scripts --no-audit --no-fund',
    ]);
    expect(read('Dockerfile')).not.toMatch(/apt-get|node-gyp|g\+\+|python/);
  });

  it('declares every peer that a production package needs (the image installs without following peers)', () => {
    type Entry = {
      dev?: boolean;
      devOptional?: boolean;
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, Entry> };
    const production = Object.entries(lock.packages).filter(([, p]) => !p.dev && !p.devOptional);
    const installed = new Set(
      production.flatMap(([, p]) => [
        ...Object.keys(p.dependencies ?? {}),
        ...Object.keys(p.optionalDependencies ?? {}),
      ]),
    );
    const missing = production.flatMap(([where, p]) =>
      Object.keys(p.peerDependencies ?? {})
        // Type packages are not needed at run time.
        .filter((peer) => !p.peerDependenciesMeta?.[peer]?.optional && !peer.startsWith('@types/'))
        .filter((peer) => !installed.has(peer))
        .map((peer) => `${where} needs ${peer}`),
    );
    expect(missing).toEqual([]);
  });
});

// ---- The image's files, run natively ---------------------------------------------------------------

function run(file: string, cwd: string, env: Record<string, string>, node: string) {
  const child = spawn(node, [file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Sends SIGTERM and resolves with the exit code and how long the process took to exit. */
async function terminate(proc: ReturnType<typeof run>) {
  const started = Date.now();
  proc.child.kill('SIGTERM');
  const code = await Promise.race([proc.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
  return { code, ms: Date.now() - started };
}

/** One message's answer from a worker thread, after its ready message. */
function askWorkerThread(file: string, message: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(pathToFileURL(file));
    const timer = setTimeout(() => reject(new Error(`${file} did not answer`)), 20_000);
    worker.on('error', reject);
    worker.on('message', (m: Record<string, unknown>) => {
      if (m.ready) return worker.postMessage(message);
      clearTimeout(timer);
      void worker.terminate();
      resolve(m);
    });
  });
}

describe('the image, run natively', () => {
  let image: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    image = await mkdtemp(path.join(tmpdir(), 'daybook-image-'));
    // Built straight into the copy (npm run build:server builds the same into apps/server/dist),
    // leaving the repository's build alone for other processes that run it.
    await buildServer(path.join(image, 'apps/server/dist'));
    if (!existsSync(path.join(ROOT, 'apps/web/dist/index.html'))) {
      execFileSync(path.join(ROOT, 'node_modules/.bin/vite'), ['build', 'apps/web', '--logLevel', 'warn'], {
        cwd: ROOT,
        stdio: 'inherit',
      });
    }
    // The runtime stage's files, copied as its COPY instructions say (its /app is this folder).
    for (const { args } of dockerfile().runtime.filter((i) => i.op === 'COPY')) {
      const from = /^--from=(\S+)\s+/.exec(args)?.[1];
      const [source = '', target = ''] = args.replace(/^--from=\S+\s+/, '').split(/\s+/);
      const relative = from ? path.relative('/app', source) : source;
      if (from === 'build' && relative === 'apps/server/dist') {
        expect(target).toBe('apps/server/dist');
        continue;
      }
      const dest = target.endsWith('/') ? path.join(image, target, path.basename(relative)) : path.join(image, target);
      await mkdir(path.dirname(dest), { recursive: true });
      // Production dependencies are the repository's own here (a superset): linked, not copied.
      if (from === 'prod-deps') await symlink(path.join(ROOT, relative), dest);
      else await cp(path.join(ROOT, relative), dest, { recursive: true });
    }
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    if (image) await rm(image, { recursive: true, force: true });
  });

  /** The environment of a compose service's container: Dockerfile ENV, then compose's. */
  async function serviceEnv(name: string, databaseUrl: string) {
    const dataDir = path.join(image, `data-${name}`);
    await mkdir(dataDir, { recursive: true });
    return {
      PATH: process.env.PATH ?? '',
      ...dockerfile().env,
      ...containerEnv(services[name] as Service, filledEnv()),
      // What differs outside Docker: the database's address, a free port on loopback, a data folder.
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
    };
  }

  // The image runs Node 24: the compiled server and worker run on it and on this machine's node.
  describe.each(deployRuntimes('the image'))('on $name', ({ node }) => {
    it("serves the app with compose's settings: ready on /readyz, the web app on /, exits 0 on SIGTERM", async (ctx) => {
      const db = await createDatabaseUrl();
      if (!db) return ctx.skip();
      try {
        const env = await serviceEnv('app', db.url);
        const server = run('apps/server/dist/server.js', image, env, node);
        children.push(server.child);
        const base = `http://127.0.0.1:${env.PORT}`;
        // Refused until the server listens: not there yet.
        await waitFor(
          () => `/readyz\n${server.output()}`,
          async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200,
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        expect(await (await fetch(`${base}/readyz`)).json()).toMatchObject({ status: 'ready', database: 'ok' });

        const page = await fetch(`${base}/chat`);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('<div id="root">');
        // PUBLIC_URL comes from DAYBOOK_DOMAIN; the start line says what the process runs on.
        expect(server.output()).toContain(
          '"msg":"Daybook is ready at https://daybook.example.test (database: PostgreSQL; realtime bus: postgres; background jobs: left to worker processes)"',
        );

        const { code, ms } = await terminate(server);
        expect(code).toBe(0);
        expect(ms).toBeLessThan(5000);
        expect(server.output()).not.toMatch(/"level":"(error|fatal)"/);
      } finally {
        await db.drop();
      }
    });

    it("runs the worker with compose's settings and stops it with SIGTERM", async (ctx) => {
      const db = await createDatabaseUrl();
      if (!db) return ctx.skip();
      try {
        const env = await serviceEnv('worker', db.url);
        const worker = run('apps/server/dist/worker.js', image, env, node);
        children.push(worker.child);
        await waitFor(
          () => `the worker\n${worker.output()}`,
          () => worker.output().includes('Daybook worker is running'),
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        const { code, ms } = await terminate(worker);
        expect(code).toBe(0);
        expect(ms).toBeLessThan(5000);
        expect(worker.output()).not.toMatch(/"level":"(error|fatal)"/);
      } finally {
        await db.drop();
      }
    });
  });

  it('finds every file and folder the compiled code looks for beside itself', async () => {
    // scripts/lib/server-build.ts turns each module's import.meta into its place under dist.
    const dist = path.join(image, 'apps/server/dist');
    const found: string[] = [];
    for (const file of (await readdir(dist, { recursive: true })).filter((f) => f.endsWith('.js'))) {
      const url = pathToFileURL(path.join(dist, file));
      const code = await readFile(path.join(dist, file), 'utf8');
      for (const [, rel, virtual] of code.matchAll(
        /new URL\("([^"]+)", new URL\("([^"]+)", import\.meta\.url\)\.href\)/g,
      ))
        found.push(fileURLToPath(new URL(rel as string, new URL(virtual as string, url))));
      for (const [, dir] of code.matchAll(/__daybookFileURLToPath\d*\(new URL\("([^"]+)", import\.meta\.url\)\)/g))
        found.push(fileURLToPath(new URL(dir as string, url)));
    }
    const relative = found.map((f) => path.relative(image, f));
    expect(relative).toEqual(
      expect.arrayContaining([
        'apps/server/dist/modules/calendar/ics.worker.mjs',
        'apps/server/dist/modules/research/extract.worker.mjs',
        'apps/server/dist/modules/accounts/common-passwords.txt',
        'apps/server/dist/modules/connections',
      ]),
    );
    expect(relative.filter((f) => !existsSync(path.join(image, f)))).toEqual([]);
    expect(existsSync(path.join(dist, 'modules/calendar/ics.js'))).toBe(true);
  });

  it('starts the calendar and page-reading worker threads from the compiled files', async () => {
    const dist = path.join(image, 'apps/server/dist');
    const calendar = await askWorkerThread(path.join(dist, 'modules/calendar/ics.worker.mjs'), {
      id: 1,
      key: 'k',
      text: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nX-WR-CALNAME:Work\r\nEND:VCALENDAR\r\n',
    });
    expect(calendar).toMatchObject({ id: 1, ok: true, name: 'Work', events: [] });

    const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const page = await askWorkerThread(path.join(dist, 'modules/research/extract.worker.mjs'), {
      id: 2,
      html: `<html><head><title>Bikes</title></head><body><article><h1>Bikes</h1><p>${words}</p></article></body></html>`,
      url: 'https://example.test/bikes',
      maxChars: 10_000,
    });
    expect(page).toMatchObject({ id: 2, ok: true, title: 'Bikes' });
    expect(page.markdown).toContain('word79');
  });
});
