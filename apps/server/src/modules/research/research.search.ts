// The pipeline's search step: every planned query searched at once, their results interleaved into
// the pages to read.
import type { FastifyBaseLogger } from 'fastify';
import { normalizeUrl } from './citations.ts';
import { FAILURES, isRetryable, ResearchFailure } from './research.failures.ts';
import { SearchError } from './search.ts';

const RESULTS_PER_QUERY = 5;

// Hosts whose pages are videos or social feeds: nothing an extractor can read.
const SKIPPED_HOSTS =
  /(^|\.)(youtube\.com|youtu\.be|vimeo\.com|tiktok\.com|facebook\.com|instagram\.com|twitter\.com|x\.com|threads\.net|linkedin\.com|pinterest\.com|reddit\.com|twitch\.tv|dailymotion\.com)$/i;

export interface SearchLike {
  search(
    query: string,
    opts: { limit: number; signal?: AbortSignal },
  ): Promise<{ provider: string; results: Array<{ url: string; title: string }> }>;
}

export function createWebSearch(deps: {
  search: SearchLike | null;
  /** What users read when no search provider is configured. */
  searchNotConfigured: string;
  log: FastifyBaseLogger;
}) {
  const { search, log } = deps;

  return async function searchAll(queries: string[], signal: AbortSignal, maxPages: number) {
    if (!search) throw new ResearchFailure(deps.searchNotConfigured, false);
    const settled = await Promise.allSettled(
      queries.map((q) => search.search(q, { limit: RESULTS_PER_QUERY, signal })),
    );
    const answered = settled.filter((s) => s.status === 'fulfilled');
    if (!answered.length) {
      const first = settled.find((s) => s.status === 'rejected')?.reason as Error | undefined;
      // What to fix is for whoever runs Daybook: the provider's words go to the log (never the query).
      const kind = first instanceof SearchError ? first.kind : undefined;
      log.warn(
        { provider: first instanceof SearchError ? first.provider : undefined, kind, reason: first?.message },
        'research: the web search failed',
      );
      throw new ResearchFailure(
        FAILURES.searchFailed(kind),
        settled.some((s) => s.status === 'rejected' && isRetryable(s.reason)),
      );
    }
    // Interleaved, so the first pages read come from every query, not all from the first.
    const lists = answered.map((s) => s.value.results);
    const seen = new Set<string>();
    const urls: Array<{ url: string; title: string }> = [];
    for (let rank = 0; rank < RESULTS_PER_QUERY; rank++) {
      for (const list of lists) {
        const result = list[rank];
        if (!result) continue;
        const key = normalizeUrl(result.url);
        if (!key || seen.has(key)) continue;
        seen.add(key);
        let host = '';
        try {
          host = new URL(result.url).hostname;
        } catch {
          continue;
        }
        if (SKIPPED_HOSTS.test(host)) continue;
        urls.push(result);
      }
    }
    return urls.slice(0, maxPages);
  };
}

export type WebSearch = ReturnType<typeof createWebSearch>;
