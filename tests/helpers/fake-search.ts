// One HTTP server on 127.0.0.1 speaking the three search APIs Daybook uses, at their real paths:
// SearXNG's GET /search?q=...&format=json, Brave's GET /res/v1/web/search (X-Subscription-Token) and
// Tavily's POST /search (Bearer key). SearXNG and Tavily share /search and are told apart by method.
// SearXNG also answers under any prefix (GET /searx/search), as instances behind a sub-path do.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeProvider = 'searxng' | 'brave' | 'tavily';

/** A result as the test means it; each protocol gets its own fields (content, description...). */
export interface FakeResult {
  url: string;
  title: string;
  snippet: string;
}

/** What one search answers: results, a raw HTTP answer, or results after a delay. */
export type FakeAnswer =
  | FakeResult[]
  | { status: number; body: string; headers?: Record<string, string> }
  | { delayMs: number; results?: FakeResult[] };

export interface FakeSearchRequest {
  provider: FakeProvider;
  query: string;
  method: string;
  /** Path and query string, e.g. /search?q=bikes&format=json. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Tavily's parsed JSON body. */
  body?: Record<string, unknown>;
}

export interface FakeSearch {
  /** SEARXNG_URL, BRAVE_API_URL and TAVILY_API_URL for this server. */
  searxngUrl: string;
  braveUrl: string;
  tavilyUrl: string;
  /** The keys the fake accepts (BRAVE_API_KEY, TAVILY_API_KEY). */
  braveKey: string;
  tavilyKey: string;
  /** Every authorised, well-formed search, in order of arrival. */
  requests: FakeSearchRequest[];
  /** How searches are answered; default: `results` from startFakeSearch, else three pages on example.org. */
  onSearch(fn: (provider: FakeProvider, query: string) => FakeAnswer): void;
  /** SearXNG's search.formats setting; without json it answers format=json with its HTML 403 page. */
  setSearxngFormats(formats: string[]): void;
  close(): Promise<void>;
}

export interface FakeSearchOptions {
  /** Default answer to every query, e.g. pages of a local fake site: `fakeResults(site.origin, ['/a', '/b'])`. */
  results?: FakeResult[] | ((query: string) => FakeResult[]);
  braveKey?: string;
  tavilyKey?: string;
}

/** Results pointing at `origin` + each path, titled after the path. */
export function fakeResults(origin: string, paths: string[]): FakeResult[] {
  return paths.map((path, i) => ({
    url: new URL(path, origin).href,
    title: `Page ${i + 1}: ${path}`,
    snippet: `A snippet of ${path} that is not the page's text.`,
  }));
}

// Flask's abort(403) page, which SearXNG sends for a format missing from search.formats.
const SEARXNG_FORBIDDEN = `<!doctype html>
<html lang=en>
<title>403 Forbidden</title>
<h1>Forbidden</h1>
<p>You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.</p>
`;

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

function searxngBody(query: string, results: FakeResult[]) {
  return {
    query,
    number_of_results: 0,
    results: results.map((r, i) => {
      const url = new URL(r.url);
      return {
        url: r.url,
        title: r.title,
        content: r.snippet,
        engine: 'duckduckgo',
        parsed_url: [url.protocol.slice(0, -1), url.host, url.pathname, '', url.search.slice(1), url.hash.slice(1)],
        template: 'default.html',
        engines: ['duckduckgo', 'brave'],
        positions: [i + 1],
        score: 2 / (i + 1),
        category: 'general',
      };
    }),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  };
}

function braveBody(query: string, results: FakeResult[]) {
  return {
    type: 'search',
    query: { original: query, show_strict_warning: false, is_navigational: false, spellcheck_off: true },
    mixed: { type: 'mixed', main: results.map((_, i) => ({ type: 'web', index: i, all: false })), top: [], side: [] },
    // Brave leaves `web` out when it has nothing.
    ...(results.length
      ? {
          web: {
            type: 'search',
            family_friendly: true,
            results: results.map((r) => {
              const url = new URL(r.url);
              return {
                type: 'search_result',
                title: r.title,
                url: r.url,
                description: r.snippet,
                is_source_local: false,
                is_source_both: false,
                language: 'en',
                family_friendly: true,
                profile: { name: url.hostname, url: r.url, long_name: url.hostname },
                meta_url: {
                  scheme: url.protocol.slice(0, -1),
                  netloc: url.host,
                  hostname: url.hostname,
                  path: url.pathname,
                },
              };
            }),
          },
        }
      : {}),
  };
}

