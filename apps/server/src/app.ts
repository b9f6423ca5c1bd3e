import path from 'node:path';
import { CLOSE_CODES, DAILY_MESSAGES } from '@daybook/contracts';
import cookie from '@fastify/cookie';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import { createSafeFetch } from './lib/safe-fetch.ts';
import { createSecretBox } from './lib/secret-box.ts';
import { createSigner, loadSecretKey } from './lib/signing.ts';
import accountDataRoutes, { accountDataOptions } from './modules/account-data/account-data.routes.ts';
import { createAccountsRepo } from './modules/accounts/accounts.repo.ts';
import { type AccountsService, createAccountsService } from './modules/accounts/accounts.service.ts';
import allauthRoutes from './modules/accounts/allauth.routes.ts';
import productAuthRoutes from './modules/accounts/product-auth.routes.ts';
import sessionPlugin from './modules/accounts/session.plugin.ts';
import { createSessionCache } from './modules/accounts/session-cache.ts';
import { createSessionsService, type SessionsService } from './modules/accounts/sessions.service.ts';
import { createUsersRepo } from './modules/accounts/users.repo.ts';
import { createUsersService, type UsersService } from './modules/accounts/users.service.ts';
import { createAdminRepo } from './modules/admin/admin.repo.ts';
import adminRoutes from './modules/admin/admin.routes.ts';
import { createAdminService } from './modules/admin/admin.service.ts';
import { createLearningService } from './modules/assistant/learning.service.ts';
import { createCalendarRepo } from './modules/calendar/calendar.repo.ts';
import calendarRoutes from './modules/calendar/calendar.routes.ts';
import { createCalendarService } from './modules/calendar/calendar.service.ts';
import type { CalendarService, OAuthEndpoints, OAuthProviderId } from './modules/calendar/calendar.types.ts';
import { createIcsReader } from './modules/calendar/ics-reader.ts';
import { type ChatHub, createChatHub } from './modules/chat/chat.hub.ts';
import { type ChatPostsService, createChatPostsService } from './modules/chat/chat.posts.service.ts';
import { type ChatRepo, createChatRepo } from './modules/chat/chat.repo.ts';
import chatRoutes, { socketErrorHandler } from './modules/chat/chat.routes.ts';
import { createChatService } from './modules/chat/chat.service.ts';
import { createChatSearchRepo } from './modules/chat-search/chat-search.repo.ts';
import chatSearchRoutes from './modules/chat-search/chat-search.routes.ts';
import { createChatSearchService } from './modules/chat-search/chat-search.service.ts';
import connectionsRoutes from './modules/connections/connections.routes.ts';
import { createDailyRepo } from './modules/daily/daily.repo.ts';
import dailyRoutes from './modules/daily/daily.routes.ts';
import { createDailyService, type DailyService } from './modules/daily/daily.service.ts';
import docsRoutes from './modules/docs/docs.routes.ts';
import healthRoutes from './modules/health/health.routes.ts';
import { createInvitesRepo } from './modules/invites/invites.repo.ts';
import invitesRoutes from './modules/invites/invites.routes.ts';
import { createInvitesService, type InvitesService } from './modules/invites/invites.service.ts';
import { createJobs, type Jobs, type JobsDeps } from './modules/jobs/jobs.service.ts';
import { createMailer, createMailQueue, type Mailer, type MailQueue } from './modules/mail/mail.service.ts';
import { createMemoriesRepo } from './modules/memories/memories.repo.ts';
import memoriesRoutes from './modules/memories/memories.routes.ts';
import { createMemoriesService, type MemoriesService } from './modules/memories/memories.service.ts';
import metricsRoutes from './modules/metrics/metrics.routes.ts';
import { createMetrics, type Metrics } from './modules/metrics/metrics.ts';
import { createLlm } from './modules/model/model.client.ts';
import { createModelGateRepo } from './modules/model/model.gate.repo.ts';
import { createModelGate, gateLlm, type Priority } from './modules/model/model.gate.ts';
import { checkModel } from './modules/model/model.probe.ts';
import type { Llm } from './modules/model/model.types.ts';
import { createModelUsageRepo, type Purpose } from './modules/model/model.usage.repo.ts';
import { createUsageMeter } from './modules/model/model.usage.ts';
import onboardingRoutes from './modules/onboarding/onboarding.routes.ts';
import { createRateLimitRepo } from './modules/rate-limit/rate-limit.repo.ts';
import { createRateLimiter, LIMITS } from './modules/rate-limit/rate-limit.service.ts';
import {
  createMemoryBus,
  createPostgresBus,
  createRedisBus,
  type RealtimeBus,
} from './modules/realtime/realtime.bus.ts';
import { createExtractor } from './modules/research/extract.ts';
import { createResearchRepo } from './modules/research/research.repo.ts';
import researchRoutes from './modules/research/research.routes.ts';
import { createResearchService, type ResearchService } from './modules/research/research.service.ts';
import { createSearch, SEARCH_NOT_CONFIGURED, SEARCH_NOT_CONFIGURED_OPERATOR } from './modules/research/search.ts';
import { createResourcesRepo } from './modules/resources/resources.repo.ts';
import resourcesRoutes from './modules/resources/resources.routes.ts';
import { createResourcesService } from './modules/resources/resources.service.ts';
import siteRoutes from './modules/site/site.routes.ts';
import usersRoutes from './modules/users/users.routes.ts';
import { createOpenMeteo } from './modules/weather/open-meteo.ts';
import type { WeatherProvider } from './modules/weather/weather.types.ts';
import csrfPlugin from './plugins/csrf.ts';
import dbPlugin from './plugins/db.ts';
import errorsPlugin from './plugins/errors.ts';
import inputPlugin from './plugins/input.ts';
import routesPlugin from './plugins/routes.ts';
import securityHeaders from './plugins/security-headers.ts';
import webApp from './plugins/web-app.ts';

