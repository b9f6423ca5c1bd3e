import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSite, startFakeSite } from '../../../../tests/helpers/fake-site.ts';
import { createSafeFetch, FetchError, type SafeFetchOptions } from './safe-fetch.ts';

let site: FakeSite;
let port: string;

beforeAll(async () => {
  site = await startFakeSite();
  port = new URL(site.origin).port;
});
afterAll(() => site?.close());
beforeEach(() => {
  site.reset();
  site.setDelay('/slow', 2000);
});

const USER_AGENT = 'Daybook/0.1 (self-hosted personal assistant; +http://localhost:3000)';

const fetcher = (options: Partial<SafeFetchOptions> = {}) =>
  createSafeFetch({ allow: [], timeoutMs: 5000, maxBytes: 5 * 1024 * 1024, userAgent: USER_AGENT, ...options });

/** DNS as the tests want it: these names map to fixed addresses, others resolve as usual (localhost). */
function fakeDns(names: Record<string, string>): LookupFunction {
  return (hostname, options, callback) => {
    const address = names[hostname];
    if (!address) {
      lookup(hostname, options, callback);
      return;
    }
    const family = isIP(address);
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

async function failure(promise: Promise<unknown>): Promise<FetchError> {
  const err = await promise.then(
    () => new Error('expected the fetch to fail'),
    (e: unknown) => e,
  );
  if (!(err instanceof FetchError)) throw err;
  return err;
}

describe('default refusals: the machine and its network are out of reach', () => {
  const safeFetch = fetcher({ lookup: fakeDns({ 'rebind.example': '127.0.0.1', 'site.example': '10.1.2.3' }) });

  // {port} is the local site's: a request that got through would reach it.
  const refused = [
    'http://127.0.0.1:{port}/articles/e-bike-commuting',
    'http://localhost:{port}/articles/e-bike-commuting',
    'http://[::1]:{port}/',
    'http://[::ffff:127.0.0.1]:{port}/',
    'http://2130706433:{port}/',
    'http://0x7f.1:{port}/',
    'http://0.0.0.0:{port}/',
    'http://[::]:{port}/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    // A name that resolves to loopback or a private address: checked at connect time.
    'http://rebind.example:{port}/articles/e-bike-commuting',
    'https://site.example/',
  ];
  const withPort = (url: string) => url.replace('{port}', port);

  it.each(refused)('refuses %s', async (url) => {
    const err = await failure(safeFetch(withPort(url)));
    expect(err.code).toBe('blocked');
    expect(err.retryable).toBe(false);
  });

  it('never sent a request to the local site while refusing', async () => {
    await Promise.allSettled(refused.map((url) => safeFetch(withPort(url))));
    expect(site.hits.size).toBe(0);
  });

  it.each([
    'ftp://example.org/file.txt',
    'file:///etc/passwd',
    'data:text/html,<p>hi</p>',
    'javascript:alert(1)',
    'not a url',
    '//example.org/',
  ])('refuses the URL %s as bad_url', async (url) => {
    const err = await failure(safeFetch(url));
    expect(err.code).toBe('bad_url');
    expect(err.retryable).toBe(false);
  });
});

describe('the allowlist (FETCH_ALLOW)', () => {
  it('lets an allowed address through and reads the page', async () => {
    const page = await fetcher({ allow: ['127.0.0.1'] })(site.url('/articles/e-bike-commuting'));
    expect(page).toMatchObject({ url: site.url('/articles/e-bike-commuting'), status: 200, contentType: 'text/html' });
    expect(page.text).toContain('E-bike commuting has grown quickly');
    expect(site.headers.get('/articles/e-bike-commuting')?.['user-agent']).toBe(USER_AGENT);
  });

  it('takes CIDR ranges and host names; a name allowed resolves where it likes', async () => {
    const cidr = fetcher({ allow: ['127.0.0.0/8', 'fd00::/8'] });
    expect((await cidr(site.url('/articles/heat-pumps'))).text).toContain('air-source heat pump');
    expect((await failure(cidr(`http://[::ffff:127.0.0.1]:${port}/`))).code).toBe('blocked');

    const named = fetcher({
      allow: ['Search.LAN'],
      lookup: fakeDns({ 'search.lan': '127.0.0.1', 'other.lan': '127.0.0.1' }),
    });
    expect((await named(`http://search.lan:${port}/articles/heat-pumps`)).status).toBe(200);
    expect((await failure(named(`http://other.lan:${port}/articles/heat-pumps`))).code).toBe('blocked');
    // Allowing a name does not allow its address.
    expect((await failure(named(site.url('/articles/heat-pumps')))).code).toBe('blocked');
  });

  it('rejects entries that are neither host names nor addresses nor ranges', () => {
    expect(() => fetcher({ allow: ['10.0.0.0/33'] })).toThrow(/not a valid CIDR/);
    expect(() => fetcher({ allow: ['http://nas.lan'] })).toThrow(/not a host name/);
  });
});

describe('redirects', () => {
  const safeFetch = fetcher({ allow: ['127.0.0.1'] });

  it('follows up to five, and reports the final URL', async () => {
    const page = await safeFetch(site.url('/redirect/3'));
    expect(page.url).toBe(site.url('/articles/e-bike-commuting'));
    expect(page.text).toContain('E-bike commuting');
    expect((await safeFetch(site.url('/redirect/5'))).status).toBe(200);
  });

  it('stops after five', async () => {
    for (const path of ['/redirect/6', '/redirect/7']) {
      const err = await failure(safeFetch(site.url(path)));
      expect(err.code).toBe('too_many_redirects');
    }
    expect(site.hits.get('/articles/e-bike-commuting')).toBeUndefined();
  });

  it('checks every hop: an allowed page cannot redirect to a refused address or scheme', async () => {
    expect((await failure(safeFetch(site.url('/redirect-to-metadata')))).code).toBe('blocked');
    expect((await failure(safeFetch(site.url('/redirect-to-loopback')))).code).toBe('blocked');
    expect((await failure(safeFetch(site.url('/redirect-to-ftp')))).code).toBe('bad_url');
    expect(site.hits.get('/redirect-to-loopback')).toBe(1);
  });
});

describe('limits', () => {
  it('times out a body that stalls, retryably', async () => {
    site.setDelay('/slow', 10_000);
    const err = await failure(fetcher({ allow: ['127.0.0.1'], timeoutMs: 300 })(site.url('/slow')));
    expect(err.code).toBe('timeout');
    expect(err.retryable).toBe(true);
    expect(site.finished.get('/slow')).toBeUndefined();
  });

  it('stops reading past the size cap without waiting for the whole body', async () => {
    const safeFetch = fetcher({ allow: ['127.0.0.1'] });
    const err = await failure(safeFetch(site.url('/huge')));
    expect(err.code).toBe('too_large');
    expect(err.retryable).toBe(false);
    // 32 MB never finished streaming: the fetcher hung up after 5 MB.
    expect(site.finished.get('/huge')).toBeUndefined();
    // The cap applies to the decompressed bytes too (a gzip bomb).
    expect((await failure(safeFetch(site.url('/huge-gzip')))).code).toBe('too_large');
    // A declared Content-Length over the cap is refused before reading.
    expect(
      (await failure(fetcher({ allow: ['127.0.0.1'], maxBytes: 2048 })(site.url('/articles/heat-pumps')))).code,
    ).toBe('too_large');
  });

  it('accepts only the content types asked for', async () => {
    const safeFetch = fetcher({ allow: ['127.0.0.1'] });
    for (const path of ['/image.png', '/download.bin', '/paper.pdf']) {
      const err = await failure(safeFetch(site.url(path)));
      expect(err.code).toBe('unsupported_type');
      expect(err.retryable).toBe(false);
    }
    const pdf = await safeFetch(site.url('/paper.pdf'), { accept: ['application/pdf'] });
    expect(pdf.contentType).toBe('application/pdf');
    const text = await safeFetch(site.url('/plain.txt'), { accept: ['text/*'] });
    expect(text.contentType).toBe('text/plain');
    expect(text.text).toContain('air-source heat pump');
  });

  it('reports HTTP errors with their status, retryable for 5xx and 429, without the body', async () => {
    const safeFetch = fetcher({ allow: ['127.0.0.1'] });
    const server = await failure(safeFetch(site.url('/error')));
    expect(server).toMatchObject({ code: 'http_status', status: 500, retryable: true });
    expect(server.message).not.toContain('Secret');
    expect(await failure(safeFetch(site.url('/busy')))).toMatchObject({ status: 429, retryable: true });
    expect(await failure(safeFetch(site.url('/no-such-page')))).toMatchObject({
      code: 'http_status',
      status: 404,
      retryable: false,
    });
  });

  it('honours an AbortSignal, before and during the fetch', async () => {
    const safeFetch = fetcher({ allow: ['127.0.0.1'] });
    const before = AbortSignal.abort(new Error('user left'));
    await expect(safeFetch(site.url('/articles/heat-pumps'), { signal: before })).rejects.toThrow('user left');

    const controller = new AbortController();
    const pending = safeFetch(site.url('/slow'), { signal: controller.signal });
    while (!site.hits.get('/slow')) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error('cancelled'));
    await expect(pending).rejects.toThrow('cancelled');
    expect(site.finished.get('/slow')).toBeUndefined();
  });
});

describe('decoding', () => {
  const safeFetch = fetcher({ allow: ['127.0.0.1'] });

  it('decodes the charset named by the header or by a <meta>', async () => {
    for (const path of ['/latin1', '/latin1-meta']) {
      const page = await safeFetch(site.url(path));
      expect(page.text).toContain('Café culture in Lisbon');
      expect(page.text).toContain('Graça');
      expect(page.text).not.toContain('\uFFFD');
    }
  });

  it('decompresses gzip, deflate and brotli', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const page = await safeFetch(site.url(`/compressed/${encoding}`));
      expect(page.text).toContain('E-bike commuting has grown quickly');
    }
    expect(site.headers.get('/compressed/br')?.['accept-encoding']).toBe('gzip, deflate, br');
  });
});

