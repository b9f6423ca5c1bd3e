// Answers that are waiting (answer_pending_at): the instance writing them keeps them alive, and a
// sweep answers those whose instance is gone with a note.
import type { Query } from '../../db/database.ts';
import { type ChatMessageRow, COLUMNS, NOW } from './chat.writes.repo.ts';

export function createChatPendingRepo(query: Query) {
  return {
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
  };
}
