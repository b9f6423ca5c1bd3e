// Reading researches: one by id, the user's in the chat, how many come first, and ranking a page's
// chunks with full-text search.
import type { Query } from '../../db/database.ts';
import { COLUMNS, oneRow, type ResearchRow } from './research.rows.repo.ts';

export function createResearchReads(query: Query) {
  const one = oneRow(query);
  return {
    /** The user's research, or null when it is not theirs (or does not exist). */
    get: (userId: number, id: number) =>
      one(`SELECT ${COLUMNS} FROM researches WHERE id = $1 AND user_id = $2`, [id, userId]),

    byId: (id: number) => one(`SELECT ${COLUMNS} FROM researches WHERE id = $1`, [id]),

    /** The user's researches that come before this one (running, or queued earlier). */
    async ahead(userId: number, id: number): Promise<number> {
      const [row] = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM researches
         WHERE user_id = $1 AND id < $2 AND status IN ('queued', 'running')`,
        [userId, id],
      );
      return row?.n ?? 0;
    },

    /** The user's researches asked for in the chat that have not ended, oldest first. */
    active: (userId: number) =>
      query<ResearchRow>(
        `SELECT ${COLUMNS} FROM researches
         WHERE user_id = $1 AND origin = 'chat' AND status IN ('queued', 'running') ORDER BY id LIMIT 50`,
        [userId],
      ),

    /**
     * Ranks text chunks against a query with PostgreSQL full-text search (the ranking memories use):
     * any word of the query counts. Returns the chunks' indexes, best first.
     */
    async rankChunks(queryText: string, chunks: string[]): Promise<number[]> {
      const words = queryText.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      if (!words.length || !chunks.length) return chunks.map((_, i) => i);
      const [row] = await query<{ order: number[] }>(
        `SELECT coalesce(array_agg(i - 1 ORDER BY rank DESC, i), '{}') AS order FROM (
           SELECT c.i, ts_rank_cd(to_tsvector('english', c.t), q) AS rank
           FROM unnest($1::text[]) WITH ORDINALITY AS c(t, i), to_tsquery('english', $2) q
         ) ranked`,
        [chunks, [...new Set(words)].map((w) => `'${w}'`).join(' | ')],
      );
      return row?.order ?? chunks.map((_, i) => i);
    },
  };
}