describe('concurrency', () => {
  it('sends at most perHost requests to one host at a time, queueing the rest', async () => {
    site.setDelay('/slow', 300);
    const safeFetch = fetcher({ allow: ['127.0.0.1'], perHost: 2 });
    const pages = await Promise.all(Array.from({ length: 6 }, () => safeFetch(site.url('/slow'))));
    expect(pages.every((p) => p.status === 200)).toBe(true);
    expect(site.hits.get('/slow')).toBe(6);
    expect(site.inFlightMax).toBe(2);
  });

  it('sends at most total requests at a time', async () => {
    site.setDelay('/slow', 300);
    const safeFetch = fetcher({ allow: ['127.0.0.1'], perHost: 10, total: 3 });
    await Promise.all(Array.from({ length: 7 }, () => safeFetch(site.url('/slow'))));
    expect(site.inFlightMax).toBe(3);
  });

  it('a request aborted while queued gives its turn away', async () => {
    site.setDelay('/slow', 300);
    const safeFetch = fetcher({ allow: ['127.0.0.1'], perHost: 1 });
    const first = safeFetch(site.url('/slow'));
    const controller = new AbortController();
    const queued = safeFetch(site.url('/slow'), { signal: controller.signal });
    const third = safeFetch(site.url('/slow'));
    controller.abort(new Error('not needed'));
    await expect(queued).rejects.toThrow('not needed');
    await Promise.all([first, third]);
    expect(site.hits.get('/slow')).toBe(2);
    expect(site.inFlightMax).toBe(1);
  });
});
