import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSearch, fakeResults, startFakeSearch } from '../../../../../tests/helpers/fake-search.ts';
import type { Config } from '../../config.ts';
import {
  createSearch,
  SEARCH_NOT_CONFIGURED,
  SEARCH_NOT_CONFIGURED_OPERATOR,
  type Search,
  SearchError,
} from './search.ts';

let fake: FakeSearch;

beforeEach(async () => {
  fake = await startFakeSearch();
});
afterEach(async () => {
  await fake.close();
});

type SearchConfig = Config['search'];

const config = (over: Partial<SearchConfig>): SearchConfig => ({
  braveUrl: fake.braveUrl,
  tavilyUrl: fake.tavilyUrl,
  order: ['searxng', 'brave', 'tavily'],
  ...over,
});

function mustCreate(c: SearchConfig, deps?: Parameters<typeof createSearch>[1]): Search {
  const search = createSearch(c, deps);
  if (!search) throw new Error('expected a configured search');
  return search;
}

/** The rejection of `promise`, which must be a SearchError. */
async function failure(promise: Promise<unknown>): Promise<SearchError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the search to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SearchError);
  return err as SearchError;
}

const params = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);
const path = (url: string) => new URL(url, 'http://x').pathname;

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const PAGES = fakeResults('http://127.0.0.1:9/', ['/a', '/b', '/c']);

describe('each provider speaks its real API', () => {
  it('SearXNG: GET /search with q and format=json only, results parsed', async () => {
    fake.onSearch(() => PAGES);
    const search = mustCreate(config({ searxngUrl: fake.searxngUrl }));
    expect(search.providers).toEqual(['searxng']);

    const answer = await search.search('best e-bikes for commuting', { limit: 5 });

    expect(answer).toEqual({ provider: 'searxng', results: PAGES });
    expect(fake.requests).toHaveLength(1);
    const [req] = fake.requests;
    expect(req?.method).toBe('GET');
    expect(path(req?.url ?? '')).toBe('/search');
    expect(params(req?.url ?? '')).toEqual({ q: 'best e-bikes for commuting', format: 'json' });
    expect(req?.headers.accept).toBe('application/json');
  });

  it('SearXNG under a sub-path keeps the path, with or without a trailing slash', async () => {
    for (const base of [`${fake.searxngUrl}/searx`, `${fake.searxngUrl}/searx/`]) {
      const search = mustCreate(config({ searxngUrl: base }));
      await search.search('tides', { limit: 3 });
    }
    expect(fake.requests.map((r) => path(r.url))).toEqual(['/searx/search', '/searx/search']);
  });

  it('Brave: GET /res/v1/web/search with q and count, the key in X-Subscription-Token; markup removed', async () => {
    fake.onSearch(() => [
      {
        url: 'https://example.com/bikes',
        title: 'E-bikes &amp; commuting',
        snippet: 'The <strong>best</strong> e-bikes for a city&#x27;s hills.',
      },
    ]);
    const search = mustCreate(config({ braveApiKey: fake.braveKey }));

    const answer = await search.search('e-bikes', { limit: 7 });

    expect(answer).toEqual({
      provider: 'brave',
      results: [
        {
          url: 'https://example.com/bikes',
          title: 'E-bikes & commuting',
          snippet: "The best e-bikes for a city's hills.",
        },
      ],
    });
    const [req] = fake.requests;
    expect(req?.method).toBe('GET');
    expect(path(req?.url ?? '')).toBe('/res/v1/web/search');
    expect(params(req?.url ?? '')).toEqual({ q: 'e-bikes', count: '7' });
    expect(req?.headers['x-subscription-token']).toBe(fake.braveKey);
    expect(req?.headers.accept).toBe('application/json');
  });

  it('Brave with no web results (the field is left out) is an empty answer', async () => {
    fake.onSearch(() => []);
    const search = mustCreate(config({ braveApiKey: fake.braveKey, tavilyApiKey: fake.tavilyKey }));
    expect(await search.search('zxqv', { limit: 5 })).toEqual({ provider: 'brave', results: [] });
    expect(fake.requests.map((r) => r.provider)).toEqual(['brave']);
  });

  it('Tavily: POST /search with exactly query, max_results and search_depth, the key as a Bearer token', async () => {
    fake.onSearch(() => PAGES);
    const search = mustCreate(config({ tavilyApiKey: fake.tavilyKey }));

    const answer = await search.search('heat pumps in old houses', { limit: 4 });

    expect(answer).toEqual({ provider: 'tavily', results: PAGES });
    const [req] = fake.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/search');
    expect(req?.headers.authorization).toBe(`Bearer ${fake.tavilyKey}`);
    expect(req?.headers['content-type']).toBe('application/json');
    // Nothing but the query travels: no key in the body, no other fields.
    expect(req?.body).toEqual({ query: 'heat pumps in old houses', max_results: 4, search_depth: 'basic' });
  });

  it('asks Brave and Tavily for at most 20 results', async () => {
    const search = mustCreate(config({ braveApiKey: fake.braveKey, order: ['brave'] }));
    await search.search('x', { limit: 50 });
    const tavily = mustCreate(config({ tavilyApiKey: fake.tavilyKey, order: ['tavily'] }));
    await tavily.search('x', { limit: 50 });
    expect(params(fake.requests[0]?.url ?? '').count).toBe('20');
    expect(fake.requests[1]?.body?.max_results).toBe(20);
  });
});

