// Tokens per user, purpose and day (model_usage), added to as the model reports them, and read back
// for the admin's report and a user's allowance.
import type { Query } from '../../db/database.ts';

export type Purpose = 'chat' | 'learning' | 'research' | 'daily';

export interface UsageTotals {
  calls: number;
  prompt: number;
  cached: number;
  completion: number;
}

const TODAY = `(now() AT TIME ZONE 'UTC')::date`;

/** Calls' tokens for one user, day (YYYY-MM-DD, UTC) and purpose. */
export interface UsageRow extends UsageTotals {
  userId: number;
  day: string;
  purpose: Purpose;
}
const SUMS = `sum(calls)::int AS calls, sum(prompt_tokens)::bigint AS prompt, sum(cached_tokens)::bigint AS cached,
  sum(completion_tokens)::bigint AS completion`;
type Sums = { [K in keyof UsageTotals]?: string | number | null };
/** bigint sums come back as text: numbers again (far below 2^53). */
const totals = <T extends Sums>(row: T): Omit<T, keyof UsageTotals> & UsageTotals => ({
  ...row,
  calls: Number(row.calls ?? 0),
  prompt: Number(row.prompt ?? 0),
  cached: Number(row.cached ?? 0),
  completion: Number(row.completion ?? 0),
});

export function createModelUsageRepo(query: Query) {
  return {
    /** Adds calls' tokens to the rows of their user, day and purpose (one row per key in `rows`). */
    async addMany(rows: UsageRow[]): Promise<void> {
      if (!rows.length) return;
      await query(
        `INSERT INTO model_usage (user_id, day, purpose, calls, prompt_tokens, cached_tokens, completion_tokens)
         SELECT t.u, t.d::date, t.p, t.c, t.pt, t.ct, t.co
         FROM unnest($1::int[], $2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::int[]) AS t(u, d, p, c, pt, ct, co)
         WHERE EXISTS (SELECT 1 FROM users WHERE id = t.u)
         ON CONFLICT (user_id, day, purpose) DO UPDATE SET
           calls = model_usage.calls + EXCLUDED.calls,
           prompt_tokens = model_usage.prompt_tokens + EXCLUDED.prompt_tokens,
           cached_tokens = model_usage.cached_tokens + EXCLUDED.cached_tokens,
           completion_tokens = model_usage.completion_tokens + EXCLUDED.completion_tokens`,
        [
          rows.map((r) => r.userId),
          rows.map((r) => r.day),
          rows.map((r) => r.purpose),
          rows.map((r) => r.calls),
          rows.map((r) => r.prompt),
          rows.map((r) => r.cached),
          rows.map((r) => r.completion),
        ],
      );
    },
    /** The tokens (prompt and completion) the user spent today, UTC. */
    async spentToday(userId: number): Promise<number> {
      const [row] = await query<{ n: string | null }>(
        `SELECT sum(prompt_tokens + completion_tokens)::bigint AS n FROM model_usage WHERE user_id = $1 AND day = ${TODAY}`,
        [userId],
      );
      return Number(row?.n ?? 0);
    },
    /** The last `days` days (today included): totals, by purpose, by day, and the users who spent most. */
    async report(days: number, top: number) {
      const since = `${TODAY} - ($1::int - 1)`;
      const [all] = await query<Sums>(`SELECT ${SUMS} FROM model_usage WHERE day >= ${since}`, [days]);
      const byPurpose = await query<Sums & { purpose: string }>(
        `SELECT purpose, ${SUMS} FROM model_usage WHERE day >= ${since} GROUP BY purpose ORDER BY purpose`,
        [days],
      );
      const byDay = await query<Sums & { day: string }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${SUMS} FROM model_usage WHERE day >= ${since} GROUP BY day ORDER BY day`,
        [days],
      );
      // Reads the accounts' table for the address: a report joins what it shows.
      const topUsers = await query<Sums & { userId: number; email: string }>(
        `SELECT u.id AS "userId", u.email, ${SUMS}
         FROM model_usage m JOIN users u ON u.id = m.user_id
         WHERE m.day >= ${since}
         GROUP BY u.id, u.email ORDER BY sum(m.prompt_tokens + m.completion_tokens) DESC, u.id LIMIT $2`,
        [days, top],
      );
      return {
        totals: totals<Sums>(all ?? {}),
        byPurpose: byPurpose.map(totals),
        byDay: byDay.map(totals),
        topUsers: topUsers.map(totals),
      };
    },
  };
}

export type ModelUsageRepo = ReturnType<typeof createModelUsageRepo>;
