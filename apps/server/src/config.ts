// The one place that reads the environment. Everything else receives a typed Config.
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { allowEntryProblem } from './lib/safe-fetch.ts';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');
/** Where development and tests keep an empty embedded database to start new ones from (db/pglite-seed.ts). */
export const PGLITE_SEED_DIR = path.join(REPO_ROOT, 'node_modules/.cache/daybook');

// Top-level paths the web app owns; the creator's about page at /{slug} must not shadow them.
const RESERVED_SLUGS = new Set([
  'api',
  'auth',
  'chat',
  'guest-tour',
  'demo-tour',
  'onboarding',
  'memories',
  'resources',
  'accounts',
  'profile',
  'login',
  'assets',
  'ws',
  'admin',
  'metrics',
  '_allauth',
  'healthz',
  'readyz',
  'favicon.ico',
  'robots.txt',
]);

const PORT_MESSAGE = 'must be a port number from 1 to 65535';
const port = z.coerce.number({ error: PORT_MESSAGE }).int(PORT_MESSAGE).min(1, PORT_MESSAGE).max(65535, PORT_MESSAGE);
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
/** A link template for mails: an http(s) URL where `{key}` stands for the emailed key. */
const keyUrl = url.refine((v) => v.includes('{key}'), 'must contain {key} where the key goes');

/** true/false, yes/no, on/off, 1/0. */
const flag = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'], { error: 'must be true or false' }))
  .transform((v) => ['true', 'yes', 'on', '1'].includes(v));

const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export const SEARCH_PROVIDERS = ['searxng', 'brave', 'tavily'] as const;
export type SearchProviderName = (typeof SEARCH_PROVIDERS)[number];

/** "GitHub=https://github.com/me,Mastodon=https://..." -> [{ label, url }] */
const profileLinks = z.string().transform((value, ctx) => {
  const links = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const eq = part.indexOf('=');
      return { label: part.slice(0, eq).trim(), url: part.slice(eq + 1).trim() };
    });
  for (const link of links) {
    if (!link.label || !url.safeParse(link.url).success) {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated Label=https://url pairs' });
      return z.NEVER;
    }
  }
  return links;
});

