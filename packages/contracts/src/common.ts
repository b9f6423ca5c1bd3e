import { z } from 'zod';

/**
 * The one error shape of every `/api/` endpoint: a human-readable `error`, a stable machine `code`,
 * and, for validation failures, the messages of each failing field.
 */
export const ZApiError = z.object({
  error: z.string(),
  code: z.string(),
  field_errors: z.record(z.string(), z.array(z.string())).optional(),
});
export type TApiError = z.infer<typeof ZApiError>;

/**
 * A whole number with thousands separators, as `toLocaleString('en-US')` writes it ("8,000"), without
 * starting the engine's number formatting where a module loads (a phone pays tens of ms for its first use).
 */
export const thousands = (n: number): string => String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** English day and month names, as the chat and the daily email write dates whatever the reader's language. */
export const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
export const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** The largest id a database row can have (PostgreSQL `integer`). */
export const MAX_ROW_ID = 2_147_483_647;

/** A row id from a query string or path: a positive integer a row could have. */
export const ZRowId = z.coerce.number().int().positive().max(MAX_ROW_ID);

/** A row id in a path (`/api/memories/{id}/`): digits only. Anything else names no row (404). */
export const ZPathRowId = z
  .string()
  .regex(/^\d{1,10}$/)
  .transform(Number)
  .pipe(z.number().int().positive().max(MAX_ROW_ID));
/** The path parameters of a route about one row. */
export const ZRowParams = z.object({ id: ZPathRowId });
