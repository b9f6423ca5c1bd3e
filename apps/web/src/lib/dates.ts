// Dates in the chat and its search: the day separators between messages of different local days and
// the full date behind each time stamp. Pure functions of the time stamps and "now", in the browser's zone.

import { MONTH_NAMES, WEEKDAY_NAMES } from '@daybook/contracts';

/**
 * "Monday", "17", "November", "2026" of `date`, in local time: English whatever the browser's
 * language, from the calendar fields. No Intl.DateTimeFormat, whose first use loads the engine's
 * locale data (tens of ms on a phone, in the middle of the history's first render).
 */
function parts(date: Date) {
  return {
    weekday: WEEKDAY_NAMES[date.getDay()] as string,
    day: String(date.getDate()),
    month: MONTH_NAMES[date.getMonth()] as string,
    year: String(date.getFullYear()),
  };
}

export const TODAY = 'Today';
export const YESTERDAY = 'Yesterday';

const parse = (iso: string): Date | null => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
};

/** 12-hour clock in local time, e.g. "3:07 PM"; empty for an unreadable time stamp. */
export function formatTime(iso: string): string {
  const date = parse(iso);
  if (!date) return '';
  const hours = date.getHours();
  const minutes = String(date.getMinutes()).padStart(2, '0');
  return `${hours % 12 || 12}:${minutes} ${hours < 12 ? 'AM' : 'PM'}`;
}

/** "Monday 17 November 2026 at 3:07 PM" in local time; empty for an unreadable time stamp. */
export function formatFullDate(iso: string): string {
  const date = parse(iso);
  if (!date) return '';
  const { weekday, day, month, year } = parts(date);
  return `${weekday} ${day} ${month} ${year} at ${formatTime(iso)}`;
}

/** The local calendar day of `date` as "YYYY-MM-DD" (also a valid <time dateTime>). */
export function localDayKey(date: Date): string {
  const month = String(date.getMonth() + 1).padStart(2, '0');
  const day = String(date.getDate()).padStart(2, '0');
  return `${date.getFullYear()}-${month}-${day}`;
}

/** "Today", "Yesterday", "Mon 17 November" this year, "Mon 17 November 2025" in another year. */
export function dayLabel(date: Date, now: number): string {
  const today = new Date(now);
  const key = localDayKey(date);
  if (key === localDayKey(today)) return TODAY;
  // Calendar arithmetic, not 24 hours: a day with a daylight saving change is 23 or 25 hours long.
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (key === localDayKey(yesterday)) return YESTERDAY;
  const { weekday, day, month, year } = parts(date);
  const label = `${weekday.slice(0, 3)} ${day} ${month}`;
  return date.getFullYear() === today.getFullYear() ? label : `${label} ${year}`;
}

/** Milliseconds from `now` to the next local midnight, when "Today" becomes "Yesterday". */
export function msUntilNextDay(now: number): number {
  const date = new Date(now);
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + 1).getTime() - now;
}

export interface DayGroup<T> {
  /** Unique among the groups: the day, with a suffix when a day comes back after another. */
  key: string;
  /** The local day, "YYYY-MM-DD". */
  day: string;
  label: string;
  items: T[];
}

/**
 * Splits `items` (oldest first) into runs of one local day each. An item without a time stamp (being
 * sent, or an answer being written) belongs to today; an unreadable one stays with the item before.
 */
export function groupByDay<T>(
  items: readonly T[],
  timestampOf: (item: T) => string | null,
  now: number,
): DayGroup<T>[] {
  const groups: DayGroup<T>[] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const iso = timestampOf(item);
    const date = iso === null ? new Date(now) : parse(iso);
    const last = groups[groups.length - 1];
    const day = date ? localDayKey(date) : last?.day;
    if (last && (day === undefined || day === last.day)) {
      last.items.push(item);
      continue;
    }
    const when = date ?? new Date(now);
    const key = day ?? localDayKey(when);
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    groups.push({ key: count ? `${key}-${count}` : key, day: key, label: dayLabel(when, now), items: [item] });
  }
  return groups;
}
