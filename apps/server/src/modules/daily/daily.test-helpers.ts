// Shared by the daily message tests: a clock the test moves, waiting for outcomes in the database
// with a deadline, and reading the rows the schedule and the generation job leave.
import { startSmtp, type TestSmtp } from '../../../../../tests/helpers/smtp.ts';
import { waitFor } from '../../../../../tests/helpers/wait-for.ts';
import type { Query } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';

/** A clock the test sets; starts at the real time (sessions and mail keys made now stay valid). */
export function testClock(): Clock & { set(iso: string | Date): void } {
  let current = new Date();
  return {
    now: () => current,
    set(at) {
      current = new Date(at);
    },
  };
}

/**
 * waitFor for outcomes read from the database: null (no row yet) counts as not yet, and so does a
 * read that throws (a row not there yet); the last error is told at the deadline.
 */
export function until<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
): Promise<T> {
  let last: unknown;
  return waitFor(
    () => `${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
    async () => {
      try {
        return (await check()) ?? undefined;
      } catch (err) {
        last = err;
        return undefined;
      }
    },
    { timeoutMs, intervalMs: 50 },
  );
}

export interface MessageRow {
  id: number;
  userId: number;
  localDate: string;
  status: string;
  messageText: string | null;
  notes: Record<string, string>;
  chatMessageId: number | null;
  deliveredAt: Date | null;
  emailClaimedAt: Date | null;
  emailedAt: Date | null;
  researchRequestedAt: Date | null;
  attempts: number;
}

const COLUMNS = `id, user_id AS "userId", to_char(local_date, 'YYYY-MM-DD') AS "localDate", status,
  message_text AS "messageText", notes, chat_message_id AS "chatMessageId", delivered_at AS "deliveredAt",
  email_claimed_at AS "emailClaimedAt", emailed_at AS "emailedAt",
  research_requested_at AS "researchRequestedAt", attempts`;

/** A user's daily message rows, oldest local date first. */
export const messagesOf = (query: Query, userId: number) =>
  query<MessageRow>(`SELECT ${COLUMNS} FROM daily_messages WHERE user_id = $1 ORDER BY local_date`, [userId]);

export async function messageRow(query: Query, id: number): Promise<MessageRow> {
  const [row] = await query<MessageRow>(`SELECT ${COLUMNS} FROM daily_messages WHERE id = $1`, [id]);
  if (!row) throw new Error(`no daily message ${id}`);
  return row;
}

/** Which local dates each of `userIds` has a message for. */
export async function datesOf(query: Query, userIds: number[]): Promise<Record<number, string[]>> {
  const out: Record<number, string[]> = Object.fromEntries(userIds.map((id) => [id, []]));
  const rows = await query<{ userId: number; localDate: string }>(
    `SELECT user_id AS "userId", to_char(local_date, 'YYYY-MM-DD') AS "localDate" FROM daily_messages
     WHERE user_id = ANY($1::int[]) ORDER BY local_date, id`,
    [userIds],
  );
  for (const r of rows) out[r.userId]?.push(r.localDate);
  return out;
}

/** Accounts made before `at` (the schedule gives nothing to an account younger than today's delivery time). */
export const backdate = (query: Query, userIds: number[], at = '2026-01-01T00:00:00Z') =>
  query(`UPDATE users SET created_at = $2::timestamptz AT TIME ZONE 'UTC' WHERE id = ANY($1::int[])`, [userIds, at]);

/** Every other user of the database stops getting messages, so a tick's count is this test's alone. */
export const retireOthers = (query: Query, keep: number[]) =>
  query(`UPDATE users SET is_daily_message_paused = true WHERE NOT (id = ANY($1::int[]))`, [keep]);

/** The chat messages a daily message was posted as (its link starts them). */
export const dailyChatMessages = (query: Query, userId: number) =>
  query<{ id: number; rawText: string }>(
    `SELECT id, raw_text AS "rawText" FROM chat_messages
     WHERE user_id = $1 AND raw_text LIKE '**[Your daily message for %](/resources/daily-message/%' ORDER BY id`,
    [userId],
  );

/** Claims a user's message for `localDate` the way the schedule does (the row is the claim). */
export async function claim(query: Query, userId: number, localDate: string): Promise<number> {
  const [row] = await query<{ id: number }>(
    `INSERT INTO daily_messages (user_id, local_date) VALUES ($1, $2::date) RETURNING id`,
    [userId, localDate],
  );
  if (!row) throw new Error('claim failed');
  return row.id;
}

/** The test SMTP server, able to refuse the daily mail (451) a number of times, as a busy server does. */
export async function startRefusingSmtp(): Promise<TestSmtp & { refuseDaily(times: number): void; refused: number }> {
  let refuse = 0;
  let refused = 0;
  const smtp = await startSmtp({
    refuse: (mail) => {
      if (refuse <= 0 || !mail.subject.startsWith('Your daily message')) return false;
      refuse--;
      refused++;
      return true;
    },
  });
  return {
    ...smtp,
    refuseDaily(times: number) {
      refuse = times;
    },
    get refused() {
      return refused;
    },
  };
}