declare module 'fastify' {
  interface FastifyInstance {
    accounts: AccountsService;
    calendar: CalendarService;
    invites: InvitesService;
    jobs: Jobs;
    daily: DailyService;
    /** Account mail, sent in the background after the answer. */
    mail: MailQueue;
    /** Null when METRICS_ENABLED is off. */
    metrics: Metrics | null;
    /** What this process runs on, for its start line. */
    setup: { database: string; realtime: string; jobs: string };
  }
}

/** One log line per request, when it completes, instead of Fastify's two. */
class OneLineRequestLog extends LogController {
  override incomingRequest() {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    const line = {
      // The client's address as TRUST_PROXY resolves it, for fail2ban or CrowdSec to act on.
      ip: request.ip,
      method: request.method,
      // Without the query string: it can hold what a user searched for, or a key.
      url: request.url.split('?')[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (error) request.log.error({ ...line, err: error }, 'request failed');
    else request.log.info(line, `${line.ip} ${line.method} ${line.url} ${line.status} ${line.ms}ms`);
  }
}

/** Fastify's form of TRUST_PROXY; a hop count trusts that many proxies, counted from ours. */
function trustProxyOption(trust: Config['trustProxy']) {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

export interface AppDeps {
  /** An already-open database (tests); otherwise one is opened from config and migrated. */
  db?: Database;
  mailer?: Mailer;
  clock?: Clock;
  /** The model; `null` for none. Unset: made from config. */
  llm?: Llm | null;
  /** Job queue timing (tests use short intervals). */
  jobs?: Pick<
    JobsDeps,
    'pollingIntervalSeconds' | 'maintenanceIntervalSeconds' | 'cronIntervalSeconds' | 'stopGraceMs'
  >;
  /** Research timing (tests use short ones). */
  research?: {
    staleSec?: number;
    heartbeatMs?: number;
    retryBaseMs?: number;
    sweepMs?: number;
    /** How long one page may take to extract (its worker runs at the lowest priority: a busy test machine starves it). */
    extractTimeoutMs?: number;
  };
  /** Calendar providers' endpoints (tests: local fakes) and how long events are reused. */
  calendar?: { endpoints?: Partial<Record<OAuthProviderId, OAuthEndpoints>>; cacheMs?: number };
  /** The weather provider; `null` for none. Unset: made from config. */
  weather?: WeatherProvider | null;
  /** Off: no schedule tick (tests call `app.daily.tick()` with their own clock). */
  dailySchedule?: boolean;
}

/** ICS calendars can be much larger than a web page. */
const ICS_MAX_BYTES = 10 * 1024 * 1024;

/** The research job carries only the research's id; the row says what to do. */
const RESEARCH_QUEUE = 'research';
/** How often workers look for interrupted researches and queued ones whose job went missing. */
const RESEARCH_SWEEP_MS = 60_000;
/** The daily message jobs: the schedule's tick, and writing one message (it carries the row's id). */
const DAILY_TICK_QUEUE = 'daily-tick';
const DAILY_QUEUE = 'daily-message';
/** Every minute: a user gets their message within a minute or so of their delivery time. */
const DAILY_TICK_CRON = '* * * * *';

// How long answers being written get to finish at shutdown; with what follows (INTERRUPT_MS, the
// sockets' close, mail, the database) under process.ts's 10 s limit for the whole shutdown.
const SHUTDOWN_DRAIN_MS = 6_000;
/** How long clients get to answer the sockets' close at shutdown before they are dropped. */
const SOCKET_CLOSE_MS = 500;
const MAIL_DRAIN_MS = 1_500;

/** Builds the whole application. Never listens: server.ts does that. */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = createFastify(config);
  const metrics = await registerPlatform(app, config, deps);
  const jobs = setUpJobs(app, config, deps, metrics);

  // Services, wired explicitly: each gets exactly what it uses.
  const clock = deps.clock ?? systemClock;
  const prisma = app.db.prisma;
  const secret = await loadSecretKey(config.secretKey, config.db.dataDir);
  if (secret.generated)
    app.log.warn(`SECRET_KEY is not set: generated one in ${path.join(config.db.dataDir, 'secret_key')}`);
  const { mailer, mail } = setUpMail(app, config, deps);
  const { limiter, sessions, users, invites, accounts } = await setUpAccounts(app, config, {
    clock,
    mail,
    secretKey: secret.key,
  });
  const calendar = setUpCalendar(app, config, deps, { clock, secretKey: secret.key });

  await app.register(healthRoutes);
  await app.register(siteRoutes, { config });
  await app.register(allauthRoutes, {
    prefix: '/_allauth/browser/v1',
    accounts,
    calendar,
    publicUrl: config.publicUrl,
  });
  await app.register(productAuthRoutes, { accounts });
  const weather =
    deps.weather !== undefined
      ? deps.weather
      : config.weather.provider === 'open-meteo'
        ? createOpenMeteo({ ...config.weather, userAgent: config.fetch.userAgent })
        : null;
  const bus = setUpRealtime(app, config);
  app.decorate('setup', {
    database: app.db.kind === 'postgres' ? 'PostgreSQL' : `embedded PGlite in ${config.db.dataDir}`,
    realtime: bus.kind,
    jobs: config.jobs.runWorkers ? 'run in this process' : 'left to worker processes',
  });
  const hub = createChatHub(bus);
  const chatRepo = createChatRepo(app.db.query);
  const chatPosts = createChatPostsService({ repo: chatRepo, hub, clock });
  metrics?.collectSockets(() => hub.total());
  // Signing out (or a password reset or change) closes the chat sockets of the sessions it ended.
  sessions.onEnded((ended) => hub.endSessions(ended));
  await app.register(usersRoutes, {
    accounts,
    allowGeocode: (userId) => limiter.consume(LIMITS.geocode(userId)),
    geocode: weather ? geocoder(weather, config.weather.timeoutMs) : null,
    onSettingsChanged: (userId, settings) => hub.updateUser(userId, settings),
  });
  await app.register(
    accountDataRoutes,
    accountDataOptions({ prisma, calendar, sessions, users, limiter, clock, log: app.log }),
  );
  await app.register(invitesRoutes, { invites });
  const models = setUpModels(app, config, deps, metrics);
  await app.register(adminRoutes, {
    admin: createAdminService({
      repo: createAdminRepo(prisma, app.db.query),
      users,
      sessions,
      invites,
      mail,
      limiter,
      log: app.log.child({ module: 'admin' }),
    }),
    publicUrl: config.publicUrl,
    checkModel: () => checkModel(config.llm, config.research.embeddingModel),
    modelUsage: models.usage,
  });
  const memories = createMemoriesService({ repo: createMemoriesRepo(prisma, app.db.query), clock, limiter });
  await app.register(memoriesRoutes, { memories, publicUrl: config.publicUrl });

  const llm = models.chat;
  if (!llm) app.log.warn('LLM_MODEL is not set: chat answers with a note on how to configure a model.');
  const research = setUpResearch(app, config, deps, { llm: models.research, hub, chatPosts, clock });
  await app.register(researchRoutes, { research });
  await app.register(resourcesRoutes, {
    resources: createResourcesService({ repo: createResourcesRepo(app.db.query) }),
  });
  const daily = setUpDaily(app, config, deps, {
    llm: models.daily,
    hub,
    chatPosts,
    users,
    clock,
    research,
    calendar,
    weather,
    mailer,
    secret: secret.key,
    metrics,
  });
  await app.register(dailyRoutes, {
    daily,
    allowSendNow: (userId) => limiter.consume(LIMITS.dailySendNow(userId)),
  });
  const jobsStopped = jobs.stopped;
  await setUpChat(app, config, {
    chatRepo,
    users,
    hub,
    bus,
    llm,
    memories,
    clock,
    metrics,
    sessions,
    research,
    calendar,
    daily,
    learningLlm: models.learning,
    jobsStopped,
  });
  await app.register(calendarRoutes, { calendar });
  await app.register(connectionsRoutes, { calendar });
  await app.register(docsRoutes);

  await app.register(webApp, config.web);
  return app;
}

/** The Fastify instance with the server's options: logging, proxies, body size, routing. */
function createFastify(config: Config): FastifyInstance {
  return Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.cookie', 'req.headers.authorization', 'req.headers["x-csrftoken"]'],
      // Collectors and fail2ban filters match "level":"warn" more readily than pino's 40.
      ...(config.logFormat === 'json' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
      ...(config.logFormat === 'pretty'
        ? {
            transport: {
              target: 'pino-pretty',
              options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname,reqId,ip,method,url,status,ms' },
            },
          }
        : {}),
    },
    logController: new OneLineRequestLog(),
    trustProxy: trustProxyOption(config.trustProxy),
    bodyLimit: 1024 * 1024,
    // Opening and migrating the embedded database can take a while on a small or busy machine.
    pluginTimeout: 120_000,
    // The spec names API paths with a trailing slash; clients that drop it still reach them.
    routerOptions: { ignoreTrailingSlash: true },
  });
}

