// What each environment variable of config.ts is for, in words: the part of docs/configuration.md the
// schema cannot say. Names, defaults and accepted values come from EnvSchema itself; the generator
// (scripts/docs-config.ts, `npm run docs:config`) joins the two, and a test fails when a variable of
// the schema has no entry here or the committed docs/configuration.md is not what it would write.
// Links are relative to docs/.
import type { Env } from './config.ts';

export const CONFIG_GROUPS = [
  {
    id: 'server',
    title: 'Server, network and logs',
    intro: 'Where Daybook listens, the address people use, the proxies in front of it, and what it logs.',
  },
  {
    id: 'database',
    title: 'Database and processes',
    intro:
      'The embedded PGlite database needs nothing; PostgreSQL lets several processes share one database. See [Several instances](architecture.md#several-instances) and [Background jobs](architecture.md#background-jobs).',
  },
  {
    id: 'accounts',
    title: 'Accounts and mail',
    intro: 'Account links (verification, password reset, invites) and how account mail is sent.',
  },
  {
    id: 'model',
    title: 'The model',
    intro:
      'Any OpenAI-compatible endpoint. Check what it supports with `npm run check-model`; see [Model servers](model-servers.md).',
  },
  {
    id: 'chat',
    title: 'Chat sockets',
    intro: 'Limits of the chat WebSockets; see [Chat and the assistant](chat.md).',
  },
  {
    id: 'research',
    title: 'Web research and fetching',
    intro:
      'A search provider turns web research on; see [Search providers](research.md#search-providers). The fetch settings apply to every URL a user, a model or a search result chose ([the safe fetcher](research.md#the-safe-fetcher)).',
  },
  {
    id: 'calendar',
    title: 'Calendars',
    intro:
      'ICS calendars need no setup. Google and Microsoft are each enabled by an OAuth client whose id and secret are set together (half a client stops the server at start); see [Calendar connections](calendars.md).',
  },
  {
    id: 'daily',
    title: 'Weather and daily messages',
    intro: 'See [Daily messages](daily.md).',
  },
  {
    id: 'metrics',
    title: 'Metrics',
    intro: 'Prometheus metrics, off unless enabled; see [Metrics](operations.md#metrics).',
  },
  {
    id: 'creator',
    title: 'The about page',
    intro: 'Who runs this installation: the footer and the about page at `/{CREATOR_SLUG}`.',
  },
] as const;

export type ConfigGroupId = (typeof CONFIG_GROUPS)[number]['id'];

export interface VariableDoc {
  group: ConfigGroupId;
  /** One short sentence for the table (at most 200 characters). */
  summary: string;
  /** What applies when the variable is unset and the schema has no default (loadConfig or the code decides). */
  unset?: string;
  /** The accepted values, only where the schema's structure cannot say (a bare string parsed by a transform). */
  accepts?: string;
  /** The rest, as a note under the group's table. */
  details?: string;
}

