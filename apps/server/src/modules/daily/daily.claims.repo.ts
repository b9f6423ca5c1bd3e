// The schedule's side of the daily_messages table: inserting a row unique on (user, local date) is
// the claim, so of two schedulers only one gets each; and the messages whose job went missing.
import type { Query } from '../../db/database.ts';
import { AT, COLUMNS, type DailyRow } from './daily.messages.repo.ts';

/** A time zone's local date and clock time at the tick's instant. */
export interface ZoneNow {
  tz: string;
  localDate: string;
  localTime: string;
}

/** Who gets daily messages at all: active, primary address verified, not paused. */
const ELIGIBLE = `u.is_active AND NOT u.is_daily_message_paused
  AND EXISTS (SELECT 1 FROM email_addresses e WHERE e.user_id = u.id AND e.email = u.email AND e.verified)`;

export function createDailyClaimsRepo(query: Query) {
  return {
    /** The time zones of users who may get a message (UTC for those who have none yet). */
    async zones(): Promise<string[]> {
      const rows = await query<{ tz: string }>(
        `SELECT DISTINCT COALESCE(u.time_zone, 'UTC') AS tz FROM users u WHERE ${ELIGIBLE}`,
      );
      return rows.map((r) => r.tz);
    },

    /**
     * Claims up to `limit` users whose local time has passed their delivery time and who have no
     * message for their local date: the insert is the claim, so of two schedulers only one gets
     * each (user, date). Users who signed up after today's delivery time start tomorrow.
     */
    claimDue(zones: ZoneNow[], now: Date, limit: number): Promise<Array<{ id: number; userId: number }>> {
      return query<{ id: number; userId: number }>(
        `WITH z AS (
           SELECT * FROM unnest($1::text[], $2::date[], $3::text[]) AS z(tz, local_date, local_time)
         )
         INSERT INTO daily_messages (user_id, local_date, created_at)
         SELECT u.id, z.local_date, ${AT(4)}
         FROM users u JOIN z ON z.tz = COALESCE(u.time_zone, 'UTC')
         WHERE ${ELIGIBLE}
           AND u.daily_message_time <= z.local_time
           AND u.created_at <= ${AT(4)} - (z.local_time::time - u.daily_message_time::time)
           AND NOT EXISTS (SELECT 1 FROM daily_messages d WHERE d.user_id = u.id AND d.local_date = z.local_date)
         ORDER BY u.id
         LIMIT $5
         ON CONFLICT (user_id, local_date) DO NOTHING
         RETURNING id, user_id AS "userId"`,
        [
          zones.map((z) => z.tz),
          zones.map((z) => z.localDate),
          zones.map((z) => z.localTime),
          now.toISOString(),
          limit,
        ],
      );
    },

    /** Today's message of a user asked for now: claimed here if the schedule has not yet. */
    async claimNow(userId: number, localDate: string, now: Date): Promise<{ row: DailyRow; claimed: boolean }> {
      const [claimed] = await query<DailyRow>(
        `INSERT INTO daily_messages (user_id, local_date, trigger, created_at) VALUES ($1, $2::date, 'now', ${AT(3)})
         ON CONFLICT (user_id, local_date) DO NOTHING RETURNING ${COLUMNS}`,
        [userId, localDate, now.toISOString()],
      );
      if (claimed) return { row: claimed, claimed: true };
      // Asked for now: a pause no longer stops the schedule's message if it is not yet in the chat.
      const [existing] = await query<DailyRow>(
        `UPDATE daily_messages SET trigger = CASE WHEN chat_message_id IS NULL THEN 'now' ELSE trigger END
         WHERE user_id = $1 AND local_date = $2::date RETURNING ${COLUMNS}`,
        [userId, localDate],
      );
      if (!existing) throw new Error('daily message vanished between claim and read');
      return { row: existing, claimed: false };
    },

    /**
     * Messages whose job went missing (a crash between the claim and the send, or a lost job):
     * pending ones not run for `staleSec`, and written ones not yet in the chat.
     */
    stalled: (now: Date, staleSec: number) =>
      query<{ id: number }>(
        `SELECT id FROM daily_messages
         WHERE (status = 'pending' OR (status = 'ready' AND chat_message_id IS NULL))
           AND COALESCE(run_at, created_at) < ${AT(1)} - make_interval(secs => $2)
           AND created_at > ${AT(1)} - interval '1 day'
         ORDER BY id LIMIT 500`,
        [now.toISOString(), staleSec],
      ),
  };
}
