// A daily message's row from the run's start to its delivery: each step is recorded once, so a
// retry repeats none of them.
import type { Query } from '../../db/database.ts';

export type DailyStatus = 'pending' | 'ready' | 'failed';

export interface DailyRow {
  id: number;
  userId: number;
  /** YYYY-MM-DD */
  localDate: string;
  status: DailyStatus;
  trigger: 'schedule' | 'now';
  messageText: string | null;
  notes: Record<string, string>;
  researchRequestedAt: Date | null;
  attempts: number;
  createdAt: Date;
  deliveredAt: Date | null;
  chatMessageId: number | null;
  emailClaimedAt: Date | null;
  emailedAt: Date | null;
}

export const COLUMNS = `id, user_id AS "userId", to_char(local_date, 'YYYY-MM-DD') AS "localDate", status, trigger,
  message_text AS "messageText", notes, research_requested_at AS "researchRequestedAt", attempts,
  created_at AS "createdAt", delivered_at AS "deliveredAt", chat_message_id AS "chatMessageId",
  email_claimed_at AS "emailClaimedAt", emailed_at AS "emailedAt"`;
/** A JS instant as the database's UTC timestamps (the clock is the service's, so tests can move it). */
export const AT = (n: number) => `($${n}::timestamptz AT TIME ZONE 'UTC')`;

export function createDailyMessagesRepo(query: Query) {
  return {
    async get(id: number): Promise<DailyRow | null> {
      const [row] = await query<DailyRow>(`SELECT ${COLUMNS} FROM daily_messages WHERE id = $1`, [id]);
      return row ?? null;
    },

    /** A user's written message (owner only: another user's id is not found). */
    async getOwned(userId: number, id: number): Promise<DailyRow | null> {
      const [row] = await query<DailyRow>(
        `SELECT ${COLUMNS} FROM daily_messages WHERE id = $1 AND user_id = $2 AND message_text IS NOT NULL`,
        [id, userId],
      );
      return row ?? null;
    },

    /** A run starts: counted, and marked so the sweeper leaves it alone. */
    async startRun(id: number, now: Date): Promise<DailyRow | null> {
      const [row] = await query<DailyRow>(
        `UPDATE daily_messages SET attempts = attempts + 1, run_at = ${AT(2)} WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, now.toISOString()],
      );
      return row ?? null;
    },

    /** A run is alive: the sweeper leaves its message alone. */
    heartbeat: (id: number, now: Date) =>
      query(`UPDATE daily_messages SET run_at = ${AT(2)} WHERE id = $1 AND status <> 'failed'`, [
        id,
        now.toISOString(),
      ]),

    /** True for the one run that gets to ask for the researches. */
    async markResearchRequested(id: number, now: Date): Promise<boolean> {
      const rows = await query<{ id: number }>(
        `UPDATE daily_messages SET research_requested_at = ${AT(2)} WHERE id = $1 AND research_requested_at IS NULL RETURNING id`,
        [id, now.toISOString()],
      );
      return rows.length > 0;
    },

    /** Stores the written message once: a second writer (a retry that overlapped) keeps the first. */
    async compose(id: number, text: string, notes: Record<string, string>, now: Date): Promise<DailyRow | null> {
      await query(
        `UPDATE daily_messages SET message_text = $2, notes = $3::jsonb, status = 'ready', composed_at = ${AT(4)}
         WHERE id = $1 AND message_text IS NULL`,
        [id, text, JSON.stringify(notes), now.toISOString()],
      );
      return this.get(id);
    },

    /** Records the chat message that delivered it (chat posts it once per daily message). */
    delivered: (id: number, chatMessageId: number, now: Date) =>
      query(
        `UPDATE daily_messages SET chat_message_id = $2, delivered_at = ${AT(3)} WHERE id = $1 AND chat_message_id IS NULL`,
        [id, chatMessageId, now.toISOString()],
      ),

    /** True for the one run that gets to hand the mail to SMTP. */
    async claimEmail(id: number, now: Date): Promise<boolean> {
      const rows = await query<{ id: number }>(
        `UPDATE daily_messages SET email_claimed_at = ${AT(2)} WHERE id = $1 AND email_claimed_at IS NULL RETURNING id`,
        [id, now.toISOString()],
      );
      return rows.length > 0;
    },

    /** SMTP refused it: the next run may try again. */
    releaseEmail: (id: number) =>
      query(`UPDATE daily_messages SET email_claimed_at = NULL WHERE id = $1 AND emailed_at IS NULL`, [id]),

    emailed: (id: number, now: Date) =>
      query(`UPDATE daily_messages SET emailed_at = ${AT(2)} WHERE id = $1`, [id, now.toISOString()]),

    /** Gives up on a message not yet in the chat (a written one too: the sweeper would keep sending it). */
    fail: (id: number, error: string) =>
      query(
        `UPDATE daily_messages SET status = 'failed', error = $2
         WHERE id = $1 AND (status = 'pending' OR (status = 'ready' AND chat_message_id IS NULL))`,
        [id, error],
      ),

    /** A failed message asked for again ("send now"): written anew by the next run. */
    retry: (id: number) =>
      query(`UPDATE daily_messages SET status = 'pending', error = NULL WHERE id = $1 AND status = 'failed'`, [id]),
  };
}
