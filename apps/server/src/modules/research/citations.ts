// A report's [n] citations, checked against the pages that were actually read: a citation of any
// other page is dropped, and the rest are renumbered 1, 2, 3... in the order the report cites them.
import type { TResearchSource } from '@daybook/contracts';

export interface ReadPage {
  url: string;
  title: string;
}

/** The same page whatever its tracking parameters, fragment, letter case of the host or "www.". */
export function normalizeUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  url.hash = '';
  url.username = '';
  url.password = '';
  url.hostname = url.hostname.toLowerCase().replace(/^www\./, '');
  for (const key of [...url.searchParams.keys()]) {
    if (/^(utm_|fbclid$|gclid$|mc_|ref$|ref_src$)/i.test(key)) url.searchParams.delete(key);
  }
  url.searchParams.sort();
  const path = url.pathname.replace(/\/+$/, '') || '/';
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${path}${url.search}`;
}

// [1], [1, 2], [1][2], [1-3] (a range), with optional spaces.
const CITATION = /\[(\s*\d{1,3}(?:\s*(?:[,;–-]|\]\s*\[)\s*\d{1,3})*\s*)\]/g;

function expand(group: string): number[] {
  const numbers: number[] = [];
  for (const part of group.split(/\s*(?:[,;]|\]\s*\[)\s*/)) {
    const range = part.match(/^(\d+)\s*[–-]\s*(\d+)$/);
    if (range) {
      const from = Number(range[1]);
      const to = Number(range[2]);
      for (let n = from; n <= to && n - from < 30; n++) numbers.push(n);
    } else if (/^\d+$/.test(part.trim())) numbers.push(Number(part.trim()));
  }
  return numbers;
}

// A private-use character marks where a citation was removed, until the space before it goes too.
const REMOVED = '\uE000';

export interface CitedReport {
  texts: string[];
  sources: TResearchSource[];
  /** Citations that pointed at no page that was read, and were removed. */
  dropped: number;
}

/**
 * Rewrites the citations of `texts` (introduction, body, conclusion): `[n]` names the model's
 * n-th source, which must be one of `pages`. Valid ones become the page's number in the returned
 * sources (first cited, first numbered); the others are removed.
 */
export function checkCitations(
  texts: string[],
  modelSources: Array<{ url: string; title: string }>,
  pages: ReadPage[],
): CitedReport {
  const byUrl = new Map<string, ReadPage>();
  for (const page of pages) {
    const key = normalizeUrl(page.url);
    if (key && !byUrl.has(key)) byUrl.set(key, page);
  }
  const numberOf = new Map<ReadPage, number>();
  const sources: TResearchSource[] = [];
  let dropped = 0;
  const resolve = (n: number): number | null => {
    const source = modelSources[n - 1];
    const key = source ? normalizeUrl(source.url) : null;
    const page = key ? byUrl.get(key) : undefined;
    if (!page) return null;
    let number = numberOf.get(page);
    if (number === undefined) {
      number = sources.length + 1;
      numberOf.set(page, number);
      sources.push({ url: page.url, title: page.title.trim() || source?.title.trim() || page.url });
    }
    return number;
  };
  const rewritten = texts.map((text) =>
    text
      .replace(CITATION, (_match, group: string) => {
        const numbers: number[] = [];
        for (const n of expand(group)) {
          const m = resolve(n);
          if (m === null) dropped++;
          else if (!numbers.includes(m)) numbers.push(m);
        }
        return numbers.length ? numbers.map((m) => `[${m}]`).join('') : REMOVED;
      })
      // A removed citation takes the space before it along.
      .replace(/[ \t]*\uE000/g, ''),
  );
  return { texts: rewritten, sources, dropped };
}
