// The chat_messages row as every chat repo reads it, and the message writes: a turn's messages and
// the messages other modules post.
import type { TChatChannel } from '@daybook/contracts';
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

export type ChatMessageRow = Omit<
  Awaited<ReturnType<PrismaClient['chatMessage']['findUniqueOrThrow']>>,
  'answerPendingAt' | 'clientId' | 'stopped' | 'postKey'
> & { stopped?: boolean };
/** A human message whose client id was already stored (a resend, maybe through another instance): the stored one. */
export type Stored<T> = T & { duplicate?: boolean };
export type Channel = TChatChannel;

// Every chat turn runs these, so they go straight to the driver (see Database.query).
export const COLUMNS = `id, user_id AS "userId", channel, author_type AS "authorType", message_type AS "messageType",
  raw_text AS "rawText", url, created_at AS "createdAt", reply_to_id AS "replyToId", stopped,
  window_start AS "windowStart"`;
// The database's clock, as UTC like Prisma's timestamps: every instance compares against the same one.
export const NOW = `(now() AT TIME ZONE 'UTC')`;

export function createChatWritesRepo(query: Query) {
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
    /** Marks where the model's view of the conversation now starts (assistant/prompt.window.ts). */
    async markWindowStart(userId: number, id: number): Promise<void> {
      await query('UPDATE chat_messages SET window_start = true WHERE id = $1 AND user_id = $2', [id, userId]);
    },
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
     * Stores a message another module posts, once per `key`: `created` is false when it was already
     * there. Null when the user is gone (deleted while the message was being written).
     */
    async post(data: {
      userId: number;
      key: string;
      authorType: 'assistant' | 'system';
      messageType: string;
      rawText: string;
      url?: string | null;
      /** When it was posted; the database's clock when absent. */
      at?: Date;
    }): Promise<{ row: ChatMessageRow; created: boolean } | null> {
      const [row] = await query<ChatMessageRow>(
        `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url, created_at, post_key)
         SELECT id, 'chat', $2, $3, $4, $5, COALESCE($6::timestamptz AT TIME ZONE 'UTC', ${NOW}), $7 FROM users WHERE id = $1
         ON CONFLICT (post_key) DO NOTHING RETURNING ${COLUMNS}`,
        [
          data.userId,
          data.authorType,
          data.messageType,
          data.rawText,
          data.url ?? null,
          data.at?.toISOString() ?? null,
          data.key,
        ],
      );
      if (row) return { row, created: true };
      // A statement of its own: it sees the row a concurrent post committed while this one waited.
      const [existing] = await query<ChatMessageRow>(`SELECT ${COLUMNS} FROM chat_messages WHERE post_key = $1`, [
        data.key,
      ]);
      return existing ? { row: existing, created: false } : null;
    },
  };
}
