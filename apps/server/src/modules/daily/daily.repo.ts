// Daily messages: the row unique on (user, local date) is the claim, and then the record of truth
// for writing and delivering that day's message. Hot paths go straight to the driver.
import type { Query } from '../../db/database.ts';
import type { ChatMessageRow } from '../chat/chat.repo.ts';

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

/** What writing a user's message needs to know about them. */
export interface DailyUser {
  id: number;
  email: string;
  isActive: boolean;
  verified: boolean;
  timeZone: string | null;
  dailyMessageTime: string;
  dailyMessageEmail: boolean;
  isDailyMessagePaused: boolean;
  locationName: string | null;
  locationCountry: string | null;
  latitude: number | null;
  longitude: number | null;
  temperatureUnit: string;
}

/** A time zone's local date and clock time at the tick's instant. */
export interface ZoneNow {
  tz: string;
  localDate: string;
  localTime: string;
}

const COLUMNS = `id, user_id AS "userId", to_char(local_date, 'YYYY-MM-DD') AS "localDate", status, trigger,
  message_text AS "messageText", notes, research_requested_at AS "researchRequestedAt", attempts,
  created_at AS "createdAt", delivered_at AS "deliveredAt", chat_message_id AS "chatMessageId",
  email_claimed_at AS "emailClaimedAt", emailed_at AS "emailedAt"`;
const CHAT_COLUMNS = `id, user_id AS "userId", channel, author_type AS "authorType", message_type AS "messageType",
  raw_text AS "rawText", url, created_at AS "createdAt", reply_to_id AS "replyToId"`;
/** A JS instant as the database's UTC timestamps (the clock is the service's, so tests can move it). */
const AT = (n: number) => `($${n}::timestamptz AT TIME ZONE 'UTC')`;
/** Who gets daily messages at all: active, primary address verified, not paused. */
const ELIGIBLE = `u.is_active AND NOT u.is_daily_message_paused
  AND EXISTS (SELECT 1 FROM email_addresses e WHERE e.user_id = u.id AND e.email = u.email AND e.verified)`;

export function createDailyRepo(query: Query) {
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

    async user(userId: number): Promise<DailyUser | null> {
      const [row] = await query<DailyUser>(
        `SELECT u.id, u.email, u.is_active AS "isActive",
           EXISTS (SELECT 1 FROM email_addresses e WHERE e.user_id = u.id AND e.email = u.email AND e.verified) AS verified,
           u.time_zone AS "timeZone", u.daily_message_time AS "dailyMessageTime",
           u.daily_message_email AS "dailyMessageEmail", u.is_daily_message_paused AS "isDailyMessagePaused",
           u.location_name AS "locationName", u.location_country AS "locationCountry", u.latitude, u.longitude,
           u.temperature_unit AS "temperatureUnit"
         FROM users u WHERE u.id = $1`,
        [userId],
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

    /** The researches asked for this message, in the order they were asked. */
    researchIds: async (id: number): Promise<number[]> =>
      (await query<{ id: number }>(`SELECT id FROM researches WHERE daily_message_id = $1 ORDER BY id`, [id])).map(
        (r) => r.id,
      ),

    /** How many of the message's researches are still queued or running. */
    async researchesOpen(id: number): Promise<number> {
      const [row] = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM researches WHERE daily_message_id = $1 AND status IN ('queued', 'running')`,
        [id],
      );
      return row?.n ?? 0;
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

    /** Posts the message to the chat and marks it delivered in one statement: at most once. */
    async postOnce(id: number, rawText: string, now: Date): Promise<ChatMessageRow | null> {
      const [row] = await query<ChatMessageRow>(
        `WITH target AS (
           SELECT id, user_id FROM daily_messages WHERE id = $1 AND chat_message_id IS NULL FOR UPDATE
         ), posted AS (
           INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, created_at)
           SELECT user_id, 'chat', 'assistant', 'markdown', $2, ${AT(3)} FROM target
           RETURNING ${CHAT_COLUMNS}
         ), marked AS (
           UPDATE daily_messages SET chat_message_id = (SELECT id FROM posted), delivered_at = ${AT(3)}
           WHERE id = $1 AND EXISTS (SELECT 1 FROM posted)
         )
         SELECT * FROM posted`,
        [id, rawText, now.toISOString()],
      );
      return row ?? null;
    },

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

    /** The user's interest memories, oldest first: the research topics, rotated by the caller. */
    interests: (userId: number) =>
      query<{ key: string; data: string }>(
        `SELECT key, data FROM memories WHERE user_id = $1 AND deleted_at IS NULL AND memory_type = 'interest'
         ORDER BY created_at, id LIMIT 50`,
        [userId],
      ),

    /** How many messages the user got before this one: where the topic rotation is. */
    async countBefore(userId: number, id: number): Promise<number> {
      const [row] = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM daily_messages WHERE user_id = $1 AND id < $2`,
        [userId, id],
      );
      return row?.n ?? 0;
    },

    /** What the message calls the user, if they told Daybook their name. */
    async preferredName(userId: number): Promise<string | null> {
      // The user's own name ("Name", "Preferred name", "Likes to be called"), not a pet's or a company's.
      const [row] = await query<{ data: string }>(
        `SELECT data FROM memories WHERE user_id = $1 AND deleted_at IS NULL
           AND (key ~* '^\\s*(my |user''?s )?(preferred |first |full |given |nick)?name\\s*$'
                OR key ~* 'preferred name|call(ed)? me|likes to be called')
         ORDER BY (key ~* 'preferred|call') DESC, updated_at DESC LIMIT 1`,
        [userId],
      );
      const name = row?.data.trim() ?? '';
      return name && name.length <= 60 ? name : null;
    },

    async hasCalendars(userId: number): Promise<boolean> {
      const rows = await query(`SELECT 1 FROM calendar_connections WHERE user_id = $1 LIMIT 1`, [userId]);
      return rows.length > 0;
    },

    /** Memories that can say where the user lives, their time zone and when they want the message. */
    settingFacts: (userId: number) =>
      query<{ key: string; data: string; memoryType: string }>(
        `SELECT key, data, memory_type AS "memoryType" FROM memories
         WHERE user_id = $1 AND deleted_at IS NULL
           AND (memory_type = 'location' OR key ILIKE ANY (ARRAY['%time zone%', '%timezone%', '%daily%', '%morning%', '%wake%', '%city%', '%live%', '%home%']))
         ORDER BY updated_at DESC LIMIT 20`,
        [userId],
      ),

    /** Settings the onboarding found; each only where the user has not set it (the browser's zone excepted). */
    applySettings: (
      userId: number,
      s: {
        timeZone?: string;
        dailyMessageTime?: string;
        location?: { name: string; countryCode: string | null; latitude: number; longitude: number };
      },
    ) =>
      query(
        `UPDATE users SET
           time_zone = COALESCE($2, time_zone),
           daily_message_time = COALESCE($3, daily_message_time),
           location_name = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $4 ELSE location_name END,
           location_country = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $5 ELSE location_country END,
           latitude = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $6 ELSE latitude END,
           longitude = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $7 ELSE longitude END
         WHERE id = $1`,
        [
          userId,
          s.timeZone ?? null,
          s.dailyMessageTime ?? null,
          s.location?.name ?? null,
          s.location?.countryCode ?? null,
          s.location?.latitude ?? null,
          s.location?.longitude ?? null,
        ],
      ),

    setPaused: (userId: number) => query(`UPDATE users SET is_daily_message_paused = true WHERE id = $1`, [userId]),
  };
}

export type DailyRepo = ReturnType<typeof createDailyRepo>;
