import type { Query } from '../../db/database.ts';

export interface ChatSearchRow {
  id: number;
  authorType: 'human' | 'assistant';
  messageType: 'message' | 'markdown' | 'research_report';
  rawText: string;
  createdAt: Date;
}

/** The escaped text of a JSON key's string value; the same pattern as chat-search.snippet.ts's reportParts. */
const jsonString = (key: string) => String.raw`(regexp_match(raw_text, '"${key}"\s*:\s*"((?:[^"\\]|\\.)*)"'))[1]`;
const TITLES = String.raw`(SELECT string_agg(t.m[1], chr(10))
  FROM regexp_matches(raw_text, '"title"\s*:\s*"((?:[^"\\]|\\.)*)"', 'g') AS t(m))`;

/**
 * A research report's readable text (raw_text is its JSON): query, introduction, body, conclusion and
 * source titles, one a line, unescaped, never its keys or punctuation. Read with regular expressions,
 * not a jsonb cast, which would fail the whole search on one malformed report (PostgreSQL 15 has no
 * safe cast); in valid JSON, `"key":` is always a key. `\\` is held aside while the other escapes are
 * decoded; \u escapes (JSON.stringify writes them only for control characters) become spaces.
 */
const REPORT_TEXT = String.raw`replace(replace(replace(replace(replace(replace(replace(replace(
  regexp_replace(replace(concat_ws(chr(10), ${jsonString('query')}, ${jsonString('introduction')},
      ${jsonString('report')}, ${jsonString('conclusion')}, ${TITLES}), '\\', chr(1)),
    '\\u[0-9a-fA-F]{4}', ' ', 'g'),
  '\"', '"'), '\n', chr(10)), '\r', chr(13)), '\t', chr(9)), '\/', '/'), '\b', ' '), '\f', ' '), chr(1), '\')`;

/** Lower case without accents (NFD, combining marks removed; the same folding as chat-search.snippet.ts's). */
const fold = (text: string) =>
  `lower(regexp_replace(normalize(${text}, NFD), '[' || chr(768) || '-' || chr(879) || ']', '', 'g'))`;

/**
 * The text as searched, folded: a report's readable text, any other message's raw text. Text without
 * a non-ASCII character skips the normalising, which costs eight times a plain lower().
 */
const FOLDED = `CASE WHEN message_type = 'research_report' THEN ${fold(REPORT_TEXT)}
  WHEN octet_length(raw_text) = char_length(raw_text) THEN lower(raw_text) ELSE ${fold('raw_text')} END`;

/** What is searched: the user's and the assistant's words (daily messages too) and research reports, not notes. */
const SEARCHED = `author_type IN ('human', 'assistant') AND message_type IN ('message', 'markdown', 'research_report')`;

/** `folded` (already folded) as a LIKE pattern matching it anywhere, its wildcards taken literally. */
export const containsPattern = (folded: string) => `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function createChatSearchRepo(query: Query) {
  return {
    /**
     * Up to `limit` matching messages older than `before`, newest first, plus whether more exist.
     * No text index: the user's chat ids are walked newest first by the (user_id, channel, id) index,
     * each row read by its id and tested, until the page is full; a rare word costs one pass over
     * that user's messages, never anyone else's. Written so (the ids apart, each lookup fenced by
     * OFFSET 0) because with the filter inline PostgreSQL preferred walking the primary key over
     * every user's rows. A trigram index would tax each chat turn's inserts and still recheck other
     * users' rows for common words, and could not serve a report's text, computed here from its JSON.
     * Prepared, LIMIT as a sub-select: one plan, kept.
     */
    async search(userId: number, folded: string, limit: number, before?: number) {
      const params: unknown[] = [userId, containsPattern(folded), limit + 1];
      if (before !== undefined) params.push(before);
      const rows = await query<ChatSearchRow>(
        `SELECT m.* FROM
           (SELECT id FROM chat_messages WHERE user_id = $1 AND channel = 'chat' ${before === undefined ? '' : 'AND id < $4'}
            ORDER BY id DESC OFFSET 0) mine,
           LATERAL (SELECT id, author_type AS "authorType", message_type AS "messageType", raw_text AS "rawText",
              created_at AS "createdAt"
            FROM chat_messages WHERE id = mine.id AND ${SEARCHED} AND ${FOLDED} LIKE $2 OFFSET 0) m
         ORDER BY mine.id DESC LIMIT (SELECT $3::int)`,
        params,
        before === undefined ? 'daybook_chat_search' : 'daybook_chat_search_before',
      );
      return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
    },
  };
}

export type ChatSearchRepo = ReturnType<typeof createChatSearchRepo>;
