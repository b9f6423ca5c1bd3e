// A chat turn's reads: what the answer to a new message or to one that waited its turn needs, the
// first in one round trip with the write that stores the message.
import { parseUtcTimestamp, type Query } from '../../db/database.ts';
import { type Channel, type ChatMessageRow, COLUMNS, NOW, type Stored } from './chat.writes.repo.ts';

export type JsonMessage = Omit<ChatMessageRow, 'createdAt'> & { createdAt: string };

/** Messages read as JSON, newest first, as rows oldest first. */
export const oldestFirst = (messages: JsonMessage[] | null | undefined): ChatMessageRow[] =>
  (messages ?? []).map((m) => ({ ...m, createdAt: parseUtcTimestamp(m.createdAt) })).reverse();

export function createChatTurnsRepo(
  query: Query,
  /** The stored message of a resent client id (chat.writes.repo.ts). */
  byClientId: (userId: number, clientId: string) => Promise<ChatMessageRow>,
) {
  return {
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
      return { human, before: oldestFirst(before), extra: rows ?? [] };
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
      return { before: oldestFirst(row?.before), extra: row?.extra ?? [] };
    },
  };
}