export const CONFIG_DOCS: { [K in keyof Env]-?: VariableDoc } = {
  NODE_ENV: { group: 'server', summary: '`production` serves the built web app (`npm start` sets it).' },
  HOST: {
    group: 'server',
    summary: 'Interface to listen on (`0.0.0.0` in containers); `localhost` listens on both 127.0.0.1 and ::1.',
  },
  PORT: { group: 'server', summary: 'HTTP port.' },
  PUBLIC_URL: {
    group: 'server',
    unset: '`http://localhost:$PORT`',
    summary: 'The address people use to reach Daybook; used in links sent by email.',
    details:
      'It must be exactly the address people use: calendar providers send the browser back to it (https in production). With an `https://` address cookies are marked secure and responses carry HSTS.',
  },
  LOG_LEVEL: { group: 'server', summary: 'How much the server logs.' },
  LOG_FORMAT: {
    group: 'server',
    unset: '`pretty` on a terminal, else `json`',
    summary: '`json` for log collectors, `pretty` for reading.',
    details:
      '`json` is one pino object per line, levels as names such as `"level":"warn"`, for collectors; `pretty` gives readable lines. Each request is one line: the client\'s address (as `TRUST_PROXY` resolves it, for fail2ban or CrowdSec), method, path without its query, status and time. The start line names the database, the realtime bus and where background jobs run.',
  },
  TRUST_PROXY: {
    group: 'server',
    summary: 'Behind a reverse proxy: how many proxies to believe, or their addresses.',
    details:
      '`1` for one (e.g. Caddy; `true` means `1`), or their addresses/CIDRs (`10.0.0.0/8,loopback`). Client addresses, and so per-address rate limits, then come from the right end of `X-Forwarded-For`; what a client writes to its left is ignored.',
  },
  CSRF_TRUSTED_ORIGINS: {
    group: 'server',
    summary: 'Extra origins allowed to call the API and open chat sockets.',
  },
  WEB_DIST_DIR: { group: 'server', summary: 'The built web app served in production.' },

  DATABASE_URL: {
    group: 'database',
    unset: 'the embedded PGlite database in `DATA_DIR`',
    summary: 'PostgreSQL connection string.',
  },
  DATA_DIR: {
    group: 'database',
    summary: 'Where the embedded database and other local files live (the generated secret key, unsent mail).',
  },
  MIGRATIONS_DIR: { group: 'database', summary: 'The migrations applied at start.' },
  RUN_WORKERS: {
    group: 'database',
    summary: 'Whether this process runs background jobs.',
    details:
      '`false`: it only sends them, for `npm run worker` processes on the same PostgreSQL to run. On the embedded database nothing else could run them, so `false` there logs a warning.',
  },
  REALTIME_BUS: {
    group: 'database',
    unset: '`redis` with `REDIS_URL`, else `postgres` with `DATABASE_URL`, else `memory`',
    summary: "How chat events, sign-outs and settings changes reach a user's tabs on every process.",
    details:
      '`memory`: this process only (one instance, the embedded database). `postgres`: LISTEN/NOTIFY on the shared database (needs `DATABASE_URL`). `redis`: pub/sub (needs `REDIS_URL`). See [the realtime bus](architecture.md#the-realtime-bus).',
  },
  REDIS_URL: { group: 'database', summary: 'A Redis for the realtime bus (large installations).' },
  SESSION_CACHE_SECONDS: {
    group: 'database',
    summary:
      'On PostgreSQL, how long a process reuses a signed-in session for read requests; `0` looks the session up on every request.',
    details:
      'A sign-out, password change, deactivation or settings change reaches every process when it commits, so the copy is never used after a change (see [Several instances](architecture.md#several-instances)).',
  },

  SECRET_KEY: {
    group: 'accounts',
    unset: 'generated once, kept in `DATA_DIR/secret_key`',
    summary: 'Signs email verification and password reset keys, and encrypts calendar tokens and ICS addresses.',
    details: 'Set it when several processes share one database; changing it means users reconnect their calendars.',
  },
  SMTP_URL: {
    group: 'accounts',
    unset: 'mail is written to `DATA_DIR/mail`',
    summary: 'The mail server: `smtp://user:pass@host:587` or `smtps://...`.',
    details:
      "Unset: each email is written to `DATA_DIR/mail` (readable only by Daybook's user); the log names the file, never the address or link. In production the server warns at start that account mail is not delivered.",
  },
  MAIL_FROM: { group: 'accounts', summary: 'Sender of account emails.' },
  FRONTEND_URL_VERIFY_EMAIL: {
    group: 'accounts',
    unset: '`$PUBLIC_URL/auth/verify-email/{key}`',
    summary:
      "The page email verification links open; `{key}` is replaced by the key (allauth's `HEADLESS_FRONTEND_URLS`).",
  },
  FRONTEND_URL_RESET_PASSWORD: {
    group: 'accounts',
    unset: '`$PUBLIC_URL/auth/reset-password/{key}`',
    summary: 'The page password reset links open, with `{key}` as above.',
  },
  FRONTEND_URL_SIGNUP: {
    group: 'accounts',
    unset: '`$PUBLIC_URL/auth/signup`',
    summary:
      'The signup page invite links open (`?itoken=` is added) and the "no account with this address" mail names.',
  },

  LLM_MODEL: {
    group: 'model',
    summary: "The model's name (e.g. `gpt-4o-mini`, `llama3.1`). Unset: no assistant.",
    details:
      'Unset: chat answers that no model is set up yet (users are told to ask whoever runs Daybook; the log says what to set).',
  },
  LLM_LEARNING_MODEL: {
    group: 'model',
    unset: '`LLM_MODEL`',
    summary: 'The model that learns memories from chat messages (a small, cheap one is enough), on the same endpoint.',
  },
  LLM_RESEARCH_MODEL: {
    group: 'model',
    unset: '`LLM_MODEL`',
    summary: 'The model that plans web research and writes its reports, on the same endpoint.',
  },
  LLM_DAILY_MODEL: {
    group: 'model',
    unset: '`LLM_MODEL`',
    summary: 'The model that writes the daily messages, on the same endpoint.',
  },
  LLM_BASE_URL: {
    group: 'model',
    unset: '`https://api.openai.com/v1`',
    summary:
      'Any OpenAI-compatible endpoint: OpenAI, Ollama (`http://localhost:11434/v1`), llama.cpp, vLLM, LM Studio and others.',
  },
  LLM_API_KEY: { group: 'model', summary: "The provider's API key; local servers such as Ollama accept none." },
  LLM_TIMEOUT_MS: {
    group: 'model',
    summary: 'How long a model request (or a silence in a streamed reply) may last.',
  },
  LLM_MAX_RETRIES: { group: 'model', summary: 'Retries, with backoff, of a failed model request.' },
  LLM_USER_DAILY_TOKENS: {
    group: 'model',
    unset: 'no limit',
    summary: 'Tokens (prompt and completion, as the model reports them) one user may spend a day, UTC.',
    details:
      'Once spent, the chat answers with a note saying so and when it renews (midnight UTC), learning pauses, and research and daily messages go without the model until then. Admin → Usage shows what each user spent.',
  },
  LLM_CONCURRENCY: {
    group: 'model',
    summary: 'Model calls at once, for the whole installation (every instance and worker together).',
    details:
      'Calls beyond it wait in one queue: the chat first, then research, then background work (daily messages, learning), and a quarter of the calls (at least one, from 2) is kept for the chat. The default suits hosted APIs; for a local server, set the requests it runs in parallel: Ollama `OLLAMA_NUM_PARALLEL` (e.g. 2 to 4), llama.cpp `--parallel`, LM Studio its parallel requests; vLLM takes 16 or more.',
  },
  EMBEDDING_MODEL: {
    group: 'model',
    summary: 'An embedding model of the same endpoint (e.g. `text-embedding-3-small`, `nomic-embed-text`).',
    details: 'Set, research ranks page passages by embeddings instead of PostgreSQL full-text ranking.',
  },

  CHAT_MAX_CONNECTIONS: {
    group: 'chat',
    summary: 'Open chat sockets the server accepts in all; beyond it new ones close with 1013 and clients retry later.',
  },
  CHAT_PING_INTERVAL_MS: {
    group: 'chat',
    summary: 'How often chat sockets are pinged.',
    details:
      "A socket that missed the previous ping is dropped (freeing its slot), and each socket's session is re-checked.",
  },

  SEARXNG_URL: {
    group: 'research',
    summary: 'Your SearXNG for web research (e.g. `http://searxng.lan:8080`).',
    details: 'Its `settings.yml` must list `json` in `search.formats`.',
  },
  BRAVE_API_KEY: { group: 'research', summary: 'A Brave Search API key for web research.' },
  BRAVE_API_URL: { group: 'research', summary: "Brave's web search endpoint (change it only for a proxy)." },
  TAVILY_API_KEY: { group: 'research', summary: 'A Tavily API key for web research.' },
  TAVILY_API_URL: { group: 'research', summary: "Tavily's search endpoint (change it only for a proxy)." },
  SEARCH_PROVIDERS: {
    group: 'research',
    summary: 'The order in which configured search providers are tried; a provider left out is not used.',
  },
  FETCH_ALLOW: {
    group: 'research',
    accepts: 'comma-separated host names, IP addresses or CIDR ranges',
    summary: 'Hosts and addresses on your own network that research and ICS calendars may still fetch from.',
    details:
      'A name (`nextcloud.lan`) allows that host name whatever it resolves to; an address or CIDR (`192.168.1.20`, `10.0.0.0/8`) allows URLs written with such a literal address. Everything private, loopback, link-local and CGNAT is refused otherwise.',
  },
  FETCH_TIMEOUT_MS: {
    group: 'research',
    summary: 'How long one page fetch may take, redirects and body included.',
  },
  FETCH_MAX_BYTES: {
    group: 'research',
    summary:
      'The largest page read (5 MB), counted while it streams; ICS calendars may be up to 10 MB whatever it says.',
  },
  RESEARCH_DAILY_LIMIT: {
    group: 'research',
    summary: 'Researches one user may ask for in 24 hours; `0` turns web research off.',
  },

  GOOGLE_CLIENT_ID: {
    group: 'calendar',
    summary: 'With `GOOGLE_CLIENT_SECRET`: lets users connect Google Calendar ([setup](calendars.md#google)).',
  },
  GOOGLE_CLIENT_SECRET: { group: 'calendar', summary: "The Google OAuth client's secret." },
  MICROSOFT_CLIENT_ID: {
    group: 'calendar',
    summary:
      'With `MICROSOFT_CLIENT_SECRET`: lets users connect Microsoft Outlook calendars (Entra ID application id; [setup](calendars.md#microsoft)).',
  },
  MICROSOFT_CLIENT_SECRET: {
    group: 'calendar',
    summary: "The Entra ID application's client secret (its value, not its id).",
  },
  MICROSOFT_TENANT: {
    group: 'calendar',
    summary:
      '`common` (work, school and personal Microsoft accounts), `organizations`, `consumers`, or your tenant id.',
  },

  WEATHER_PROVIDER: {
    group: 'daily',
    summary: 'Weather for daily messages: `open-meteo` (no key needed) or `none` (messages leave the weather out).',
  },
  OPEN_METEO_FORECAST_URL: {
    group: 'daily',
    summary: 'The forecast endpoint (a mirror or a self-hosted Open-Meteo).',
  },
  OPEN_METEO_GEOCODING_URL: {
    group: 'daily',
    summary: 'The geocoding endpoint, used once when a user sets their location.',
  },
  WEATHER_TIMEOUT_MS: { group: 'daily', summary: 'How long one weather or geocoding call may take.' },
  DAILY_CONCURRENCY: {
    group: 'daily',
    summary: 'Daily messages one worker process writes at once.',
    details:
      'Size it for your model: about (users due at one time) × (seconds per model call + 0.2) ÷ (workers × 240) delivers everyone within 4 minutes; the bench uses 40 with two workers.',
  },

  METRICS_ENABLED: {
    group: 'metrics',
    summary: 'Serve Prometheus metrics at `/metrics`. Off: `/metrics` is an unknown path (404).',
  },
  METRICS_TOKEN: {
    group: 'metrics',
    summary:
      'Required when `METRICS_ENABLED` is on. Prometheus sends it as `Authorization: Bearer <token>`; other requests get 401.',
  },
  WORKER_METRICS_PORT: {
    group: 'metrics',
    summary:
      'With metrics on, the port on which a worker process (`npm run worker`, which serves nothing else) answers `GET /metrics`.',
  },

  CREATOR_NAME: {
    group: 'creator',
    summary: 'Who runs this installation: shown in the footer and on the about page.',
  },
  CREATOR_SLUG: {
    group: 'creator',
    unset: 'made from `CREATOR_NAME` (`about` when that leaves nothing usable)',
    summary: 'Path of the about page, e.g. `ana-lima` for `/ana-lima`. App routes are refused.',
  },
  CREATOR_BIO: { group: 'creator', summary: "The about page's bio." },
  CREATOR_EMAIL: {
    group: 'creator',
    summary: 'Contact address; enables the about page\'s "Request an invite" and email buttons.',
  },
  CREATOR_LINKS: {
    group: 'creator',
    accepts: '`Label=https://url` pairs, comma-separated',
    summary: 'Profile links in the footer and on the about page. Unset: no links are shown.',
    details: 'For example `GitHub=https://github.com/ana,Mastodon=https://mastodon.social/@ana`.',
  },
};
