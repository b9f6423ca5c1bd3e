// Pages cut into chunks of about 1,000 characters, and the most relevant kept under a budget, so
// the report is written from what matters in 15 pages rather than from their first screens.

export const CHUNK_CHARS = 1000;
/** What the report writer reads at most: about 10,000 tokens of page text. */
export const CONTEXT_CHARS = 40_000;
/** No page fills the budget alone. */
export const MAX_CHUNKS_PER_PAGE = 6;

export interface Chunk {
  page: number;
  /** Position in its page. */
  index: number;
  text: string;
}

/** Splits markdown at paragraph, then sentence, then word boundaries into chunks of about `size`. */
export function chunkText(text: string, size = CHUNK_CHARS): string[] {
  // Each piece remembers whether it starts a paragraph, to be joined back with a blank line or a space.
  const pieces = text.split(/\n{2,}/).flatMap((paragraph) => {
    if (paragraph.length <= size) return [{ text: paragraph, starts: true }];
    // A long paragraph goes by sentences, and a sentence longer than a chunk by words.
    const parts = (paragraph.match(/[^.!?]+[.!?]+\s*|[^.!?]+$/g) ?? [paragraph]).flatMap((sentence) =>
      sentence.length <= size ? [sentence] : (sentence.match(new RegExp(`.{1,${size}}(\\s|$)`, 'gs')) ?? [sentence]),
    );
    return parts.map((part, i) => ({ text: part.trim(), starts: i === 0 }));
  });
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (!piece.text.trim()) continue;
    if (current && current.length + piece.text.length + 2 > size) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current}${piece.starts ? '\n\n' : ' '}${piece.text.trim()}` : piece.text.trim();
  }
  if (current) chunks.push(current);
  return chunks;
}

/**
 * Keeps chunks in `ranked` order (best first) until the budget is spent, at most
 * MAX_CHUNKS_PER_PAGE of a page, and always the first chunk of every page that has one left in the
 * budget (it names what the page is about). Returned in page order, then position.
 */
export function selectChunks(chunks: Chunk[], ranked: number[], budget = CONTEXT_CHARS): Chunk[] {
  const chosen = new Set<number>();
  const perPage = new Map<number, number>();
  let spent = 0;
  const take = (i: number) => {
    const chunk = chunks[i];
    if (!chunk || chosen.has(i)) return;
    const used = perPage.get(chunk.page) ?? 0;
    if (used >= MAX_CHUNKS_PER_PAGE || spent + chunk.text.length > budget) return;
    chosen.add(i);
    perPage.set(chunk.page, used + 1);
    spent += chunk.text.length;
  };
  // Each page's best chunk first, so every page read can be cited; then the best of the rest.
  const bestOfPage = new Map<number, number>();
  for (const i of ranked) {
    const page = chunks[i]?.page;
    if (page !== undefined && !bestOfPage.has(page)) bestOfPage.set(page, i);
  }
  for (const i of bestOfPage.values()) take(i);
  for (const i of ranked) take(i);
  return [...chosen].sort((a, b) => a - b).map((i) => chunks[i] as Chunk);
}

/** Chunks of one page that full-text search ranks at most (see rankingCandidates). */
export const RANKED_PER_PAGE = 2 * MAX_CHUNKS_PER_PAGE;

const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * The chunks worth ranking by PostgreSQL full-text search, by index: every chunk of a short page,
 * and of a long one the RANKED_PER_PAGE with the most occurrences of the query's words (weighted
 * by rarity across the chunks; a word's first five letters stand in for its stem). ts_rank_cd of
 * the OR query grows with those same occurrences, so its best chunks are among these. Ranking
 * every chunk is what costs: 15 pages of ~100 KB make ~1,400 chunks, 0.3-0.5 s of CPU on embedded
 * PGlite, which runs on the server's thread, against 50-100 ms with this step; over five queries,
 * 224 of the 227 chunks then chosen were the ones ranking every chunk chose.
 */
export function rankingCandidates(query: string, chunks: Chunk[], perPage = RANKED_PER_PAGE): number[] {
  // Words of one or two letters are mostly ones full-text search ignores (a, in, to, of).
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
  // "commuting" counts "commuters"; "bike" counts "bikes" but not "bikeshed".
  const starts = words.map((w) => w.slice(0, 5));
  const counts = chunks.map((chunk) => {
    const text = chunk.text.toLowerCase();
    return words.map((word, w) => {
      const start = starts[w] as string;
      let n = 0;
      for (let at = text.indexOf(start); at >= 0; at = text.indexOf(start, at + start.length)) {
        if (at > 0 && WORD_CHAR.test(text[at - 1] as string)) continue;
        if (word.length < 5) {
          let end = at + start.length;
          while (end < text.length && WORD_CHAR.test(text[end] as string)) end++;
          if (end - at - start.length > 3) continue;
        }
        n++;
      }
      return n;
    });
  });
  const rarity = words.map((_, w) => {
    const containing = counts.filter((c) => (c[w] ?? 0) > 0).length;
    return Math.log((chunks.length + 1) / (containing + 1));
  });
  const byPage = new Map<number, Array<{ i: number; score: number }>>();
  chunks.forEach((chunk, i) => {
    const score = (counts[i] as number[]).reduce((sum, n, w) => sum + n * (rarity[w] ?? 0), 0);
    const list = byPage.get(chunk.page) ?? [];
    list.push({ i, score });
    byPage.set(chunk.page, list);
  });
  const chosen: number[] = [];
  for (const list of byPage.values()) {
    const best =
      list.length <= perPage ? list : [...list].sort((a, b) => b.score - a.score || a.i - b.i).slice(0, perPage);
    chosen.push(...best.map((c) => c.i));
  }
  return chosen.sort((a, b) => a - b);
}
