// The Memories page's reads: a page, a search, a search's later pages, each with the user's memory
// version, and the rows written as the API's JSON by PostgreSQL.
import { MEMORY_TYPES } from '@daybook/contracts';
import type { Query } from '../../db/database.ts';

export interface ListOptions {
  deleted: boolean;
  search?: string;
  limit: number;
  offset: number;
}

// The Memories page's times as the API writes them (toISOString's form): PostgreSQL formats them
// faster than JavaScript parses them into Dates and formats those again (half the server's time
// for a page of 30 went there).
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The user's memory version (memory_counts, kept by triggers), as text: no row reads as 0. */
const VERSION = `coalesce((SELECT version FROM memory_counts WHERE user_id = $1), 0)::text`;

/** `text` as an ILIKE pattern matching it anywhere, its wildcards taken literally. */
const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const sqlText = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** presentMemory (memories.present.ts) in SQL: an unknown type reads as text, with its label. */
export const API_TYPE = `CASE WHEN memory_type IN (${MEMORY_TYPES.map((t) => sqlText(t.value)).join(', ')}) THEN memory_type ELSE 'text' END`;
const API_TYPE_LABEL = `CASE memory_type ${MEMORY_TYPES.map((t) => `WHEN ${sqlText(t.value)} THEN ${sqlText(t.label)}`).join(' ')} ELSE ${sqlText(MEMORY_TYPES.find((t) => t.value === 'text')?.label ?? 'Fact')} END`;
/** Columns a page's JSON is built from (not search_vector). */
const PAGE_COLUMNS = `id, key, data, memory_type, url, frequency_description, source, source_message_id,
  created_at, updated_at, deleted_at, deleted_reason`;
/**
 * The page's rows as the API's JSON array (TMemory objects, newest first), written by PostgreSQL:
 * the server then neither parses 30 rows into objects nor serialises them again, which was most
 * of its time for a page (issue 15).
 */
const pageJson = (at: string) => `coalesce(json_agg(json_build_object(
    'id', id, 'key', key, 'data', data, 'memory_type', ${API_TYPE}, 'memory_type_display', ${API_TYPE_LABEL},
    'url', url, 'frequency_description', frequency_description, 'source', source,
    'source_message_id', source_message_id, 'created_at', ${iso('created_at')}, 'updated_at', ${iso('updated_at')},
    'deleted_at', ${iso('deleted_at')}, 'deleted_reason', deleted_reason
  ) ORDER BY ${at} DESC, id DESC), '[]')::text`;

export function createMemoryPagesRepo(query: Query) {
  return {
    /**
     * A page and the count in one statement, straight to the driver: the page from the
     * memories_user_created or memories_user_deleted index, the count from memory_counts (kept by
     * triggers). Searches go to `search`.
     */
    async list(userId: number, { deleted, limit, offset }: Omit<ListOptions, 'search'>) {
      const state = deleted ? 'deleted_at IS NOT NULL' : 'deleted_at IS NULL';
      // Newest first; the id breaks ties so pages never overlap or skip. LIMIT and OFFSET as
      // sub-selects: as plain parameters PostgreSQL re-planned the prepared statement on every run
      // (planning cost more than running it); so it keeps one plan, by the index.
      const at = deleted ? 'deleted_at' : 'created_at';
      const [found] = await query<{ version: string; total: number; results: string }>(
        `SELECT ${VERSION} AS version,
           coalesce((SELECT ${deleted ? 'deleted' : 'active'} FROM memory_counts WHERE user_id = $1), 0) AS total,
           (SELECT ${pageJson(at)} FROM (
              SELECT ${PAGE_COLUMNS} FROM memories WHERE user_id = $1 AND ${state}
              ORDER BY ${at} DESC, id DESC LIMIT (SELECT $2::int) OFFSET (SELECT $3::int)
           ) page) AS results`,
        [userId, limit, offset],
        deleted ? 'daybook_memories_deleted_page' : 'daybook_memories_page',
      );
      return { version: found?.version ?? '0', results: found?.results ?? '[]', count: found?.total ?? 0 };
    },
    /** The user's memory version: what a kept page or search was read at must equal it to be used. */
    version: async (userId: number) =>
      (await query<{ version: string }>(`SELECT ${VERSION} AS version`, [userId], 'daybook_memory_version'))[0]
        ?.version ?? '0',
    /**
     * A search: every matching id in page order (for the caller to keep), the page's rows, and the
     * user's memory version they were read at, in one statement (one snapshot). Not a prepared
     * statement: the plan depends on the pattern (the trigram index or the user's rows).
     */
    async search(userId: number, { deleted, search, limit, offset }: ListOptions & { search: string }) {
      const state = deleted ? 'deleted_at IS NOT NULL' : 'deleted_at IS NULL';
      const at = deleted ? 'deleted_at' : 'created_at';
      const [found] = await query<{ version: string; ids: number[]; results: string }>(
        `WITH found AS MATERIALIZED (
           SELECT id, ${at} AS at FROM memories WHERE user_id = $1 AND ${state} AND (key ILIKE $4 OR data ILIKE $4)
         ), ordered AS (
           SELECT coalesce(array_agg(id ORDER BY at DESC, id DESC), '{}') AS ids FROM found
         )
         SELECT ${VERSION} AS version, o.ids,
           (SELECT ${pageJson(at)} FROM (
              SELECT ${PAGE_COLUMNS} FROM memories WHERE id = ANY (o.ids[$3 + 1 : $3 + $2])
           ) page) AS results
         FROM ordered o`,
        [userId, limit, offset, containsPattern(search)],
      );
      const ids = found?.ids ?? [];
      return { version: found?.version ?? '0', ids, results: found?.results ?? '[]', count: ids.length };
    },
    /**
     * The rows of `ids` (a page of a search made before), in that order, with the user's memory
     * version read in the same snapshot: the caller uses them only if the version has not changed.
     */
    async pageByIds(userId: number, ids: number[], deleted: boolean) {
      const at = deleted ? 'deleted_at' : 'created_at';
      const [found] = await query<{ version: string; results: string }>(
        `SELECT ${VERSION} AS version,
           (SELECT ${pageJson(at)} FROM (
              SELECT ${PAGE_COLUMNS} FROM memories WHERE user_id = $1 AND id = ANY ($2::int[])
           ) page) AS results`,
        [userId, ids],
        deleted ? 'daybook_memories_deleted_by_ids' : 'daybook_memories_by_ids',
      );
      return { version: found?.version ?? '0', results: found?.results ?? '[]' };
    },
  };
}
