// Keeps the relevant parts of the pages read: their chunks ranked against the research's queries, by
// embeddings when the model has them, else by PostgreSQL full-text search.
import type { FastifyBaseLogger } from 'fastify';
import { modelFailure } from '../model/model.errors.ts';
import type { Llm } from '../model/model.types.ts';
import { type Chunk, rankingCandidates } from './chunks.ts';
import type { ResearchRepo } from './research.repo.ts';

export function createRanker(deps: {
  llm: Llm | null;
  repo: Pick<ResearchRepo, 'rankChunks'>;
  log: FastifyBaseLogger;
}) {
  const { llm, repo, log } = deps;

  /** The chunks' indexes, best first. */
  return async function rank(query: string, chunks: Chunk[], signal: AbortSignal): Promise<number[]> {
    const texts = chunks.map((c) => c.text);
    if (llm?.embed) {
      try {
        const vectors: number[][] = [];
        const all = [query, ...texts];
        for (let i = 0; i < all.length; i += 64) vectors.push(...(await llm.embed(all.slice(i, i + 64), signal)));
        const [q, ...rest] = vectors;
        if (q && rest.length === texts.length) {
          const scores = rest.map((v, i) => ({ i, score: cosine(q, v) }));
          return scores.sort((a, b) => b.score - a.score || a.i - b.i).map((s) => s.i);
        }
      } catch (err) {
        if (signal.aborted) throw err;
        log.warn(modelFailure(err), 'embeddings failed; ranking by full-text search instead');
      }
    }
    // Full-text ranking of every chunk of long pages is slow (see rankingCandidates): the likely
    // ones are ranked, the others follow in page order, as chunks that match nothing would.
    const candidates = rankingCandidates(query, chunks);
    const order = await repo.rankChunks(
      query,
      candidates.map((i) => texts[i] as string),
    );
    const ranked = order.map((j) => candidates[j] as number);
    const seen = new Set(ranked);
    return [...ranked, ...texts.map((_, i) => i).filter((i) => !seen.has(i))];
  };
}

export type Ranker = ReturnType<typeof createRanker>;

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
