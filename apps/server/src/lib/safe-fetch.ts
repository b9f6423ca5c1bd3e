// The one fetcher for URLs that a user, a model or a search result chose (research pages, later
// calendars). request-filtering-agent checks the address when the socket connects, so a name that
// resolves to a private address is refused even if it resolved to a public one a moment earlier.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

export type FetchErrorCode =
  | 'blocked'
  | 'bad_url'
  | 'too_many_redirects'
  | 'timeout'
  | 'too_large'
  | 'unsupported_type'
  | 'http_status'
  | 'network';

/** Why a fetch failed; `retryable` says whether trying again later may help. Never quotes the response body. */
export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    readonly retryable: boolean,
    /** The HTTP status, for code 'http_status'. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** The MIME type only, lower-case (no parameters). */
  contentType: string;
  text: string;
}

export interface SafeFetchInit {
  /** MIME types accepted (`text/*` works too); default HTML, XHTML and plain text. */
  accept?: string[];
  signal?: AbortSignal;
  /** Extra request headers; dropped when a redirect leaves the origin. */
  headers?: Record<string, string>;
}

export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<FetchedPage>;

export interface SafeFetchOptions {
  /** Host names, IP addresses and CIDR ranges that may be fetched although private (FETCH_ALLOW). */
  allow: string[];
  /** The whole fetch of one URL, redirects and body included (not the wait for a free slot). */
  timeoutMs: number;
  /** Cap on the body, before and after decompression. */
  maxBytes: number;
  userAgent: string;
  /** Requests at once to one host name (default 2) and in all (default 8); more wait their turn. */
  perHost?: number;
  total?: number;
  /** DNS resolution override (tests); the address it returns is checked like any other. */
  lookup?: LookupFunction;
}

export const DEFAULT_ACCEPT = ['text/html', 'application/xhtml+xml', 'text/plain'];
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** What is wrong with one FETCH_ALLOW entry, or null when it is a host name, an IP address or a CIDR range. */
export function allowEntryProblem(entry: string): string | null {
  try {
    parseAllowEntry(entry);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

function parseAllowEntry(raw: string): { host: string } | { range: Range } {
  const entry = raw
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (/^[0-9a-f:.]+\/\d+$/.test(entry)) {
    try {
      return { range: ipaddr.parseCIDR(entry) };
    } catch {
      throw new Error(`"${raw}" is not a valid CIDR range (like 192.168.1.0/24 or fd00::/8)`);
    }
  }
  if (isIP(entry)) {
    const address = ipaddr.parse(entry);
    return { range: [address, address.kind() === 'ipv4' ? 32 : 128] };
  }
  const host = entry.replace(/\.$/, '');
  if (!HOST_NAME.test(host)) throw new Error(`"${raw}" is not a host name, an IP address or a CIDR range`);
  return { host };
}

/**
 * Allowed names match the URL's host name, whatever it resolves to; allowed addresses and ranges
 * match URLs whose host is a literal address. Everything else goes through the filtering agent.
 */
function createAllowList(entries: string[]) {
  const hosts = new Set<string>();
  const ranges: Range[] = [];
  for (const entry of entries) {
    const parsed = parseAllowEntry(entry);
    if ('host' in parsed) hosts.add(parsed.host);
    else ranges.push(parsed.range);
  }
  return (hostname: string): boolean => {
    const host = hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    if (!isIP(host)) return hosts.has(host);
    const address = ipaddr.parse(host);
    return ranges.some((range) => range[0].kind() === address.kind() && address.match(range));
  };
}

type Release = () => void;

/** Slots per host and in all; waiters are served in order, each as soon as its host has room. */
function createSlots(perHost: number, total: number) {
  let active = 0;
  const byHost = new Map<string, number>();
  const waiting: Array<{ host: string; grant: (release: Release) => void }> = [];
  const fits = (host: string) => active < total && (byHost.get(host) ?? 0) < perHost;
  const pump = () => {
    for (let i = 0; i < waiting.length && active < total; ) {
      const waiter = waiting[i];
      if (waiter && fits(waiter.host)) {
        waiting.splice(i, 1);
        waiter.grant(take(waiter.host));
      } else i++;
    }
  };
  const take = (host: string): Release => {
    active++;
    byHost.set(host, (byHost.get(host) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active--;
      const left = (byHost.get(host) ?? 1) - 1;
      if (left) byHost.set(host, left);
      else byHost.delete(host);
      pump();
    };
  };
  return {
    acquire(host: string, signal: AbortSignal): Promise<Release> {
      signal.throwIfAborted();
      if (fits(host)) return Promise.resolve(take(host));
      return new Promise((resolve, reject) => {
        const waiter = {
          host,
          grant: (release: Release) => {
            signal.removeEventListener('abort', onAbort);
            resolve(release);
          },
        };
        const onAbort = () => {
          const at = waiting.indexOf(waiter);
          if (at >= 0) waiting.splice(at, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.push(waiter);
      });
    },
  };
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new FetchError('bad_url', base ? 'The redirect points to an invalid URL' : 'Not a valid URL', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('bad_url', `Only http and https URLs can be fetched, not ${url.protocol}`, false);
  }
  return url;
}

const mimeOf = (header: string | undefined) => (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

const accepts = (accept: string[], mime: string) =>
  accept.some((a) => a === mime || (a.endsWith('/*') && mime.startsWith(a.slice(0, -1))));

function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Unzip | zlib.BrotliDecompress | null {
  const enc = (encoding ?? '').trim().toLowerCase();
  // Lenient flushing, as browsers are, for bodies that end a little early.
  const lenient = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (enc === '' || enc === 'identity') return null;
  if (enc === 'gzip' || enc === 'x-gzip' || enc === 'deflate') return zlib.createUnzip(lenient);
  if (enc === 'br') return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
  throw new FetchError('unsupported_type', `Unsupported content encoding ${enc}`, false);
}

/** The charset named by the header, a byte order mark, or an HTML <meta> near the start; else UTF-8. */
function decodeText(bytes: Buffer, contentTypeHeader: string | undefined, mime: string): string {
  let label = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentTypeHeader ?? '')?.[1];
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) label = 'utf-8';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = 'utf-16be';
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) label = 'utf-16le';
  else if (!label && (mime === 'text/html' || mime === 'application/xhtml+xml')) {
    const head = bytes.subarray(0, 1024).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes); // an unknown label
  }
}

const tooLarge = (maxBytes: number) =>
  new FetchError('too_large', `The response is larger than ${Math.round(maxBytes / 1024)} KB`, false);

/** Reads the body while counting raw and decoded bytes; stops (and closes the socket) past the cap. */
async function readBody(res: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const decoder = decoderFor(res.headers['content-encoding']);
  const chunks: Buffer[] = [];
  let raw = 0;
  let decoded = 0;
  const countRaw = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      raw += chunk.length;
      if (raw > maxBytes) throw tooLarge(maxBytes);
      yield chunk;
    }
  };
  const collect = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      decoded += chunk.length;
      if (decoded > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  };
  if (decoder) await pipeline(res, countRaw, decoder, collect);
  else await pipeline(res, countRaw, collect);
  return Buffer.concat(chunks);
}