/**
 * What every request passes through: errors, metrics (returned when enabled), input, route
 * declarations, security headers, cookies, the WebSocket server, and the database.
 */
async function registerPlatform(app: FastifyInstance, config: Config, deps: AppDeps) {
  await app.register(errorsPlugin);
  // Prometheus metrics when enabled (each process its own); first, so every request is timed.
  const metrics = config.metrics ? createMetrics() : undefined;
  if (metrics && config.metrics) await app.register(metricsRoutes, { metrics, token: config.metrics.token });
  app.decorate('metrics', metrics ?? null);
  await app.register(inputPlugin);
  await app.register(routesPlugin);
  await app.register(securityHeaders, { hsts: config.publicUrl.startsWith('https://') });
  await app.register(cookie);
  await app.register(websocket, {
    options: { maxPayload: 64 * 1024 },
    errorHandler: socketErrorHandler,
    // Not the plugin's own, which closes every socket at once without a code: at shutdown, sockets
    // close once the chat has drained, with 1012 (see the chat's preClose below).
    preClose: (done) => done(),
  });
  // Shutdown, first: no new connections, so a proxy tries another instance (open ones are still
  // served; Fastify answers their new requests with 503 while it closes).
  app.addHook('preClose', async () => {
    app.server.close();
  });
  await app.register(dbPlugin, { config, db: deps.db });

  return metrics;
}

