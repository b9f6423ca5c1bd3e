// A local website on 127.0.0.1 for research tests and the bench: readable articles, a
// boilerplate-heavy news page, slow, huge, compressed, non-HTML and Latin-1 pages, redirect chains
// (also to refused addresses) and error statuses. The safe fetcher reaches it only when the test
// configuration allows 127.0.0.1 (FETCH_ALLOW).
//
// Paths:
//   /articles/{slug}         one per ARTICLES entry (e-bike-commuting, battery-care, bike-lanes,
//                            sourdough-starter, heat-pumps, balcony-garden, dark-sky-photography)
//   /news/dark-sky-photography  the same article amid cookie banner, menus, sidebar, ads and footer
//   /big/{i}                 ~100 KB long reads for the bench (see bigArticles)
//   /breakout                a page whose title and text close the model's <source> quote
//   /plain.txt               text/plain
//   /latin1, /latin1-meta    ISO-8859-1 bytes; charset in the header, or only in a <meta>
//   /compressed/{gzip|deflate|br}  an article with that Content-Encoding
//   /slow                    an article whose body stalls (2 s unless setDelay says otherwise)
//   /huge                    32 MB of HTML, streamed without Content-Length
//   /huge-gzip               a small gzip body that inflates to 32 MB
//   /image.png, /download.bin, /paper.pdf   non-HTML types
//   /redirect/{n}            n redirects, then /articles/e-bike-commuting (/redirect/3, /redirect/7)
//   /redirect-to-metadata, /redirect-to-loopback, /redirect-to-ftp   redirects to refused URLs
//   /error (500), /busy (429); anything else 404
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import {
  ARTICLES,
  type Article,
  BREAKOUT_ARTICLE,
  LATIN1_ARTICLE,
  renderArticle,
  renderBigArticle,
  renderBoilerplatePage,
} from './fake-site-pages.ts';

export { ARTICLES, BOILERPLATE, LATIN1_ARTICLE } from './fake-site-pages.ts';

export interface FakeSite {
  origin: string;
  url(path: string): string;
  /** Requests per path (without query). */
  hits: Map<string, number>;
  /** Responses written to the end, per path: a fetch that gave up early leaves its path out. */
  finished: Map<string, number>;
  /** Request headers of the last request per path. */
  headers: Map<string, IncomingHttpHeaders>;
  /** The most requests the site served at the same time. */
  readonly inFlightMax: number;
  /** Stalls the body of `path` (after its first kilobyte) for `ms`; 0 removes the delay. */
  setDelay(path: string, ms: number): void;
  /** Removes the delay of `path` and ends the bodies stalled on it now: a test decides when the page arrives. */
  release(path: string): void;
  /** Clears hits, finished and inFlightMax. */
  reset(): void;
  close(): Promise<void>;
}

/** Paths of `n` long reads of about 100 KB each, all different, for the bench. */
export function bigArticles(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `/big/${i}`);
}

const HUGE_BYTES = 32 * 1024 * 1024;
const HTML = 'text/html; charset=utf-8';

const article = (slug: string) => ARTICLES.find((a) => a.slug === slug) as Article;