describe('results', () => {
  it('keeps only http(s) addresses, once each, trimmed, at most `limit`', async () => {
    fake.onSearch(() => [
      { url: 'javascript:alert(1)', title: 'Script', snippet: '' },
      { url: 'ftp://example.com/file', title: 'FTP', snippet: '' },
      { url: 'https://example.com/one', title: '  One \n  title ', snippet: '  a\n\tsnippet  ' },
      { url: 'https://example.com/one', title: 'One again', snippet: '' },
      { url: 'http://example.org/two', title: '   ', snippet: 'two' },
      { url: 'https://example.net/three', title: 'Three', snippet: '' },
      { url: 'https://example.net/four', title: 'Four', snippet: '' },
    ]);
    for (const provider of ['searxng', 'brave', 'tavily'] as const) {
      const search = mustCreate(
        config({
          searxngUrl: fake.searxngUrl,
          braveApiKey: fake.braveKey,
          tavilyApiKey: fake.tavilyKey,
          order: [provider],
        }),
      );
      const { results } = await search.search('q', { limit: 3 });
      expect(results, provider).toEqual([
        { url: 'https://example.com/one', title: 'One title', snippet: 'a snippet' },
        { url: 'http://example.org/two', title: 'example.org', snippet: 'two' },
        { url: 'https://example.net/three', title: 'Three', snippet: '' },
      ]);
    }
  });

  it('sends a long query cut to 400 characters on a word boundary', async () => {
    const search = mustCreate(config({ searxngUrl: fake.searxngUrl }));
    const long = Array.from({ length: 45 }, (_, i) => `word${i}-${'x'.repeat(6)}`).join('   ');
    await search.search(long, { limit: 3 });
    const sent = fake.requests[0]?.query ?? '';
    expect(sent.length).toBeLessThanOrEqual(400);
    expect(long.replace(/\s+/g, ' ').startsWith(sent)).toBe(true);
    expect(sent.endsWith('x')).toBe(true);
  });
});

