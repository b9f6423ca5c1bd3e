// Builds the real app against a test database of its own and a real SMTP server, for app.inject
// and real HTTP tests.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { checkAllauthResponses, type RecordedResponse } from '../../../../tests/helpers/allauth-openapi.ts';
import { startSmtp, type TestSmtp } from '../../../../tests/helpers/smtp.ts';
import { createTestDatabase, type TestDatabase } from '../../../../tests/helpers/test-db.ts';
import { waitFor } from '../../../../tests/helpers/wait-for.ts';
import { type AppDeps, buildApp } from '../app.ts';
import { type Config, loadConfig } from '../config.ts';

export { waitFor };

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  database: TestDatabase;
  smtp: TestSmtp;
  /**
   * Waits until every account mail the app has sent so far was taken by the mail server or refused
   * (it goes out in the background, after the answer): a test that checks that no mail went out
   * waits for this, after a mail that was sent later has arrived.
   */
  mailSettled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const TEST_SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

/** What tests may set of the app's dependencies. */
export type TestAppDeps = Pick<AppDeps, 'clock' | 'jobs' | 'research' | 'calendar' | 'weather' | 'dailySchedule'>;

export async function createTestApp(
  env: Record<string, string> = {},
  deps: TestAppDeps = {},
  /** Another app's database: two instances on one database (closing this app leaves it). */
  options: { database?: TestDatabase } = {},
): Promise<TestApp> {
  const smtp = await startSmtp();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SECRET_KEY: TEST_SECRET,
    SMTP_URL: smtp.url,
    PUBLIC_URL: 'http://daybook.test',
    // Nothing reaches the internet: tests that want weather point it at the fake Open-Meteo.
    WEATHER_PROVIDER: 'none',
    // Many tests change rows straight in the database and read at once; the cache's own tests turn it on.
    SESSION_CACHE_SECONDS: '0',
    ...env,
  });
  const database = options.database ?? (await createTestDatabase());
  // Jobs are polled often, so a test waits for a job no longer than it must.
  // The daily schedule's tick would deliver to test users at 07:00 UTC: tests that want it call
  // app.daily.tick() with their own clock, or turn it on.
  const app = await buildApp(config, {
    jobs: { pollingIntervalSeconds: 0.5 },
    dailySchedule: false,
    ...deps,
    // Extraction runs at the lowest priority (chat first); beside the rest of the suite on two cores
    // a small page has taken over the 5 s meant for real ones, and a research then cited 2 of 3.
    research: { extractTimeoutMs: 60_000, ...deps.research },
    db: database.db,
  });
  // Every account API response any test produces is checked against allauth's OpenAPI document.
  const allauthResponses: RecordedResponse[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/_allauth/')) {
      allauthResponses.push({
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        body: String(payload ?? ''),
      });
    }
    return payload;
  });
  await app.ready();
  return {
    app,
    config,
    database,
    smtp,
    async mailSettled(timeoutMs = 10_000) {
      const left = await app.mail.drain(timeoutMs);
      if (left) throw new Error(`${left} mail(s) still being sent after ${timeoutMs} ms`);
    },
    async close() {
      await app.close();
      if (!options.database) await database.dispose();
      await smtp.close();
      const problems = checkAllauthResponses(allauthResponses);
      if (problems.length)
        throw new Error(`Account API responses that do not match allauth's OpenAPI document:\n${problems.join('\n')}`);
    },
  };
}

/**
 * A browser-like client for app.inject: keeps cookies, sends the CSRF header from the csrftoken
 * cookie on unsafe methods, and an Origin of the configured public URL.
 */
export class Browser {
  cookies = new Map<string, string>();
  constructor(
    private readonly app: FastifyInstance,
    private readonly opts: { ip?: string; origin?: string } = {},
  ) {}

  async request(
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    if (!this.cookies.has('csrftoken') && method !== 'GET') await this.request('GET', '/_allauth/browser/v1/config');
    const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(String(method));
    const res = await this.app.inject({
      method,
      url,
      payload: payload as InjectOptions['payload'],
      remoteAddress: this.opts.ip ?? '127.0.0.1',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(unsafe
          ? { 'x-csrftoken': this.cookies.get('csrftoken') ?? '', origin: this.opts.origin ?? 'http://daybook.test' }
          : {}),
        ...headers,
      },
    });
    for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
      const expired = c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now()) || c.value === '';
      if (expired) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  get = (url: string, headers?: Record<string, string>) => this.request('GET', url, undefined, headers);
  post = (url: string, payload?: unknown, headers?: Record<string, string>) =>
    this.request('POST', url, payload ?? {}, headers);
  put = (url: string, payload?: unknown) => this.request('PUT', url, payload ?? {});
  patch = (url: string, payload?: unknown) => this.request('PATCH', url, payload ?? {});
  delete = (url: string, payload?: unknown) => this.request('DELETE', url, payload);
}

/** Two app instances on one fresh PostgreSQL database, as replicas run behind a load balancer. */
export interface TwoInstances {
  a: TestApp;
  b: TestApp;
  database: TestDatabase;
  /** Closes both instances, then drops the database. */
  close(): Promise<void>;
}

/** For a `beforeAll`: two instances with the same settings and dependencies on a database of their own. */
export async function twoInstances(env: Record<string, string> = {}, deps: TestAppDeps = {}): Promise<TwoInstances> {
  const database = await createTestDatabase();
  if (!database.url) throw new Error('two instances need PostgreSQL');
  const a = await createTestApp({ ...env, DATABASE_URL: database.url }, deps, { database });
  const b = await createTestApp({ ...env, DATABASE_URL: database.url }, deps, { database });
  return {
    a,
    b,
    database,
    async close() {
      await b.close();
      await a.close();
      await database.dispose();
    },
  };
}

/** The same cookies in a browser of another app instance (sessions live in the shared database). */
export function sameBrowserOn(app: FastifyInstance, browser: Browser) {
  const other = new Browser(app);
  for (const [k, v] of browser.cookies) other.cookies.set(k, v);
  return other;
}

/**
 * Until `check` holds, for at most `ms`: a database notice crosses to another instance. Resolves
 * true; at the deadline it fails as waitFor does.
 */
export const within = (ms: number, check: () => Promise<boolean>): Promise<true> =>
  waitFor('a notice to cross to the other instance', check, { timeoutMs: ms, intervalMs: 5 });