/** The article's text as plain text: title, then sections. */
function plainText(a: Article): string {
  return [a.title, '', ...a.sections.flatMap((s) => [s.heading, '', ...s.paragraphs, ...(s.list ?? []), ''])].join(
    '\n',
  );
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

export async function startFakeSite(): Promise<FakeSite> {
  const hits = new Map<string, number>();
  const finished = new Map<string, number>();
  const headers = new Map<string, IncomingHttpHeaders>();
  const delays = new Map<string, number>([['/slow', 2000]]);
  const timers = new Set<NodeJS.Timeout>();
  /** Per path, how to end each body stalled on it now. */
  const stalled = new Map<string, Set<() => void>>();
  let inFlight = 0;
  let inFlightMax = 0;
  let origin = '';
  let bomb: Buffer | undefined;

  const bump = (map: Map<string, number>, path: string) => map.set(path, (map.get(path) ?? 0) + 1);

  function later(res: ServerResponse, ms: number, fn: () => void) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    res.once('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  }

  function send(res: ServerResponse, path: string, status: number, head: Record<string, string>, body: Buffer) {
    const delay = delays.get(path) ?? 0;
    res.writeHead(status, { 'content-length': String(body.length), ...head });
    if (!delay) {
      res.end(body);
      return;
    }
    // The head and a first piece arrive at once; the rest stalls, as on an overloaded server.
    res.write(body.subarray(0, 1024));
    const waiting = stalled.get(path) ?? new Set<() => void>();
    stalled.set(path, waiting);
    let ended = false;
    const finish = () => {
      waiting.delete(finish);
      if (ended) return;
      ended = true;
      res.end(body.subarray(1024));
    };
    waiting.add(finish);
    res.once('close', () => waiting.delete(finish));
    later(res, delay, finish);
  }

  const redirect = (res: ServerResponse, location: string) => {
    res.writeHead(302, { location, 'content-type': HTML });
    res.end('<p>Moved</p>');
  };

  function streamHuge(res: ServerResponse) {
    res.writeHead(200, { 'content-type': HTML });
    const piece = Buffer.from(`<p>${'The huge page keeps going with more of the same sentence. '.repeat(1000)}</p>\n`);
    let sent = 0;
    res.write('<!doctype html><html><head><title>A huge page</title></head><body>');
    const pump = () => {
      while (sent < HUGE_BYTES) {
        sent += piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end('</body></html>');
    };
    pump();
  }

  function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', origin);
    const path = url.pathname;
    bump(hits, path);
    headers.set(path, req.headers);
    inFlight++;
    inFlightMax = Math.max(inFlightMax, inFlight);
    res.once('finish', () => bump(finished, path));
    res.once('close', () => {
      inFlight--;
    });

    const html = (body: string, status = 200) => send(res, path, status, { 'content-type': HTML }, Buffer.from(body));
    const match = /^\/(articles|big|compressed|redirect)\/([^/]+)$/.exec(path);
    const [, kind, arg = ''] = match ?? [];

    if (path === '/') {
      const links = ARTICLES.map((a) => `<li><a href="/articles/${a.slug}">${a.title}</a></li>`).join('');
      return html(`<!doctype html><html><head><title>Field Notes</title></head><body><ul>${links}</ul></body></html>`);
    }
    if (kind === 'articles' && ARTICLES.some((a) => a.slug === arg)) return html(renderArticle(article(arg)));
    if (path === '/news/dark-sky-photography') return html(renderBoilerplatePage(article('dark-sky-photography')));
    if (kind === 'big' && /^\d+$/.test(arg)) return html(renderBigArticle(Number(arg)));
    if (path === '/slow') return html(renderArticle(article('e-bike-commuting')));
    if (path === '/breakout') return html(renderArticle(BREAKOUT_ARTICLE));
    if (path === '/plain.txt') {
      return send(
        res,
        path,
        200,
        { 'content-type': 'text/plain; charset=utf-8' },
        Buffer.from(plainText(article('heat-pumps'))),
      );
    }
    if (path === '/latin1' || path === '/latin1-meta') {
      const body = Buffer.from(renderArticle(LATIN1_ARTICLE, { lang: 'en', charset: 'iso-8859-1' }), 'latin1');
      const type = path === '/latin1' ? 'text/html; charset=ISO-8859-1' : 'text/html';
      return send(res, path, 200, { 'content-type': type }, body);
    }
    if (kind === 'compressed') {
      const page = Buffer.from(renderArticle(article('e-bike-commuting')));
      const encode = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync }[arg];
      if (encode) return send(res, path, 200, { 'content-type': HTML, 'content-encoding': arg }, encode(page));
    }
    if (path === '/huge') return streamHuge(res);
    if (path === '/huge-gzip') {
      bomb ??= gzipSync(Buffer.alloc(HUGE_BYTES, 'a'));
      return send(res, path, 200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, bomb);
    }
    if (path === '/image.png') return send(res, path, 200, { 'content-type': 'image/png' }, PNG);
    if (path === '/download.bin') return send(res, path, 200, { 'content-type': 'application/octet-stream' }, PNG);
    if (path === '/paper.pdf') return send(res, path, 200, { 'content-type': 'application/pdf' }, PDF);
    if (kind === 'redirect' && /^\d+$/.test(arg)) {
      const left = Number(arg) - 1;
      return redirect(res, left > 0 ? `/redirect/${left}` : '/articles/e-bike-commuting');
    }
    if (path === '/redirect-to-metadata') return redirect(res, 'http://169.254.169.254/latest/meta-data/');
    if (path === '/redirect-to-loopback') {
      return redirect(res, `http://127.0.0.2:${new URL(origin).port}/articles/e-bike-commuting`);
    }
    if (path === '/redirect-to-ftp') return redirect(res, 'ftp://127.0.0.1/pub/file.txt');
    if (path === '/error') return html('<h1>Internal Server Error</h1><p>Secret stack trace here.</p>', 500);
    if (path === '/busy') return html('<h1>Too Many Requests</h1>', 429);
    return html('<h1>Not Found</h1><p>There is no page here.</p>', 404);
  }

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    url: (path) => new URL(path, origin).href,
    hits,
    finished,
    headers,
    get inFlightMax() {
      return inFlightMax;
    },
    setDelay(path, ms) {
      if (ms > 0) delays.set(path, ms);
      else delays.delete(path);
    },
    release(path) {
      delays.delete(path);
      for (const finish of [...(stalled.get(path) ?? [])]) finish();
    },
    reset() {
      hits.clear();
      finished.clear();
      headers.clear();
      inFlightMax = inFlight;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