/**
 * Background jobs: services define their queues while the app is built; the queues are created and
 * the workers start once it is ready. They stop first at shutdown (preClose, before the chat drain),
 * while the database is still open. `stopped()` is the stop begun then.
 */
function setUpJobs(app: FastifyInstance, config: Config, deps: AppDeps, metrics: Metrics | undefined) {
  const jobs = createJobs({
    ...deps.jobs,
    db: app.db,
    runWorkers: config.jobs.runWorkers,
    // The embedded database is one process's: what it left running when it stopped is over.
    soleWorker: app.db.kind === 'pglite',
    log: app.log.child({ module: 'jobs' }),
    onRunFailed: metrics?.jobFailed,
  });
  app.decorate('jobs', jobs);
  metrics?.collectJobs(() => jobs.counts());
  // Not fatal for the web: it still answers (/readyz says why the database fails), and sending a job
  // says that jobs are not running. worker.ts exits instead.
  app.addHook('onReady', async () => {
    await jobs.start().catch((err: unknown) => app.log.error({ err }, 'background jobs could not start'));
  });
  // Started at once, awaited after the chat drain: the two wait side by side within the shutdown's limit.
  let jobsStopped: Promise<void> = Promise.resolve();
  app.addHook('preClose', async () => {
    jobsStopped = jobs.stop();
    // Awaited (and its failure reported) below; not an unhandled rejection meanwhile.
    jobsStopped.catch(() => {});
  });
  if (!config.jobs.runWorkers && app.db.kind === 'pglite')
    app.log.warn(
      'RUN_WORKERS is off on the embedded database, which no other process can open: background jobs will not run. Set DATABASE_URL to run workers in another process.',
    );
  return { jobs, stopped: () => jobsStopped };
}

