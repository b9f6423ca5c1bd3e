// The export file's memories, read in batches of EXPORT_BATCH and written as JSON by PostgreSQL.
import type { Query } from '../../db/database.ts';
import { API_TYPE } from './memories.pages.repo.ts';

/**
 * Memories per read of an export. Read whole, 5,000 memories held the event loop for about 40 ms
 * (Prisma's rows, then one JSON.stringify) and a loop of exports made another user's page 40x slower.
 */
export const EXPORT_BATCH = 500;

/** Where an export has got to: the last memory written, in (created_at, id) order. */
export interface ExportCursor {
  at: string;
  id: number;
}
export interface ExportBatch {
  /** The batch's memories as the file's JSON objects, comma-separated ('' for none). */
  items: string;
  count: number;
  /** Where the next batch starts; null after the last. */
  next: ExportCursor | null;
}

export function createMemoryExportRepo(query: Query) {
  return {
    /**
     * The next batch of the user's export, oldest first, after `after` (null: from the start), as
     * the file's memory objects (TMemoryExport's items, comma-separated JSON text written by
     * PostgreSQL, so the server neither builds nor serialises them), with where the next batch
     * starts (null after the last). From the memories_user_created index, read backwards.
     */
    async exportBatch(userId: number, after: ExportCursor | null): Promise<ExportBatch> {
      const [found] = await query<{ n: number; items: string | null; last_at: string | null; last_id: number | null }>(
        `SELECT count(*)::int AS n,
           string_agg(row_to_json(item)::text, ',' ORDER BY b.created_at, b.id) AS items,
           max(b.created_at)::text AS last_at,
           (array_agg(b.id ORDER BY b.created_at DESC, b.id DESC))[1] AS last_id
         FROM (
           SELECT id, created_at, key, data, ${API_TYPE} AS memory_type, url, frequency_description
           FROM memories
           WHERE user_id = $1 AND deleted_at IS NULL AND (created_at, id) > ($2::timestamp, $3::int)
           ORDER BY created_at, id LIMIT (SELECT $4::int)
         ) b, LATERAL (SELECT b.key, b.data, b.memory_type, b.url, b.frequency_description) item`,
        [userId, after?.at ?? '-infinity', after?.id ?? 0, EXPORT_BATCH],
        'daybook_memories_export',
      );
      const n = found?.n ?? 0;
      const next =
        n === EXPORT_BATCH && found?.last_at && found.last_id !== null
          ? { at: found.last_at, id: found.last_id }
          : null;
      return { items: found?.items ?? '', count: n, next };
    },
  };
}
