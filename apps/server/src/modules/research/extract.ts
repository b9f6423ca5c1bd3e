// Readable markdown from fetched pages. HTML goes to a small pool of worker threads
// (extract.worker.mjs: Readability + Turndown over linkedom, then defuddle, then the body's text;
// at the lowest priority on Linux), so parsing a big page never stalls chat; a page that takes too
// long costs its worker, which is replaced. Plain text passes through.
import { channel } from 'node:diagnostics_channel';
import { createWorkerPool, WorkerPoolError } from '../../lib/worker-pool.ts';

/**
 * Published once per page a worker extracted: `{ url, ms, cpuMs }`, its time in the worker and the
 * worker's CPU time for it (NaN where the OS does not tell). The research bench reads it.
 */
export const extractTimings = channel('daybook:research:extract');

export interface ExtractInput {
  body: string;
  contentType: string;
  url: string;
}

export interface Extracted {
  title: string;
  markdown: string;
}

export interface Extractor {
  extract(input: ExtractInput): Promise<Extracted>;
  /** Stops the workers; pending and later extractions fail with code 'closed'. */
  close(): Promise<void>;
}

export interface ExtractorOptions {
  /** Worker threads (default min(2, cores)). */
  workers?: number;
  /** Time one page may take in a worker (default 5 s); past it the worker is terminated and replaced. */
  timeoutMs?: number;
  /** Pages waiting for a worker (default 100); beyond it extract fails with code 'busy'. */
  maxQueue?: number;
  /** Cap on the markdown of one page, in characters (default 200,000). */
  maxChars?: number;
}

export type ExtractErrorCode = 'timeout' | 'failed' | 'busy' | 'closed';

export class ExtractError extends Error {
  constructor(
    readonly code: ExtractErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractError';
  }
}

const WORKER_URL = new URL('./extract.worker.mjs', import.meta.url);

/** The first non-empty line, as a title for a plain-text page. */
const firstLine = (text: string) =>
  (
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? ''
  ).slice(0, 200);

export function createExtractor(options: ExtractorOptions = {}): Extractor {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxChars = options.maxChars ?? 200_000;
  const pool = createWorkerPool<
    { html: string; url: string; maxChars: number },
    { title?: string; markdown?: string; ms?: number; cpuMs?: number }
  >({
    url: WORKER_URL,
    label: 'extraction',
    workers: options.workers,
    timeoutMs,
    maxQueue: options.maxQueue ?? 100,
  });

  /** The pool's failures, named after the page. */
  function failure(err: unknown, url: string): never {
    if (!(err instanceof WorkerPoolError)) throw err;
    if (err.code === 'timeout') throw new ExtractError('timeout', `Extracting ${url} took longer than ${timeoutMs} ms`);
    if (err.code === 'busy') throw new ExtractError('busy', 'Too many pages are waiting to be extracted');
    if (err.code === 'closed') throw new ExtractError('closed', 'The extractor is closed');
    throw new ExtractError('failed', `Could not extract ${url}: ${err.message}`);
  }

  return {
    extract(input) {
      const type = input.contentType.toLowerCase();
      if (type === 'text/plain') {
        const text = input.body.replace(/\r\n?/g, '\n').trim();
        return Promise.resolve({ title: firstLine(text), markdown: text.slice(0, maxChars) });
      }
      const done = (r: { ms?: number; cpuMs?: number }) => {
        if (extractTimings.hasSubscribers) extractTimings.publish({ url: input.url, ms: r.ms, cpuMs: r.cpuMs });
      };
      return pool.run({ html: input.body, url: input.url, maxChars }).then(
        (r) => {
          done(r);
          return { title: r.title ?? '', markdown: r.markdown ?? '' };
        },
        (err: unknown) => failure(err, input.url),
      );
    },
    close: () => pool.close(),
  };
}