/** Account mail: the mailer (SMTP or the outbox folder) and the queue that sends after the answer. */
function setUpMail(app: FastifyInstance, config: Config, deps: AppDeps) {
  const mailLog = app.log.child({ module: 'mail' });
  const mailer =
    deps.mailer ??
    createMailer({
      ...config.mail,
      outboxDir: path.join(config.db.dataDir, 'mail'),
      log: mailLog,
      production: config.env === 'production',
    });
  const mail = createMailQueue(mailer, mailLog);
  app.decorate('mail', mail);
  // Mail queued by the last requests still goes out before the process ends.
  app.addHook('onClose', async () => {
    const left = await mail.drain(MAIL_DRAIN_MS);
    if (left) app.log.warn(`${left} mail(s) still being sent at shutdown`);
    if (!deps.mailer) mailer.close();
  });
  return { mailer, mail };
}

/** Accounts, sessions, invites and rate limits, with the session and CSRF plugins every route sits behind. */
async function setUpAccounts(
  app: FastifyInstance,
  config: Config,
  { clock, mail, secretKey }: { clock: Clock; mail: MailQueue; secretKey: string },
) {
  const prisma = app.db.prisma;
  const accountsRepo = createAccountsRepo(prisma, app.db.query);
  const limiter = createRateLimiter({ repo: createRateLimitRepo(prisma), clock });
  const sessionCache =
    app.db.kind === 'postgres' && app.db.url && config.sessionCacheMs > 0
      ? createSessionCache({
          url: app.db.url,
          ttlMs: config.sessionCacheMs,
          log: app.log.child({ module: 'sessions' }),
        })
      : undefined;
  if (sessionCache) {
    await sessionCache.start();
    app.addHook('onClose', () => sessionCache.close());
  }
  const sessions = createSessionsService({ repo: accountsRepo, clock, cache: sessionCache });
  const users = createUsersService({ repo: createUsersRepo(prisma, app.db.query) });
  const invites = createInvitesService({
    repo: createInvitesRepo(prisma, app.db.query),
    clock,
    signupPage: config.frontendUrls.signup,
  });
  const accounts = createAccountsService({
    repo: accountsRepo,
    invites,
    mail,
    limiter,
    signer: createSigner(secretKey),
    clock,
    publicUrl: config.publicUrl,
    frontendUrls: config.frontendUrls,
    log: app.log.child({ module: 'accounts' }),
  });
  app.decorate('accounts', accounts);
  app.decorate('invites', invites);

  // Expired sessions and old rate-limit rows are of no use; sweep them hourly.
  const sweep = setInterval(() => {
    Promise.all([sessions.prune(), limiter.prune()]).catch((err) => app.log.warn({ err }, 'cleanup failed'));
  }, 3600_000);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));

  const secureCookies = config.publicUrl.startsWith('https://');
  await app.register(sessionPlugin, { sessions, secureCookies });
  await app.register(csrfPlugin, {
    publicUrl: config.publicUrl,
    trustedOrigins: config.csrfTrustedOrigins,
    secureCookies,
  });
  return { limiter, sessions, users, invites, accounts };
}

