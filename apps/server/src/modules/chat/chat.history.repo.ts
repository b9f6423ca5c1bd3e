// The conversation's history, a page at a time: as rows, and as the history endpoint's JSON.
import type { Query } from '../../db/database.ts';
import { type Channel, type ChatMessageRow, COLUMNS } from './chat.writes.repo.ts';

export function createChatHistoryRepo(query: Query) {
  return {
    /** Up to `limit` messages before `before` (newest first), plus whether more exist. */
    async page(userId: number, channel: Channel, limit: number, before?: number) {
      const rows = await query<ChatMessageRow>(
        `SELECT ${COLUMNS} FROM chat_messages
         WHERE user_id = $1 AND channel = $2 AND ($3::int IS NULL OR id < $3)
         ORDER BY id DESC LIMIT $4`,
        [userId, channel, before ?? null, limit + 1],
      );
      return { rows: rows.slice(0, limit).reverse(), hasMore: rows.length > limit };
    },
    /**
     * The same page as the API's JSON (TChatHistoryPage's `results` as text, oldest first, written
     * by PostgreSQL as presentMessage would: no url or reply_to when there is none), for the history
     * endpoint: the server neither parses 50 rows nor serialises them again. Prepared, LIMIT as a
     * sub-select, so PostgreSQL keeps one plan (by the (user_id, channel, id) index).
     */
    async pageJson(userId: number, channel: Channel, limit: number, before?: number) {
      const [found] = await query<{ results: string; hasMore: boolean }>(
        `WITH newest AS (
           SELECT id, author_type, message_type, raw_text, url, created_at, reply_to_id, stopped FROM chat_messages
           WHERE user_id = $1 AND channel = $2 ${before === undefined ? '' : 'AND id < $4'}
           ORDER BY id DESC LIMIT (SELECT $3::int + 1)
         )
         SELECT (SELECT count(*) FROM newest) > $3 AS "hasMore",
           (SELECT coalesce(json_agg(json_strip_nulls(json_build_object(
              'author_type', author_type, 'message_type', message_type, 'raw_text', raw_text, 'message_id', id,
              'timestamp', to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'url', nullif(url, ''), 'reply_to', nullif(reply_to_id, 0), 'stopped', CASE WHEN stopped THEN true END
            )) ORDER BY id), '[]')::text
            FROM (SELECT * FROM newest ORDER BY id DESC LIMIT (SELECT $3::int)) page) AS results`,
        before === undefined ? [userId, channel, limit] : [userId, channel, limit, before],
        before === undefined ? 'daybook_chat_page' : 'daybook_chat_page_before',
      );
      return { results: found?.results ?? '[]', hasMore: found?.hasMore ?? false };
    },
  };
}
