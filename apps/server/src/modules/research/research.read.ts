// The pipeline's read step: one page found, fetched through the safe fetcher and made readable; a
// page that cannot be read is skipped.
import type { FastifyBaseLogger } from 'fastify';
import type { ReadPage } from './citations.ts';

/** Shorter than this, an extracted page is a cookie wall or an error page, not a source. */
const MIN_PAGE_CHARS = 200;
const PAGE_TYPES = ['text/html', 'application/xhtml+xml', 'text/plain'];

/** The SSRF-safe fetcher. */
export type FetchPage = (
  url: string,
  init: { accept: string[]; signal?: AbortSignal },
) => Promise<{ url: string; contentType: string; text: string }>;

/** Readable markdown of a page, off the event loop. */
export type ExtractPage = (input: {
  body: string;
  contentType: string;
  url: string;
}) => Promise<{ title: string; markdown: string }>;

export function createPageReader(deps: { fetchPage: FetchPage; extract: ExtractPage; log: FastifyBaseLogger }) {
  const { log } = deps;

  return async function readPage(url: string, signal: AbortSignal): Promise<(ReadPage & { markdown: string }) | null> {
    try {
      const page = await deps.fetchPage(url, { accept: PAGE_TYPES, signal });
      const { title, markdown } = await deps.extract({ body: page.text, contentType: page.contentType, url: page.url });
      if (markdown.trim().length < MIN_PAGE_CHARS) return null;
      return { url: page.url, title: title.trim(), markdown };
    } catch (err) {
      if (signal.aborted) throw err;
      // A page that fails is skipped and counted; its address and reason stay out of the logs.
      log.debug({ code: (err as { code?: string }).code }, 'research page skipped');
      return null;
    }
  };
}

export type PageReader = ReturnType<typeof createPageReader>;