/** Calendars: connections (their secrets sealed with the installation's key) and the ICS reader's threads. */
function setUpCalendar(
  app: FastifyInstance,
  config: Config,
  deps: AppDeps,
  { clock, secretKey }: { clock: Clock; secretKey: string },
): CalendarService {
  const prisma = app.db.prisma;
  const icsReader = createIcsReader();
  app.addHook('onClose', () => icsReader.close());
  const calendar = createCalendarService({
    repo: createCalendarRepo(prisma, app.db.query),
    box: createSecretBox([secretKey], 'calendar connections'),
    clock,
    log: app.log.child({ module: 'calendar' }),
    publicUrl: config.publicUrl,
    clients: config.calendar,
    endpoints: deps.calendar?.endpoints,
    cacheMs: deps.calendar?.cacheMs,
    safeFetch: createSafeFetch({ ...config.fetch, maxBytes: Math.max(config.fetch.maxBytes, ICS_MAX_BYTES) }),
    icsReader,
  });
  app.decorate('calendar', calendar);
  return calendar;
}

/** The weather provider's geocoding, as the settings page's location field uses it. */
function geocoder(weather: WeatherProvider, timeoutMs: number) {
  return async (name: string) => {
    const place = await weather.geocode(name, AbortSignal.timeout(timeoutMs));
    return place
      ? { name: place.name, country_code: place.countryCode, latitude: place.latitude, longitude: place.longitude }
      : null;
  };
}

/** The chat: its service, its sockets' routes and search, and its part of the shutdown. */
async function setUpChat(
  app: FastifyInstance,
  config: Config,
  ports: {
    chatRepo: ChatRepo;
    users: UsersService;
    hub: ChatHub;
    bus: RealtimeBus;
    llm: Llm | null;
    memories: MemoriesService;
    clock: Clock;
    metrics: Metrics | undefined;
    sessions: SessionsService;
    research: ResearchService;
    calendar: CalendarService;
    daily: DailyService;
    /** The model learning asks (LLM_LEARNING_MODEL, else the chat's). */
    learningLlm: Llm | null;
    jobsStopped: () => Promise<void>;
  },
) {
  const { chatRepo, users, hub, bus, llm, memories, clock, metrics, sessions, research, calendar, daily } = ports;
  const chat = createChatService({
    research,
    calendar,
    onOnboarded: (userId) => daily.settingsFromOnboarding(userId),
    repo: chatRepo,
    users,
    hub,
    llm,
    learning: createLearningService({ llm: ports.learningLlm, memories, log: app.log.child({ module: 'learning' }) }),
    memories,
    clock,
    log: app.log.child({ module: 'chat' }),
    metrics,
    forgetCachedUser: (userId) => sessions.forgetCached({ userId }),
  });
  // On shutdown, answers being written and facts being learned finish before the database closes
  // (answers still being written then are stored as far as they got, with the interrupted note).
  // Then the sockets close with 1012: clients reconnect at once, to another instance.
  app.addHook('preClose', async () => {
    const left = await chat.drain(SHUTDOWN_DRAIN_MS);
    if (left) app.log.warn(`${left} chat task(s) still running at shutdown`);
    await hub.closeAll(CLOSE_CODES.serviceRestart, 'Server restarting', SOCKET_CLOSE_MS);
    await ports.jobsStopped();
  });
  // Last: the answers and research events published until now still reach the tabs on other instances.
  app.addHook('preClose', () => bus.close());
  await app.register(chatRoutes, {
    chat,
    hub,
    sessions,
    pingIntervalMs: config.chat.pingIntervalMs,
    allowedOrigins: new Set([new URL(config.publicUrl).origin, ...config.csrfTrustedOrigins]),
    maxConnections: config.chat.maxConnections,
    dailyMessage: async (userId, id) => {
      const found = await daily.get(userId, id);
      return found ? { date: found.delivery_date, text: found.message_text } : null;
    },
  });
  await app.register(chatSearchRoutes, {
    search: createChatSearchService({ repo: createChatSearchRepo(app.db.query) }),
  });
  await app.register(onboardingRoutes, { skip: (userId) => chat.skipOnboarding(userId) });
}