export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  // 'localhost' listens on both 127.0.0.1 and ::1, so browsers reach it whichever they try first.
  HOST: z.string().min(1).default('localhost'),
  PORT: port.default(3000),
  PUBLIC_URL: url.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  WEB_DIST_DIR: z.string().min(1).default(path.join(REPO_ROOT, 'apps/web/dist')),
  MIGRATIONS_DIR: z.string().min(1).default(path.join(REPO_ROOT, 'prisma/migrations')),
  TRUST_PROXY: z
    .string()
    .transform(parseTrustProxy)
    .refine((v) => v !== null, {
      message:
        'must be false, a number of proxy hops (1 for one reverse proxy), or a comma-separated list of proxy addresses or CIDR ranges (loopback, linklocal and uniquelocal name the private ranges)',
    })
    .default(false),
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Daybook <daybook@localhost>'),
  FRONTEND_URL_VERIFY_EMAIL: keyUrl.optional(),
  FRONTEND_URL_RESET_PASSWORD: keyUrl.optional(),
  FRONTEND_URL_SIGNUP: url.optional(),
  LLM_BASE_URL: url.optional(),
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_MODEL: z.string().min(1).optional(),
  // A model per purpose, on the same endpoint; each unset one is LLM_MODEL.
  LLM_LEARNING_MODEL: z.string().min(1).optional(),
  LLM_RESEARCH_MODEL: z.string().min(1).optional(),
  LLM_DAILY_MODEL: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(1000)
    .max(600_000)
    .default(60_000),
  LLM_MAX_RETRIES: z.coerce.number({ error: 'must be a whole number' }).int().min(0).max(10).default(2),
  // Model calls at once for the whole installation (model/model.gate.ts); a local server's parallel slots.
  LLM_CONCURRENCY: z.coerce.number({ error: 'must be a whole number' }).int().min(1).max(1000).default(16),
  // Tokens (prompt and completion) one user may spend a day; unset: no limit (model/model.usage.ts).
  LLM_USER_DAILY_TOKENS: z.coerce.number({ error: 'must be a whole number' }).int().min(1000).optional(),
  // Background jobs (research now, daily messages later). Off: this process serves web requests
  // only and another one (npm run worker) runs the jobs.
  RUN_WORKERS: flag.default(true),
  // How chat events reach every tab of a user when several processes share a database
  // (docs/architecture.md: "The realtime bus"). Unset: redis with REDIS_URL, else postgres on PostgreSQL, else memory.
  REALTIME_BUS: z.enum(['memory', 'postgres', 'redis']).optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  // Prometheus metrics at /metrics (docs/operations.md: "Metrics"): off unless enabled, and then only for
  // requests that bear the token (Authorization: Bearer <token>).
  METRICS_ENABLED: flag.default(false),
  METRICS_TOKEN: z
    .string()
    .trim()
    .min(16, 'must be at least 16 characters (e.g. from `openssl rand -hex 32`)')
    .regex(/^[A-Za-z0-9._~+/-]+=*$/, 'must be letters, digits and - . _ ~ + / only (e.g. from `openssl rand -hex 32`)')
    .optional(),
  // The worker process serves nothing else, so its metrics get a port of their own.
  WORKER_METRICS_PORT: port.default(9464),
  // Calendar providers, each enabled by its OAuth client (docs/calendars.md).
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  MICROSOFT_CLIENT_ID: z.string().min(1).optional(),
  MICROSOFT_CLIENT_SECRET: z.string().min(1).optional(),
  // Entra ID tenant: common (work, school and personal accounts), organizations, consumers, or a tenant id.
  MICROSOFT_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9.-]{1,100}$/, 'must be common, organizations, consumers or a tenant id')
    .default('common'),
  SEARXNG_URL: url.optional(),
  BRAVE_API_KEY: z.string().min(1).optional(),
  BRAVE_API_URL: url.default('https://api.search.brave.com/res/v1/web/search'),
  TAVILY_API_KEY: z.string().min(1).optional(),
  TAVILY_API_URL: url.default('https://api.tavily.com/search'),
  SEARCH_PROVIDERS: list
    .pipe(z.array(z.enum(SEARCH_PROVIDERS, { error: `each must be one of ${SEARCH_PROVIDERS.join(', ')}` })).min(1))
    .default([...SEARCH_PROVIDERS]),
  // Hosts and CIDR ranges on the machine's own network that research and calendars may still fetch
  // from (a SearXNG or a Nextcloud at home). Everything private is refused otherwise. A name matches
  // URLs with that host name; an address or range matches URLs whose host is a literal address.
  FETCH_ALLOW: list
    .superRefine((entries, ctx) => {
      for (const entry of entries) {
        const problem = allowEntryProblem(entry);
        if (problem)
          ctx.addIssue({ code: 'custom', message: `${problem}; list host names, IP addresses or CIDR ranges` });
      }
    })
    .default([]),
  FETCH_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(100)
    .max(120_000)
    .default(10_000),
  FETCH_MAX_BYTES: z.coerce
    .number({ error: 'must be a number of bytes' })
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(5 * 1024 * 1024),
  RESEARCH_DAILY_LIMIT: z.coerce.number({ error: 'must be a whole number' }).int().min(0).max(10_000).default(20),
  EMBEDDING_MODEL: z.string().min(1).optional(),
  // Daily messages: the weather provider (open-meteo needs no key; none leaves the weather out),
  // its endpoints (tests and mirrors), and how many messages one worker writes at once.
  WEATHER_PROVIDER: z.enum(['open-meteo', 'none'], { error: 'must be open-meteo or none' }).default('open-meteo'),
  OPEN_METEO_FORECAST_URL: url.default('https://api.open-meteo.com/v1/forecast'),
  OPEN_METEO_GEOCODING_URL: url.default('https://geocoding-api.open-meteo.com/v1/search'),
  WEATHER_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(100)
    .max(60_000)
    .default(8000),
  DAILY_CONCURRENCY: z.coerce.number({ error: 'must be a whole number' }).int().min(1).max(200).default(8),
  CHAT_MAX_CONNECTIONS: z.coerce.number({ error: 'must be a whole number' }).int().min(1).max(1_000_000).default(5000),
  CHAT_PING_INTERVAL_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(50)
    .max(600_000)
    .default(30_000),
  // On PostgreSQL, how long a process may reuse a signed-in session for read requests; every change
  // reaches every process at once (docs/architecture.md: "Several instances"). 0 reads the database on every request.
  SESSION_CACHE_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).min(0).max(300).default(10),
  CSRF_TRUSTED_ORIGINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(url))
    .default([]),
  CREATOR_NAME: z.string().trim().min(1).max(80).default('Daybook Maintainers'),
  CREATOR_SLUG: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be lowercase letters, digits and dashes')
    .refine((s) => !RESERVED_SLUGS.has(s), 'is a reserved path of the app')
    .optional(),
  CREATOR_BIO: z
    .string()
    .trim()
    .max(2000)
    .default('We build Daybook, a personal assistant you host yourself, so what it learns about you stays yours.'),
  CREATOR_EMAIL: z.email({ error: 'must be an email address' }).optional(),
  // None until set: placeholder profiles would send visitors to pages that are not the creator's.
  CREATOR_LINKS: profileLinks.default([]),
});