function tavilyBody(query: string, results: FakeResult[]) {
  return {
    query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: results.map((r, i) => ({
      title: r.title,
      url: r.url,
      content: r.snippet,
      score: 0.9 - i * 0.05,
      raw_content: null,
    })),
    response_time: 0.42,
  };
}

const BODIES = { searxng: searxngBody, brave: braveBody, tavily: tavilyBody };

export async function startFakeSearch(options: FakeSearchOptions = {}): Promise<FakeSearch> {
  const braveKey = options.braveKey ?? 'test-brave-key';
  const tavilyKey = options.tavilyKey ?? 'test-tavily-key';
  const defaults = options.results;
  const requests: FakeSearchRequest[] = [];
  let searxngFormats = ['html', 'json'];
  const defaultResults = (query: string): FakeResult[] => {
    if (typeof defaults === 'function') return defaults(query);
    if (defaults) return defaults;
    const slug = encodeURIComponent(query.toLowerCase().replace(/\s+/g, '-'));
    return fakeResults('https://example.org', [`/${slug}/1`, `/${slug}/2`, `/${slug}/3`]);
  };
  let handler = (_provider: FakeProvider, query: string): FakeAnswer => defaultResults(query);

  async function answer(provider: FakeProvider, query: string, res: ServerResponse) {
    let script = handler(provider, query);
    if (!Array.isArray(script) && 'delayMs' in script) {
      const { delayMs, results } = script;
      await new Promise((r) => setTimeout(r, delayMs));
      if (res.destroyed) return;
      script = results ?? defaultResults(query);
    }
    if ('status' in script) {
      res.writeHead(script.status, { 'content-type': 'application/json', ...script.headers }).end(script.body);
      return;
    }
    json(res, 200, BODIES[provider](query, script));
  }

  async function route(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const part of req) raw += part;
    const url = new URL(req.url ?? '/', 'http://fake');
    const record = (provider: FakeProvider, query: string, body?: Record<string, unknown>) =>
      requests.push({ provider, query, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });

    if (req.method === 'GET' && url.pathname === '/res/v1/web/search') {
      if (req.headers['x-subscription-token'] !== braveKey) {
        json(res, 422, {
          type: 'ErrorResponse',
          error: {
            id: 'c0ffee00-0000-4000-8000-000000000000',
            status: 422,
            code: 'SUBSCRIPTION_TOKEN_INVALID',
            detail: 'The provided subscription token is invalid.',
            meta: { component: 'authentication' },
          },
          time: Math.floor(Date.now() / 1000),
        });
        return;
      }
      const q = url.searchParams.get('q');
      if (!q) {
        json(res, 422, {
          type: 'ErrorResponse',
          error: { status: 422, code: 'VALIDATION', detail: 'Unable to validate request parameter(s).' },
        });
        return;
      }
      record('brave', q);
      await answer('brave', q, res);
      return;
    }

    if (req.method === 'POST' && url.pathname === '/search') {
      if (req.headers.authorization !== `Bearer ${tavilyKey}`) {
        json(res, 401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        json(res, 400, { detail: { error: 'Invalid JSON body.' } });
        return;
      }
      if (typeof body.query !== 'string' || !body.query) {
        json(res, 400, { detail: { error: 'Query is missing.' } });
        return;
      }
      record('tavily', body.query, body);
      await answer('tavily', body.query, res);
      return;
    }

    if (req.method === 'GET' && url.pathname.endsWith('/search')) {
      const format = url.searchParams.get('format') ?? 'html';
      if (!searxngFormats.includes(format)) {
        res.writeHead(403, { 'content-type': 'text/html; charset=utf-8' }).end(SEARXNG_FORBIDDEN);
        return;
      }
      const q = url.searchParams.get('q');
      if (format !== 'json' || !q) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>SearXNG</title>');
        return;
      }
      record('searxng', q);
      await answer('searxng', q, res);
      return;
    }

    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    searxngUrl: origin,
    braveUrl: `${origin}/res/v1/web/search`,
    tavilyUrl: `${origin}/search`,
    braveKey,
    tavilyKey,
    requests,
    onSearch(fn) {
      handler = fn;
    },
    setSearxngFormats(formats) {
      searxngFormats = formats;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