function classify(err: unknown, host: string): FetchError {
  if (err instanceof FetchError) return err;
  const error = err as NodeJS.ErrnoException;
  // request-filtering-agent refuses with this message, from the literal-address check or the lookup.
  if (/^DNS lookup .* is not allowed/.test(error.message ?? '')) {
    return new FetchError('blocked', `Refused to fetch ${host}: it is a private, local or reserved address`, false);
  }
  const code = error.code ?? '';
  if (code.startsWith('Z_') || code.startsWith('ERR__') || code === 'ERR_BROTLI_DECOMPRESSION_FAILED') {
    return new FetchError('network', `The response from ${host} could not be decompressed`, false);
  }
  if (code === 'ENOTFOUND') return new FetchError('network', `${host} was not found`, false);
  return new FetchError('network', `Could not fetch from ${host}${code ? ` (${code})` : ''}`, true);
}

export function createSafeFetch(options: SafeFetchOptions): SafeFetch {
  const isAllowed = createAllowList(options.allow);
  // No keep-alive: research reads many hosts once each, and idle sockets would outlive their use.
  const guarded = { http: new RequestFilteringHttpAgent(), https: new RequestFilteringHttpsAgent() };
  const open = { http: new http.Agent(), https: new https.Agent() };
  const slots = createSlots(options.perHost ?? 2, options.total ?? 8);

  function send(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<http.IncomingMessage> {
    const secure = url.protocol === 'https:';
    const agents = isAllowed(url.hostname) ? open : guarded;
    const request = secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(url, {
        method: 'GET',
        agent: secure ? agents.https : agents.http,
        headers,
        signal,
        ...(options.lookup ? { lookup: options.lookup } : {}),
      });
      req.once('response', resolve);
      req.once('error', reject);
      req.end();
    });
  }

  return async function safeFetch(rawUrl, init = {}) {
    const accept = init.accept ?? DEFAULT_ACCEPT;
    let url = parseUrl(rawUrl);
    init.signal?.throwIfAborted();
    const controller = new AbortController();
    const onAbort = () => controller.abort(init.signal?.reason);
    init.signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let callerHeaders = init.headers ?? {};
    try {
      for (let redirects = 0; ; redirects++) {
        const release = await slots.acquire(url.hostname, controller.signal);
        timer ??= setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, options.timeoutMs);
        try {
          const headers = {
            accept: accept.join(', '),
            ...callerHeaders,
            'user-agent': options.userAgent,
            'accept-encoding': 'gzip, deflate, br',
          };
          const res = await send(url, headers, controller.signal);
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          if (REDIRECTS.has(status) && location) {
            res.destroy();
            if (redirects >= MAX_REDIRECTS) {
              throw new FetchError('too_many_redirects', `More than ${MAX_REDIRECTS} redirects`, false);
            }
            const next = parseUrl(location, url);
            if (next.origin !== url.origin) callerHeaders = {};
            url = next;
            continue;
          }
          if (status < 200 || status > 299) {
            res.destroy();
            const retryable = status >= 500 || status === 429 || status === 408;
            throw new FetchError('http_status', `${url.host} answered HTTP ${status}`, retryable, status);
          }
          const contentType = mimeOf(res.headers['content-type']);
          if (!accepts(accept, contentType)) {
            res.destroy();
            throw new FetchError(
              'unsupported_type',
              `${url.host} sent ${contentType || 'no content type'}, not ${accept.join(', ')}`,
              false,
            );
          }
          const bytes = await readBody(res, options.maxBytes);
          const text = decodeText(bytes, res.headers['content-type'], contentType);
          return { url: url.href, status, contentType, text };
        } finally {
          release();
        }
      }
    } catch (err) {
      if (timedOut) throw new FetchError('timeout', `${url.host} took longer than ${options.timeoutMs} ms`, true);
      if (init.signal?.aborted) throw init.signal.reason;
      throw classify(err, url.host);
    } finally {
      clearTimeout(timer);
      init.signal?.removeEventListener('abort', onAbort);
    }
  };
}
