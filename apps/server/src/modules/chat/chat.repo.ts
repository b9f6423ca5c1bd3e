import { parseUtcTimestamp, type Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

export type ChatMessageRow = Omit<
  Awaited<ReturnType<PrismaClient['chatMessage']['findUniqueOrThrow']>>,
  'answerPendingAt' | 'clientId' | 'stopped'
> & { stopped?: boolean };
/** A human message whose client id was already stored (a resend, maybe through another instance): the stored one. */
export type Stored<T> = T & { duplicate?: boolean };
export type Channel = 'chat' | 'onboarding';

// Every chat turn runs these, so they go straight to the driver (see Database.query).
const COLUMNS = `id, user_id AS "userId", channel, author_type AS "authorType", message_type AS "messageType",
  raw_text AS "rawText", url, created_at AS "createdAt", reply_to_id AS "replyToId", stopped`;
// The database's clock, as UTC like Prisma's timestamps: every instance compares against the same one.
const NOW = `(now() AT TIME ZONE 'UTC')`;

type JsonMessage = Omit<ChatMessageRow, 'createdAt'> & { createdAt: string };

export function createChatRepo(prisma: PrismaClient, query: Query) {
  /** The message a tab sent with this client id (the unique index guarantees at most one). */
  async function byClientId(userId: number, clientId: string): Promise<ChatMessageRow> {
    const [row] = await query<ChatMessageRow>(
      `SELECT ${COLUMNS} FROM chat_messages WHERE user_id = $1 AND client_id = $2`,
      [userId, clientId],
    );
    if (!row) throw new Error('no message with that client id');
    return row;
  }
  return {
    /**
     * Stores a message. A human message waits for its answer (answer_pending_at); an answer names
     * it in `replyToId`, which ends the wait in the same statement.
     */
    async create(data: {
      userId: number;
      channel: Channel;
      authorType: string;
      messageType: string;
      rawText: string;
      url?: string | null;
      replyToId?: number | null;
      clientId?: string | null;
      /** An answer the user stopped. */
      stopped?: boolean;
    }): Promise<Stored<ChatMessageRow>> {
      const [row] = await query<ChatMessageRow>(
        `WITH answered AS (
           UPDATE chat_messages SET answer_pending_at = NULL WHERE id = $7 AND user_id = $1 RETURNING id
         )
         INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url, reply_to_id, answer_pending_at, client_id, stopped)
         VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $3 = 'human' THEN ${NOW} END, $8, $9)
         ON CONFLICT (user_id, client_id) DO NOTHING RETURNING ${COLUMNS}`,
        [
          data.userId,
          data.channel,
          data.authorType,
          data.messageType,
          data.rawText,
          data.url ?? null,
          data.replyToId ?? null,
          data.clientId ?? null,
          data.stopped ?? false,
        ],
      );
      if (row) return row;
      if (data.clientId) return { ...(await byClientId(data.userId, data.clientId)), duplicate: true };
      throw new Error('insert returned no row');
    },
    byClientId,
    /**
     * A chat turn's first round trip: stores the human message and, in the same statement, reads the
     * `limit` messages before it and runs `extra`, another repo's query (e.g. the memories the reply
     * needs) built with its parameters numbered from `first`. Returns the stored message, the earlier
     * messages (oldest first) and `extra`'s rows as JSON objects.
     */
    async startTurn(
      data: { userId: number; channel: Channel; rawText: string; clientId?: string | null },
      limit: number,
      extra: (first: number) => { sql: string; params: unknown[] },
    ): Promise<{
      human: Stored<ChatMessageRow>;
      before: ChatMessageRow[];
      extra: Array<Record<string, unknown>>;
    }> {
      const params: unknown[] = [
        data.userId,
        data.channel,
        'human',
        'message',
        data.rawText,
        limit,
        data.clientId ?? null,
      ];
      const inner = extra(params.length + 1);
      const [row] = await query<Record<string, unknown>>(
        `WITH human AS (
           INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url, answer_pending_at, client_id)
           VALUES ($1, $2, $3, $4, $5, NULL, ${NOW}, $7)
           ON CONFLICT (user_id, client_id) DO NOTHING RETURNING ${COLUMNS}
         )
         SELECT human.*,
           (SELECT json_agg(m) FROM (SELECT ${COLUMNS} FROM chat_messages
              WHERE user_id = $1 AND channel = $2 AND id < human.id ORDER BY id DESC LIMIT $6) m) AS before,
           (SELECT json_agg(x) FROM (${inner.sql}) x) AS extra
         FROM human`,
        [...params, ...inner.params],
      );
      if (!row && data.clientId) {
        const human = await byClientId(data.userId, data.clientId);
        return { human: { ...human, duplicate: true }, before: [], extra: [] };
      }
      if (!row) throw new Error('insert returned no row');
      const {
        before,
        extra: rows,
        ...human
      } = row as unknown as ChatMessageRow & {
        before: JsonMessage[] | null;
        extra: Array<Record<string, unknown>> | null;
      };
      return {
        human,
        before: (before ?? []).map((m) => ({ ...m, createdAt: parseUtcTimestamp(m.createdAt) })).reverse(),
        extra: rows ?? [],
      };
    },
    /**
     * What the answer to a message that waited its turn needs: the `limit` latest messages of the
     * conversation, less the messages still waiting for an answer, oldest first, and `extra`'s rows
     * (see startTurn). The answers given meanwhile come after the message by id, and belong before it.
     */
    async turnContext(
      human: ChatMessageRow,
      limit: number,
      extra: (first: number) => { sql: string; params: unknown[] },
    ): Promise<{ before: ChatMessageRow[]; extra: Array<Record<string, unknown>> }> {
      const params: unknown[] = [human.userId, human.channel, human.id, limit];
      const inner = extra(params.length + 1);
      const [row] = await query<{ before: JsonMessage[] | null; extra: Array<Record<string, unknown>> | null }>(
        `SELECT
           (SELECT json_agg(m) FROM (SELECT ${COLUMNS} FROM chat_messages
              WHERE user_id = $1 AND channel = $2 AND id <> $3 AND answer_pending_at IS NULL
              ORDER BY id DESC LIMIT $4) m) AS before,
           (SELECT json_agg(x) FROM (${inner.sql}) x) AS extra`,
        [...params, ...inner.params],
      );
      return {
        before: (row?.before ?? []).map((m) => ({ ...m, createdAt: parseUtcTimestamp(m.createdAt) })).reverse(),
        extra: row?.extra ?? [],
      };
    },
    /**
     * A human message of the user answered again (Regenerate, Retry): marks it waiting for an answer
     * (so a crash meanwhile leaves a note) and reads the `limit` messages before it, oldest first.
     * Null when the user has no such human message on that channel.
     */
    /**
     * Whether the human message `id` may be answered again: it has no answer yet, or its latest reply
     * (answer or note) is the conversation's latest message. Otherwise (answered since, and the
     * conversation went on) a stale Retry or Regenerate would add a second answer far from it.
     */
    async mayAnswerAgain(data: {
      userId: number;
      channel: Channel;
      id: number;
    }): Promise<'yes' | 'answered' | 'unknown'> {
      const [row] = await query<{ answered: boolean; latest: boolean }>(
        `SELECT
           EXISTS (SELECT 1 FROM chat_messages a WHERE a.user_id = $1 AND a.channel = $2 AND a.id > q.id
                     AND a.reply_to_id = q.id AND a.author_type = 'assistant') AS answered,
           (SELECT max(r.id) FROM chat_messages r WHERE r.user_id = $1 AND r.channel = $2 AND r.id > q.id
              AND r.reply_to_id = q.id)
             IS NOT DISTINCT FROM (SELECT max(m.id) FROM chat_messages m WHERE m.user_id = $1 AND m.channel = $2) AS latest
         FROM chat_messages q WHERE q.id = $3 AND q.user_id = $1 AND q.channel = $2 AND q.author_type = 'human'`,
        [data.userId, data.channel, data.id],
      );
      if (!row) return 'unknown';
      return !row.answered || row.latest ? 'yes' : 'answered';
    },
    async answerAgain(
      data: { userId: number; channel: Channel; id: number },
      limit: number,
    ): Promise<{ human: ChatMessageRow; before: ChatMessageRow[] } | null> {
      const [row] = await query<Record<string, unknown>>(
        `WITH human AS (
           UPDATE chat_messages SET answer_pending_at = ${NOW}
           WHERE id = $3 AND user_id = $1 AND channel = $2 AND author_type = 'human' RETURNING ${COLUMNS}
         )
         SELECT human.*,
           (SELECT json_agg(m) FROM (SELECT ${COLUMNS} FROM chat_messages
              WHERE user_id = $1 AND channel = $2 AND id < human.id ORDER BY id DESC LIMIT $4) m) AS before
         FROM human`,
        [data.userId, data.channel, data.id, limit],
      );
      if (!row) return null;
      const { before, ...human } = row as unknown as ChatMessageRow & { before: JsonMessage[] | null };
      return {
        human,
        before: (before ?? []).map((m) => ({ ...m, createdAt: parseUtcTimestamp(m.createdAt) })).reverse(),
      };
    },
    /** Marks messages this instance still has to answer as alive (see answer_pending_at). */
    async keepPending(ids: number[]) {
      if (!ids.length) return;
      await query(
        `UPDATE chat_messages SET answer_pending_at = ${NOW} WHERE id = ANY($1::int[]) AND answer_pending_at IS NOT NULL`,
        [ids],
      );
    },
    /**
     * Human messages whose wait went stale before `staleSeconds` ago (the instance answering them is
     * gone) each get `note` as their answer, in one statement: an instance running this at the same
     * time claims none of them twice. Returns the notes with the question each answers.
     */
    async answerInterrupted(staleSeconds: number, note: string) {
      return query<ChatMessageRow & { question: string; learnFromChats: boolean }>(
        `WITH claimed AS (
           UPDATE chat_messages SET answer_pending_at = NULL
           WHERE answer_pending_at < ${NOW} - make_interval(secs => $1)
           RETURNING id, user_id, channel, raw_text
         ), notes AS (
           INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, reply_to_id)
           SELECT user_id, channel, 'system', 'system_message', $2, id FROM claimed ORDER BY id
           RETURNING ${COLUMNS}
         )
         SELECT notes.*, claimed.raw_text AS question, users.learn_from_chats AS "learnFromChats"
         FROM notes JOIN claimed ON claimed.id = notes."replyToId" JOIN users ON users.id = notes."userId"
         ORDER BY notes.id`,
        [staleSeconds, note],
      );
    },
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
    /** The first finish counts; a late second one (another tab) keeps that date. */
    markOnboarded: (userId: number, at: Date) =>
      prisma.user.updateMany({ where: { id: userId, onboardedAt: null }, data: { onboardedAt: at } }),
  };
}

export type ChatRepo = ReturnType<typeof createChatRepo>;
