// Web search for research: SearXNG, Brave Search and Tavily, each over its own real API, tried in
// the configured order until one answers. These endpoints are chosen by whoever runs Daybook, not by
// users or models, so they use plain fetch rather than the SSRF-safe fetcher.
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { Config, SearchProviderName } from '../../config.ts';

export interface SearchResult {
  url: string;
  title: string;
  snippet: string;
}

export interface SearchOptions {
  /** At most this many results (providers are asked for at most 20). */
  limit: number;
  signal?: AbortSignal;
}

export interface SearchProvider {
  name: SearchProviderName;
  search(query: string, opts: SearchOptions): Promise<SearchResult[]>;
}

export interface Search {
  /** The configured providers, in the order they are tried. */
  providers: SearchProviderName[];
  /** The first provider that answers wins; an empty list is an answer. */
  search(query: string, opts: SearchOptions): Promise<{ provider: SearchProviderName; results: SearchResult[] }>;
}

export type SearchErrorKind = 'not_json' | 'unauthorized' | 'rate_limited' | 'unavailable' | 'bad_response';

/** A provider's failure, worded for the person who runs Daybook. */
export class SearchError extends Error {
  readonly provider: string;
  readonly kind: SearchErrorKind;
  /** Whether asking again later can help (rate limits, outages), as opposed to fixing the setup. */
  readonly retryable: boolean;
  /** When every provider failed: each one's failure, in the order they were tried. */
  readonly errors: SearchError[];

