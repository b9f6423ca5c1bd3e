// What writing a message reads from other modules' tables (reads only): the user, their interests,
// name and calendars, the message's researches, and the facts the onboarding's settings come from.
import type { Query } from '../../db/database.ts';

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

export function createDailyContextRepo(query: Query) {
  return {
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
  };
}