describe('order and fallback', () => {
  const all = () => config({ searxngUrl: fake.searxngUrl, braveApiKey: fake.braveKey, tavilyApiKey: fake.tavilyKey });

  it('tries providers in the configured order and stops at the first answer', async () => {
    const search = mustCreate({ ...all(), order: ['tavily', 'searxng'] });
    expect(search.providers).toEqual(['tavily', 'searxng']);
    const answer = await search.search('q', { limit: 3 });
    expect(answer.provider).toBe('tavily');
    expect(fake.requests.map((r) => r.provider)).toEqual(['tavily']);
  });

  it('an empty result list is an answer', async () => {
    fake.onSearch(() => []);
    expect(await mustCreate(all()).search('q', { limit: 3 })).toEqual({ provider: 'searxng', results: [] });
    expect(fake.requests.map((r) => r.provider)).toEqual(['searxng']);
  });

  it('a provider that is down hands over to the next', async () => {
    fake.onSearch((provider) =>
      provider === 'searxng'
        ? { status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } }
        : PAGES,
    );
    const answer = await mustCreate(all()).search('q', { limit: 3 });
    expect(answer).toEqual({ provider: 'brave', results: PAGES });
    expect(fake.requests.map((r) => r.provider)).toEqual(['searxng', 'brave']);
  });

  it('a provider nobody listens at hands over to the next', async () => {
    const port = await closedPort();
    const search = mustCreate({ ...all(), searxngUrl: `http://127.0.0.1:${port}` });
    const answer = await search.search('q', { limit: 3 });
    expect(answer.provider).toBe('brave');
  });

  it('SearXNG with no results because every engine failed hands over to the next', async () => {
    fake.onSearch((provider) =>
      provider === 'searxng'
        ? {
            status: 200,
            body: JSON.stringify({
              query: 'q',
              number_of_results: 0,
              results: [],
              answers: [],
              corrections: [],
              infoboxes: [],
              suggestions: [],
              unresponsive_engines: [
                ['google', 'CAPTCHA'],
                ['duckduckgo', 'timeout'],
              ],
            }),
          }
        : PAGES,
    );
    const answer = await mustCreate(all()).search('q', { limit: 3 });
    expect(answer.provider).toBe('brave');
  });

  it('when every provider fails, one error names each failure; retryable if any was', async () => {
    fake.setSearxngFormats(['html']);
    fake.onSearch(() => ({ status: 503, body: '{"detail":{"error":"Service unavailable"}}' }));
    const search = mustCreate({ ...all(), braveApiKey: 'wrong-key' });

    const err = await failure(search.search('q', { limit: 3 }));

    expect(err.errors.map((e) => [e.provider, e.kind])).toEqual([
      ['searxng', 'not_json'],
      ['brave', 'unauthorized'],
      ['tavily', 'unavailable'],
    ]);
    expect(err.retryable).toBe(true);
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('No search provider answered.');
    expect(err.message).toContain('SearXNG refused JSON output (403).');
    expect(err.message).toContain('Check BRAVE_API_KEY.');
    expect(err.message).toContain('Tavily is unavailable (503).');
  });

  it('is not retryable when no failure was', async () => {
    fake.setSearxngFormats(['html']);
    const search = mustCreate(config({ searxngUrl: fake.searxngUrl, braveApiKey: 'wrong-key' }));
    const err = await failure(search.search('q', { limit: 3 }));
    expect(err.errors).toHaveLength(2);
    expect(err.retryable).toBe(false);
  });

  it('a cancelled search stops at once and does not try the next provider', async () => {
    fake.onSearch(() => ({ delayMs: 10_000 }));
    const controller = new AbortController();
    const search = mustCreate(all());
    const pending = search.search('q', { limit: 3, signal: controller.signal });
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const reason = new Error('research cancelled');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(fake.requests.map((r) => r.provider)).toEqual(['searxng']);
  });
});