/**
 * The model of each purpose: the chat's (LLM_MODEL), and learning's, research's and the daily
 * message's where a model of their own is set (on the same endpoint); each counted in /metrics.
 * Tests that give a model (deps.llm) get it for every purpose.
 */
function setUpModels(app: FastifyInstance, config: Config, deps: AppDeps, metrics: Metrics | undefined) {
  const log = app.log.child({ module: 'model' });
  const instrumented = (llm: Llm | null) => (llm && metrics ? metrics.instrumentLlm(llm) : llm);
  const make = (model: string | undefined) =>
    instrumented(createLlm({ ...config.llm, model }, config.research.embeddingModel, { log }));
  const chat = deps.llm !== undefined ? instrumented(deps.llm) : make(config.llm.model);
  // No chat model, no assistant: a purpose's own model alone does not make one.
  const own = (model: string | undefined) =>
    chat && deps.llm === undefined && model && model !== config.llm.model ? make(model) : chat;
  const { learning, research, daily } = config.llm.purposes ?? {};
  // Every purpose's calls are metered (tokens per user and purpose, the daily allowance), then wait
  // in the endpoint's one queue at the purpose's priority.
  const meter = createUsageMeter({
    repo: createModelUsageRepo(app.db.query),
    dailyLimit: config.llm.userDailyTokens ?? null,
    log,
    count: metrics?.countPurpose,
  });
  const gate = createModelGate({
    repo: createModelGateRepo(app.db.query),
    endpoint: config.llm.baseUrl ?? 'https://api.openai.com/v1',
    limit: config.llm.concurrency ?? 16,
    log,
  });
  app.addHook('onClose', () => gate.close());
  app.addHook('onClose', () => meter.close());
  const gated = (llm: Llm | null, purpose: Purpose, priority: Priority) =>
    llm && meter.meter(gateLlm(llm, gate, priority), purpose);
  return {
    chat: gated(chat, 'chat', 'chat'),
    learning: gated(own(learning), 'learning', 'background'),
    research: gated(own(research), 'research', 'research'),
    daily: gated(own(daily), 'daily', 'background'),
    usage: (days: number) => meter.report(days),
  };
}

/** The realtime bus the chat hub publishes on (see realtime.bus.ts). */
function setUpRealtime(app: FastifyInstance, config: Config): RealtimeBus {
  const log = app.log.child({ module: 'realtime' });
  const { bus: kind, redisUrl } = config.realtime;
  const bus =
    kind === 'redis' && redisUrl
      ? createRedisBus({ url: redisUrl, log })
      : kind === 'postgres' && app.db.url
        ? createPostgresBus({ url: app.db.url, query: app.db.query, log })
        : createMemoryBus(log);
  if (kind !== bus.kind) log.warn(`REALTIME_BUS=${kind} needs PostgreSQL: events stay in this process`);
  app.addHook('onReady', () => bus.start());
  return bus;
}