export type Env = z.input<typeof EnvSchema>;

export interface ProfileLink {
  label: string;
  url: string;
}

const PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY: false, a hop count, or proxy addresses/CIDRs; null when it is none of these. */
export function parseTrustProxy(value: string): false | number | string[] | null {
  const v = value.trim().toLowerCase();
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  // "true" once meant "trust every hop", which let clients choose their own address; it now means
  // the usual setup of one reverse proxy in front of the app.
  if (['true', 'yes', 'on'].includes(v)) return 1;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return hops >= 1 && hops <= 20 ? hops : null;
  }
  const entries = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const valid = (entry: string) => {
    if (PROXY_PRESETS.has(entry)) return true;
    const [address = '', bits, ...rest] = entry.split('/');
    const family = isIP(address);
    if (!family || rest.length) return false;
    if (bits === undefined) return true;
    return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
  };
  return entries.length && entries.every(valid) ? entries : null;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  publicUrl: string;
  logLevel: string;
  logFormat: 'json' | 'pretty';
  /**
   * Which proxies' X-Forwarded-For entries to believe: none, the last N hops, or those sent by the
   * listed addresses. Never "all": the left-most entry is whatever the client wrote.
   */
  trustProxy: false | number | string[];
  /** Signs verification and reset keys. Unset: generated once and kept in DATA_DIR. */
  secretKey?: string;
  mail: { smtpUrl?: string; from: string };
  /** Pages the mailed links open, `{key}` replaced by the key (allauth's HEADLESS_FRONTEND_URLS). */
  frontendUrls: { verifyEmail: string; resetPassword: string; signup: string };
  /** Any OpenAI-compatible endpoint; `model` unset means no assistant is configured. */
  llm: {
    baseUrl?: string;
    apiKey?: string;
    model?: string;
    /** A model per purpose on the same endpoint; unset ones are `model`. */
    purposes?: { learning?: string; research?: string; daily?: string };
    timeoutMs: number;
    maxRetries: number;
    /** Model calls at once for the whole installation (LLM_CONCURRENCY); 16 when absent. */
    concurrency?: number;
    /** Tokens a user may spend a day (LLM_USER_DAILY_TOKENS); null or absent: no limit. */
    userDailyTokens?: number | null;
  };
  /**
   * Chat sockets: how many the server accepts in all (beyond it new ones close with 1013), and how
   * often each is pinged (one that missed the previous ping is dropped; its session is re-checked).
   */
  chat: { maxConnections: number; pingIntervalMs: number };
  csrfTrustedOrigins: string[];
  /** Reuse of signed-in sessions for reads, on PostgreSQL (0: none). */
  sessionCacheMs: number;
  /** Whether this process runs the job workers (npm start: yes; a web-only process: no). */
  jobs: { runWorkers: boolean };
  /** The realtime bus: in this process only, PostgreSQL LISTEN/NOTIFY, or Redis pub/sub. */
  realtime: { bus: 'memory' | 'postgres' | 'redis'; redisUrl?: string };
  /**
   * Prometheus metrics at /metrics for requests bearing this token; null: off (404). A worker
   * process serves its own on `workerPort`.
   */
  metrics: { token: string; workerPort: number } | null;
  /** Calendar OAuth clients; a provider is enabled when both its id and secret are set. */
  calendar: {
    google?: { clientId: string; clientSecret: string };
    microsoft?: { clientId: string; clientSecret: string; tenant: string };
  };
  /** Search providers: those configured, tried in `order` until one answers. */
  search: {
    searxngUrl?: string;
    braveApiKey?: string;
    braveUrl: string;
    tavilyApiKey?: string;
    tavilyUrl: string;
    order: SearchProviderName[];
  };
  /** The SSRF-safe fetcher of URLs chosen by users, models and search results. */
  fetch: { allow: string[]; timeoutMs: number; maxBytes: number; userAgent: string };
  /** Researches per user per day (0: research is off); embeddings rank page chunks when set. */
  research: { dailyLimit: number; embeddingModel?: string };
  /** Weather for daily messages (Open-Meteo by default, no key). */
  weather: { provider: 'open-meteo' | 'none'; forecastUrl: string; geocodingUrl: string; timeoutMs: number };
  /** Daily messages one worker process writes at once. */
  daily: { concurrency: number };
  db: { url?: string; dataDir: string; migrationsDir: string; seedDir: string | null };
  web: { distDir: string; serve: boolean };
  creator: { name: string; slug: string; bio: string; email?: string; links: ProfileLink[] };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return slug && !RESERVED_SLUGS.has(slug) ? slug : 'about';
}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset", as they do in docker-compose files and .env templates.
  const env = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        const got = env[name] === undefined ? '' : ` (got ${JSON.stringify(env[name])})`;
        return `${name}: ${issue.message}${got}`;
      }),
    );
  }
  const e = parsed.data;
  // Half a client would leave a provider silently off.
  const halves = [
    ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'],
    ['MICROSOFT_CLIENT_ID', 'MICROSOFT_CLIENT_SECRET'],
  ] as const;
  const missing = halves.flatMap(([id, secret]) =>
    Boolean(e[id]) === Boolean(e[secret])
      ? []
      : [`${e[id] ? secret : id}: must be set together with ${e[id] ? id : secret}`],
  );
  if (e.REALTIME_BUS === 'postgres' && !e.DATABASE_URL)
    missing.push("REALTIME_BUS: postgres needs DATABASE_URL (the embedded database is one process's: use memory)");
  if (e.REALTIME_BUS === 'redis' && !e.REDIS_URL) missing.push('REALTIME_BUS: redis needs REDIS_URL');
  if (e.METRICS_ENABLED && !e.METRICS_TOKEN)
    missing.push('METRICS_TOKEN: must be set when METRICS_ENABLED is on (Prometheus sends it as a bearer token)');
  if (missing.length) throw new ConfigError(missing);
  const bus = e.REALTIME_BUS ?? (e.REDIS_URL ? 'redis' : e.DATABASE_URL ? 'postgres' : 'memory');
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    publicUrl,
    logLevel: e.LOG_LEVEL,
    // Readable lines for a person at a terminal; JSON for log collectors.
    logFormat: e.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
    trustProxy: e.TRUST_PROXY ?? false,
    secretKey: e.SECRET_KEY,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    frontendUrls: {
      verifyEmail: e.FRONTEND_URL_VERIFY_EMAIL ?? `${publicUrl}/auth/verify-email/{key}`,
      resetPassword: e.FRONTEND_URL_RESET_PASSWORD ?? `${publicUrl}/auth/reset-password/{key}`,
      signup: e.FRONTEND_URL_SIGNUP ?? `${publicUrl}/auth/signup`,
    },
    llm: {
      baseUrl: e.LLM_BASE_URL,
      apiKey: e.LLM_API_KEY,
      model: e.LLM_MODEL,
      purposes: { learning: e.LLM_LEARNING_MODEL, research: e.LLM_RESEARCH_MODEL, daily: e.LLM_DAILY_MODEL },
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
      concurrency: e.LLM_CONCURRENCY,
      userDailyTokens: e.LLM_USER_DAILY_TOKENS ?? null,
    },
    chat: { maxConnections: e.CHAT_MAX_CONNECTIONS, pingIntervalMs: e.CHAT_PING_INTERVAL_MS },
    csrfTrustedOrigins: e.CSRF_TRUSTED_ORIGINS.map((o) => new URL(o).origin),
    sessionCacheMs: e.SESSION_CACHE_SECONDS * 1000,
    jobs: { runWorkers: e.RUN_WORKERS },
    realtime: { bus, redisUrl: e.REDIS_URL },
    metrics:
      e.METRICS_ENABLED && e.METRICS_TOKEN ? { token: e.METRICS_TOKEN, workerPort: e.WORKER_METRICS_PORT } : null,
    calendar: {
      google:
        e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET
          ? { clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET }
          : undefined,
      microsoft:
        e.MICROSOFT_CLIENT_ID && e.MICROSOFT_CLIENT_SECRET
          ? { clientId: e.MICROSOFT_CLIENT_ID, clientSecret: e.MICROSOFT_CLIENT_SECRET, tenant: e.MICROSOFT_TENANT }
          : undefined,
    },
    search: {
      searxngUrl: e.SEARXNG_URL,
      braveApiKey: e.BRAVE_API_KEY,
      braveUrl: e.BRAVE_API_URL,
      tavilyApiKey: e.TAVILY_API_KEY,
      tavilyUrl: e.TAVILY_API_URL,
      order: [...new Set(e.SEARCH_PROVIDERS)],
    },
    fetch: {
      allow: e.FETCH_ALLOW,
      timeoutMs: e.FETCH_TIMEOUT_MS,
      maxBytes: e.FETCH_MAX_BYTES,
      userAgent: `Daybook/0.1 (self-hosted personal assistant; +${publicUrl})`,
    },
    research: { dailyLimit: e.RESEARCH_DAILY_LIMIT, embeddingModel: e.EMBEDDING_MODEL },
    weather: {
      provider: e.WEATHER_PROVIDER,
      forecastUrl: e.OPEN_METEO_FORECAST_URL,
      geocodingUrl: e.OPEN_METEO_GEOCODING_URL,
      timeoutMs: e.WEATHER_TIMEOUT_MS,
    },
    daily: { concurrency: e.DAILY_CONCURRENCY },
    db: {
      url: e.DATABASE_URL,
      dataDir: path.resolve(e.DATA_DIR),
      migrationsDir: path.resolve(e.MIGRATIONS_DIR),
      // A production server makes its one cluster once; elsewhere new ones start from a kept copy.
      seedDir: e.NODE_ENV === 'production' ? null : PGLITE_SEED_DIR,
    },
    web: { distDir: path.resolve(e.WEB_DIST_DIR), serve: e.NODE_ENV === 'production' },
    creator: {
      name: e.CREATOR_NAME,
      slug: e.CREATOR_SLUG ?? slugify(e.CREATOR_NAME),
      bio: e.CREATOR_BIO,
      email: e.CREATOR_EMAIL,
      links: e.CREATOR_LINKS,
    },
  };
}
