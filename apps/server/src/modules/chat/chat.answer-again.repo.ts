// A message answered again (Regenerate, Retry): whether it may be, and the write and read that start
// its new answer in one round trip.
import type { Query } from '../../db/database.ts';
import { type JsonMessage, oldestFirst } from './chat.turns.repo.ts';
import { type Channel, type ChatMessageRow, COLUMNS, NOW } from './chat.writes.repo.ts';

export function createChatAnswerAgainRepo(query: Query) {
  return {
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
    /**
     * A human message of the user answered again (Regenerate, Retry): marks it waiting for an answer
     * (so a crash meanwhile leaves a note) and reads the `limit` messages before it, oldest first.
     * Null when the user has no such human message on that channel.
     */
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
      return { human, before: oldestFirst(before) };
    },
  };
}