/** Daily messages: the service, the schedule's tick, the generation queue and the sweeper. */
function setUpDaily(
  app: FastifyInstance,
  config: Config,
  deps: AppDeps,
  ports: {
    llm: Llm | null;
    hub: ChatHub;
    chatPosts: ChatPostsService;
    users: UsersService;
    clock: Clock;
    research: ResearchService;
    calendar: CalendarService;
    weather: WeatherProvider | null;
    mailer: Mailer;
    secret: string;
    metrics?: Metrics;
  },
): DailyService {
  const { hub, clock } = ports;
  const log = app.log.child({ module: 'daily' });
  const daily = createDailyService({
    repo: createDailyRepo(app.db.query),
    users: ports.users,
    clock,
    log,
    llm: ports.llm,
    weather: ports.weather,
    calendar: ports.calendar,
    research: ports.research,
    // One waiting job per message (the queue's `short` policy): the sweeper and a research poll can
    // ask again without piling up duplicates behind a backlog.
    enqueue: async (id, delaySec) => {
      await app.jobs.send(
        DAILY_QUEUE,
        { id },
        { singletonKey: `daily:${id}`, ...(delaySec ? { startAfter: delaySec } : {}) },
      );
    },
    enqueueMany: (ids) =>
      app.jobs.sendMany(
        DAILY_QUEUE,
        ids.map((id) => ({ data: { id }, singletonKey: `daily:${id}` })),
      ),
    chat: ports.chatPosts,
    delivered: (userId) => {
      hub.publish(userId, 'chat', {
        author_type: 'system',
        message_type: 'task_notification_final',
        raw_text: DAILY_MESSAGES.ready,
        message_id: null,
        timestamp: clock.now().toISOString(),
      });
      ports.metrics?.dailyDelivered();
    },
    mailer: ports.mailer,
    signer: createSigner(`${ports.secret}:daily-pause`),
    publicUrl: config.publicUrl,
  });
  app.decorate('daily', daily);
  // Each run is safe to repeat (the row records every step), so the job retries with backoff.
  app.jobs.define<{ id: number }>(
    DAILY_QUEUE,
    {
      retryLimit: 4,
      retryDelay: 30,
      retryBackoff: true,
      expireInSeconds: 10 * 60,
      policy: 'short',
      concurrency: config.daily.concurrency,
    },
    (job) => daily.generate(job.data.id, job.signal),
  );
  app.jobs.onFailed<{ id: number }>(DAILY_QUEUE, (job) => daily.failed(job.data.id, job.error));
  app.jobs.define(
    DAILY_TICK_QUEUE,
    { retryLimit: 0, retryDelay: 0, retryBackoff: false, expireInSeconds: 5 * 60 },
    async () => {
      await daily.tick();
      await daily.sweep();
    },
  );
  if (config.jobs.runWorkers && deps.dailySchedule !== false) {
    app.addHook('onReady', async () => {
      await app.jobs
        .schedule(DAILY_TICK_QUEUE, DAILY_TICK_CRON)
        .catch((err: unknown) => log.error({ err }, 'the daily message schedule could not start'));
    });
  }
  return daily;
}

/** Web research: the service, its job queue and the sweeper that takes over interrupted researches. */
function setUpResearch(
  app: FastifyInstance,
  config: Config,
  deps: AppDeps,
  { llm, hub, chatPosts, clock }: { llm: Llm | null; hub: ChatHub; chatPosts: ChatPostsService; clock: Clock },
): ResearchService {
  const log = app.log.child({ module: 'research' });
  const search = createSearch(config.search, { log: app.log.child({ module: 'search' }) });
  // Users read only that research is not set up; how to set it up is for whoever reads this log.
  if (!search && config.research.dailyLimit > 0) app.log.info(SEARCH_NOT_CONFIGURED_OPERATOR);
  const safeFetch = createSafeFetch(config.fetch);
  const timing = deps.research ?? {};
  const extractor = createExtractor({ timeoutMs: timing.extractTimeoutMs });
  app.addHook('onClose', () => extractor.close());
  const research = createResearchService({
    repo: createResearchRepo(app.db.prisma, app.db.query),
    llm,
    search,
    searchNotConfigured: SEARCH_NOT_CONFIGURED,
    fetchPage: (url, init) => safeFetch(url, init),
    extract: (input) => extractor.extract(input),
    enqueue: async (id, delayMs) => {
      await app.jobs.send(RESEARCH_QUEUE, { id }, delayMs ? { startAfter: Math.ceil(delayMs / 1000) } : {});
    },
    chat: chatPosts,
    events: {
      card: (userId, card) => hub.publish(userId, 'chat', { message_type: 'research', research: card }),
      cancelled: (id) => hub.cancelResearch(id),
    },
    clock,
    log,
    dailyLimit: config.research.dailyLimit,
    ...timing,
  });
  hub.onResearchCancel((id) => research.stopRun(id));
  // The research row drives retries and takes over after crashes (see the sweeper), so the job
  // itself never retries; it expires long after any research would have finished.
  app.jobs.define<{ id: number }>(
    RESEARCH_QUEUE,
    { retryLimit: 0, retryDelay: 0, retryBackoff: false, expireInSeconds: 15 * 60, concurrency: 4 },
    (job) => research.run(job.data.id, job.signal),
  );
  if (config.jobs.runWorkers) {
    const sweep = () => research.sweep().catch((err) => log.warn({ err }, 'research sweep failed'));
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      void sweep();
      timer = setInterval(sweep, timing.sweepMs ?? RESEARCH_SWEEP_MS);
      timer.unref();
    });
    app.addHook('preClose', async () => clearInterval(timer));
  }
  return research;
}