  constructor(
    provider: string,
    kind: SearchErrorKind,
    message: string,
    options: { retryable?: boolean; errors?: SearchError[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SearchError';
    this.provider = provider;
    this.kind = kind;
    this.retryable = options.retryable ?? (kind === 'rate_limited' || kind === 'unavailable');
    this.errors = options.errors ?? [];
  }
}

export const SEARCH_NOT_CONFIGURED =
  'Web research is not set up on this Daybook yet: it needs a search provider. Ask whoever runs this Daybook to add one.';

/** The same, for whoever runs Daybook (the log at start; docs/research.md, "Search providers"). */
export const SEARCH_NOT_CONFIGURED_OPERATOR =
  'web research is off: no search provider is configured (set SEARXNG_URL, with json in search.formats of its settings.yml, BRAVE_API_KEY or TAVILY_API_KEY)';

export interface SearchDeps {
  fetch?: typeof fetch;
  /** Per request, including reading the answer. */
  timeoutMs?: number;
  log?: FastifyBaseLogger;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Brave's `count` and Tavily's `max_results` go up to 20. */
const MAX_RESULTS = 20;
/** Brave and Tavily refuse queries over 400 characters; Brave also over 50 words. */
const MAX_QUERY_CHARS = 400;
const MAX_QUERY_WORDS = 50;

const LABELS: Record<SearchProviderName, string> = { searxng: 'SearXNG', brave: 'Brave Search', tavily: 'Tavily' };

/** The query as providers accept it: one line, at most 50 words and 400 characters. */
export function searchableQuery(query: string): string {
  const words = query.trim().split(/\s+/).filter(Boolean).slice(0, MAX_QUERY_WORDS);
  let q = words.join(' ');
  if (q.length > MAX_QUERY_CHARS) {
    q = q.slice(0, MAX_QUERY_CHARS);
    const space = q.lastIndexOf(' ');
    if (space > MAX_QUERY_CHARS / 2) q = q.slice(0, space);
  }
  return q;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Plain one-line text: Brave marks matches with <strong> and escapes quotes as entities. */
function plain(text: string | null | undefined): string {
  return (text ?? '')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

interface RawResult {
  url: string;
  title?: string | null;
  snippet?: string | null;
}

/** http(s) results only, cleaned, without repeats, at most `limit`. */
function normalise(items: RawResult[], limit: number): SearchResult[] {
  const out: SearchResult[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (out.length >= limit) break;
    let url: URL;
    try {
      url = new URL(item.url.trim());
    } catch {
      continue;
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || seen.has(url.href)) continue;
    seen.add(url.href);
    out.push({ url: url.href, title: plain(item.title) || url.hostname, snippet: plain(item.snippet) });
  }
  return out;
}

/** Items of a result list that have the fields we use; others are skipped rather than failing all. */
function validItems<T>(schema: z.ZodType<T>, items: unknown[]): T[] {
  return items.flatMap((item) => {
    const parsed = schema.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** Where a request went, for messages: the host only (a SearXNG URL may carry a password). */
const hostOf = (url: string) => new URL(url).host;

interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * One request with a timeout covering the whole answer. The caller's abort is passed on as it is
 * (research was cancelled, nothing failed); a timeout or a network failure becomes a SearchError.
 */
async function request(
  name: SearchProviderName,
  url: string,
  init: RequestInit,
  signal: AbortSignal | undefined,
  deps: SearchDeps,
): Promise<HttpAnswer> {
  const doFetch = deps.fetch ?? fetch;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  signal?.throwIfAborted();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await doFetch(url, { ...init, signal: controller.signal });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (timedOut) {
      throw new SearchError(name, 'unavailable', `${LABELS[name]} did not answer within ${seconds(timeoutMs)}.`, {
        cause: err,
      });
    }
    const code = (err as { cause?: { code?: string } }).cause?.code;
    throw new SearchError(
      name,
      'unavailable',
      `Could not reach ${LABELS[name]} at ${hostOf(url)}${code ? ` (${code})` : ''}.`,
      { cause: err },
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The failure every provider shares: rate limits, outages and unexpected statuses. */
function statusError(name: SearchProviderName, answer: HttpAnswer): SearchError {
  const label = LABELS[name];
  const { status } = answer;
  if (status === 429) {
    const after = Number(answer.headers.get('retry-after'));
    const wait = Number.isFinite(after) && after > 0 ? ` Try again in ${Math.ceil(after)} s.` : ' Try again later.';
    return new SearchError(name, 'rate_limited', `${label} refused the search: too many requests (429).${wait}`);
  }
  if (status >= 500) return new SearchError(name, 'unavailable', `${label} is unavailable (${status}).`);
  if (status === 404) {
    return new SearchError(name, 'unavailable', `${label} answered 404: check the configured address.`, {
      retryable: false,
    });
  }
  return new SearchError(name, 'bad_response', `${label} refused the search (${status}).`);
}

function parseJson<T>(name: SearchProviderName, answer: HttpAnswer, schema: z.ZodType<T>): T {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw new SearchError(name, 'bad_response', `${LABELS[name]} answered with something other than JSON.`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new SearchError(name, 'bad_response', `${LABELS[name]} answered in an unexpected shape.`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function jsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const requestedCount = (limit: number) => Math.max(1, Math.min(MAX_RESULTS, Math.floor(limit)));

// SearXNG: GET {base}/search?q=...&format=json (docs.searxng.org/dev/search_api.html).
const ZSearxngResponse = z.object({
  results: z.array(z.unknown()),
  // [engine, reason] pairs, e.g. ["google", "CAPTCHA"].
  unresponsive_engines: z.array(z.array(z.unknown())).optional(),
});
const ZSearxngResult = z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() });

export function createSearxngProvider(baseUrl: string, deps: SearchDeps = {}): SearchProvider {
  const endpoint = new URL('search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  return {
    name: 'searxng',
    async search(query, opts) {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const answer = await request('searxng', url.href, { headers: { Accept: 'application/json' } }, opts.signal, deps);
      if (answer.status === 403) {
        // SearXNG answers 403 to every format that its search.formats setting leaves out.
        throw new SearchError(
          'searxng',
          'not_json',
          'SearXNG refused JSON output (403). Add json to search.formats in its settings.yml and restart it.',
        );
      }
      if (answer.status === 429) {
        throw new SearchError(
          'searxng',
          'rate_limited',
          "SearXNG's limiter refused the search (429). Turn server.limiter off in its settings.yml, or let Daybook's address pass its bot detection.",
        );
      }
      if (answer.status !== 200) throw statusError('searxng', answer);
      const body = parseJson('searxng', answer, ZSearxngResponse);
      const items = validItems(ZSearxngResult, body.results);
      if (body.results.length > 0 && items.length === 0) {
        throw new SearchError('searxng', 'bad_response', 'SearXNG answered with results that have no address.');
      }
      const unresponsive = body.unresponsive_engines ?? [];
      // No results because every engine failed (blocked, CAPTCHA) is an outage, not an answer.
      if (items.length === 0 && unresponsive.length > 0) {
        const engines = unresponsive.map(([engine, reason]) => `${engine}${reason ? `: ${reason}` : ''}`).join(', ');
        throw new SearchError('searxng', 'unavailable', `SearXNG's engines did not answer (${engines}).`);
      }
      return normalise(
        items.map((r) => ({ url: r.url, title: r.title, snippet: r.content })),
        opts.limit,
      );
    },
  };
}

// Brave Search API: GET /res/v1/web/search?q=...&count=N with X-Subscription-Token
// (api-dashboard.search.brave.com/app/documentation/web-search).
const ZBraveResponse = z.object({
  // Absent when there are no web results.
  web: z.object({ results: z.array(z.unknown()) }).optional(),
});
const ZBraveResult = z.object({ url: z.string(), title: z.string().nullish(), description: z.string().nullish() });
const ZBraveError = z.object({ error: z.object({ code: z.string().optional(), detail: z.string().optional() }) });

export function createBraveProvider(apiKey: string, endpoint: string, deps: SearchDeps = {}): SearchProvider {
  return {
    name: 'brave',
    async search(query, opts) {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(requestedCount(opts.limit)));
      const answer = await request(
        'brave',
        url.href,
        { headers: { Accept: 'application/json', 'X-Subscription-Token': apiKey } },
        opts.signal,
        deps,
      );
      if (answer.status !== 200) {
        const error = ZBraveError.safeParse(jsonBody(answer.text)).data?.error;
        // Brave answers an unknown or missing token with 422 SUBSCRIPTION_TOKEN_INVALID.
        const tokenProblem = /TOKEN|SUBSCRIPTION|AUTH/i.test(error?.code ?? '');
        if (answer.status === 401 || answer.status === 403 || (answer.status === 422 && tokenProblem)) {
          throw new SearchError(
            'brave',
            'unauthorized',
            `Brave Search refused the API key (${answer.status}). Check BRAVE_API_KEY.`,
          );
        }
        throw statusError('brave', answer);
      }
      const body = parseJson('brave', answer, ZBraveResponse);
      const results = body.web?.results ?? [];
      const items = validItems(ZBraveResult, results);
      if (results.length > 0 && items.length === 0) {
        throw new SearchError('brave', 'bad_response', 'Brave Search answered with results that have no address.');
      }
      return normalise(
        items.map((r) => ({ url: r.url, title: r.title, snippet: r.description })),
        opts.limit,
      );
    },
  };
}

// Tavily: POST /search {query, max_results, search_depth} with a Bearer key (docs.tavily.com).
const ZTavilyResponse = z.object({ results: z.array(z.unknown()) });
const ZTavilyResult = z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() });

export function createTavilyProvider(apiKey: string, endpoint: string, deps: SearchDeps = {}): SearchProvider {
  return {
    name: 'tavily',
    async search(query, opts) {
      const answer = await request(
        'tavily',
        endpoint,
        {
          method: 'POST',
          headers: {
            Accept: 'application/json',
            'Content-Type': 'application/json',
            Authorization: `Bearer ${apiKey}`,
          },
          body: JSON.stringify({ query, max_results: requestedCount(opts.limit), search_depth: 'basic' }),
        },
        opts.signal,
        deps,
      );
      if (answer.status === 401 || answer.status === 403) {
        throw new SearchError(
          'tavily',
          'unauthorized',
          `Tavily refused the API key (${answer.status}). Check TAVILY_API_KEY.`,
        );
      }
      // 432: the plan's monthly credits are used up; 433: the pay-as-you-go limit is reached.
      if (answer.status === 432 || answer.status === 433) {
        throw new SearchError(
          'tavily',
          'rate_limited',
          `Tavily refused the search: the account's usage limit is reached (${answer.status}).`,
          { retryable: false },
        );
      }
      if (answer.status !== 200) throw statusError('tavily', answer);
      const body = parseJson('tavily', answer, ZTavilyResponse);
      const items = validItems(ZTavilyResult, body.results);
      if (body.results.length > 0 && items.length === 0) {
        throw new SearchError('tavily', 'bad_response', 'Tavily answered with results that have no address.');
      }
      return normalise(
        items.map((r) => ({ url: r.url, title: r.title, snippet: r.content })),
        opts.limit,
      );
    },
  };
}

/** The configured providers in `config.order`: SearXNG when its URL is set, the others with a key. */
export function createSearchProviders(config: Config['search'], deps: SearchDeps = {}): SearchProvider[] {
  const providers: SearchProvider[] = [];
  for (const name of config.order) {
    if (name === 'searxng' && config.searxngUrl) providers.push(createSearxngProvider(config.searxngUrl, deps));
    if (name === 'brave' && config.braveApiKey) {
      providers.push(createBraveProvider(config.braveApiKey, config.braveUrl, deps));
    }
    if (name === 'tavily' && config.tavilyApiKey) {
      providers.push(createTavilyProvider(config.tavilyApiKey, config.tavilyUrl, deps));
    }
  }
  return providers;
}

/** One failure, or a summary of several, keeping the kind when they agree. */
function allFailed(failures: SearchError[]): SearchError {
  if (failures.length === 1) return failures[0] as SearchError;
  const kinds = new Set(failures.map((f) => f.kind));
  const kind = kinds.size === 1 ? (failures[0] as SearchError).kind : 'unavailable';
  return new SearchError(
    failures.map((f) => f.provider).join(','),
    kind,
    `No search provider answered. ${failures.map((f) => f.message).join(' ')}`,
    { retryable: failures.some((f) => f.retryable), errors: failures },
  );
}

/** Search over the configured providers, or null when none is configured (see SEARCH_NOT_CONFIGURED). */
export function createSearch(config: Config['search'], deps: SearchDeps = {}): Search | null {
  const providers = createSearchProviders(config, deps);
  if (providers.length === 0) return null;
  return {
    providers: providers.map((p) => p.name),
    async search(query, opts) {
      const q = searchableQuery(query);
      if (!q) return { provider: (providers[0] as SearchProvider).name, results: [] };
      const failures: SearchError[] = [];
      for (const provider of providers) {
        opts.signal?.throwIfAborted();
        try {
          return { provider: provider.name, results: await provider.search(q, opts) };
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          const failure =
            err instanceof SearchError
              ? err
              : new SearchError(provider.name, 'unavailable', `${LABELS[provider.name]} failed unexpectedly.`, {
                  cause: err,
                });
          // Neither the query nor the key is logged: the message names the provider and its host only.
          deps.log?.warn({ provider: provider.name, kind: failure.kind }, `search failed: ${failure.message}`);
          failures.push(failure);
        }
      }
      throw allFailed(failures);
    },
  };
}