describe('failures say what to do', () => {
  it('SearXNG without json in search.formats: says exactly that', async () => {
    fake.setSearxngFormats(['html']);
    const err = await failure(mustCreate(config({ searxngUrl: fake.searxngUrl })).search('q', { limit: 3 }));
    expect(err).toMatchObject({ provider: 'searxng', kind: 'not_json', retryable: false });
    expect(err.message).toBe(
      'SearXNG refused JSON output (403). Add json to search.formats in its settings.yml and restart it.',
    );
  });

  it('a bad Brave key (422 SUBSCRIPTION_TOKEN_INVALID) is unauthorized and the key is never repeated', async () => {
    const err = await failure(mustCreate(config({ braveApiKey: 'BSA-wrong-key-123' })).search('q', { limit: 3 }));
    expect(err).toMatchObject({ provider: 'brave', kind: 'unauthorized', retryable: false });
    expect(err.message).toBe('Brave Search refused the API key (422). Check BRAVE_API_KEY.');
    expect(fake.requests).toHaveLength(0);
  });

  it('a bad Tavily key (401) is unauthorized', async () => {
    const err = await failure(mustCreate(config({ tavilyApiKey: 'tvly-wrong' })).search('q', { limit: 3 }));
    expect(err).toMatchObject({ provider: 'tavily', kind: 'unauthorized', retryable: false });
    expect(err.message).toBe('Tavily refused the API key (401). Check TAVILY_API_KEY.');
  });

  it('a rate limit (429) is retryable and passes on Retry-After', async () => {
    fake.onSearch(() => ({
      status: 429,
      headers: { 'retry-after': '2' },
      body: JSON.stringify({
        type: 'ErrorResponse',
        error: { status: 429, code: 'RATE_LIMITED', detail: 'Request rate limit exceeded for plan.' },
      }),
    }));
    const err = await failure(mustCreate(config({ braveApiKey: fake.braveKey })).search('q', { limit: 3 }));
    expect(err).toMatchObject({ provider: 'brave', kind: 'rate_limited', retryable: true });
    expect(err.message).toBe('Brave Search refused the search: too many requests (429). Try again in 2 s.');
  });

  it("Tavily's used-up plan (432) is a limit that retrying will not lift", async () => {
    fake.onSearch(() => ({
      status: 432,
      body: '{"detail":{"error":"This request exceeds your plan\'s set usage limit."}}',
    }));
    const err = await failure(mustCreate(config({ tavilyApiKey: fake.tavilyKey })).search('q', { limit: 3 }));
    expect(err).toMatchObject({ provider: 'tavily', kind: 'rate_limited', retryable: false });
  });

  it('a provider that does not answer in time is unavailable (retryable)', async () => {
    fake.onSearch(() => ({ delayMs: 10_000 }));
    const search = mustCreate(config({ tavilyApiKey: fake.tavilyKey }), { timeoutMs: 200 });
    const err = await failure(search.search('q', { limit: 3 }));
    expect(err).toMatchObject({ provider: 'tavily', kind: 'unavailable', retryable: true });
    expect(err.message).toBe('Tavily did not answer within 200 ms.');
  });

  it('an answer that is not JSON, or JSON of another shape, is a bad response', async () => {
    const search = mustCreate(config({ searxngUrl: fake.searxngUrl }));
    fake.onSearch(() => ({
      status: 200,
      body: '<html>Welcome to nginx</html>',
      headers: { 'content-type': 'text/html' },
    }));
    const notJson = await failure(search.search('q', { limit: 3 }));
    expect(notJson).toMatchObject({ kind: 'bad_response', retryable: false });
    expect(notJson.message).toBe('SearXNG answered with something other than JSON.');

    fake.onSearch(() => ({ status: 200, body: '{"results":"none"}' }));
    const wrongShape = await failure(search.search('q', { limit: 3 }));
    expect(wrongShape).toMatchObject({ kind: 'bad_response', message: 'SearXNG answered in an unexpected shape.' });

    fake.onSearch(() => ({ status: 200, body: '{"results":[{"title":"no url"}]}' }));
    const noUrls = await failure(search.search('q', { limit: 3 }));
    expect(noUrls.kind).toBe('bad_response');
  });

  it('logs failures without the query or the key', async () => {
    const lines: unknown[] = [];
    const log = {
      warn: (...args: unknown[]) => lines.push(args),
      info: (...args: unknown[]) => lines.push(args),
      debug: (...args: unknown[]) => lines.push(args),
    } as unknown as FastifyBaseLogger;
    fake.onSearch((provider) => (provider === 'brave' ? { status: 500, body: '{}' } : PAGES));
    const search = mustCreate(config({ braveApiKey: fake.braveKey, tavilyApiKey: fake.tavilyKey }), { log });

    const answer = await search.search('my private topic', { limit: 3 });

    expect(answer.provider).toBe('tavily');
    expect(lines).toHaveLength(1);
    const logged = JSON.stringify(lines);
    expect(logged).toContain('Brave Search is unavailable (500).');
    expect(logged).not.toContain('private topic');
    expect(logged).not.toContain(fake.braveKey);
  });
});

describe('configuration', () => {
  it('with no provider configured there is no search; users read whom to ask, the operator how to set it up', () => {
    expect(createSearch(config({}))).toBeNull();
    expect(SEARCH_NOT_CONFIGURED).toContain('Ask whoever runs this Daybook');
    expect(SEARCH_NOT_CONFIGURED).not.toMatch(/[A-Z]{3,}_[A-Z_]{3,}|settings\.yml/);
    for (const name of ['SEARXNG_URL', 'BRAVE_API_KEY', 'TAVILY_API_KEY', 'search.formats']) {
      expect(SEARCH_NOT_CONFIGURED_OPERATOR).toContain(name);
    }
  });

  it('a provider left out of the order is not used', () => {
    expect(createSearch(config({ braveApiKey: fake.braveKey, order: ['searxng', 'tavily'] }))).toBeNull();
    const search = mustCreate(config({ braveApiKey: fake.braveKey, tavilyApiKey: fake.tavilyKey, order: ['tavily'] }));
    expect(search.providers).toEqual(['tavily']);
  });
});
