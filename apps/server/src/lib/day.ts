// Local dates and wall times in IANA time zones, with Intl only (no date library): the day windows
// the calendar reads, the daily message's and chat's local dates, and the ISO strings they show.

/** The window a day covers: the local date, and its first and last instants in the user's zone. */
export interface DayWindow {
  /** YYYY-MM-DD */
  date: string;
  timeZone: string;
  /** The day's first instant. */
  start: Date;
  /** The next day's first instant (exclusive). */
  end: Date;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: building one costs far more than using it. Throws RangeError for an unknown zone. */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    // Names differ only in case ("europe/berlin"), so a long-running server could collect many.
    if (formatters.size >= 1000) formatters.clear();
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Wall-clock fields as milliseconds on a UTC time line (Date.UTC, which maps years 0-99 to 19xx). */
export function wallMs(y: number, m: number, d: number, h = 0, min = 0, s = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  date.setUTCHours(h, min, s, 0);
  return date.getTime();
}

/** The wall clock in `timeZone` at an instant, as wallMs. */
function wallAt(instantMs: number, timeZone: string): number {
  let y = 0;
  let m = 1;
  let d = 1;
  let h = 0;
  let min = 0;
  let s = 0;
  let bc = false;
  for (const part of formatter(timeZone).formatToParts(instantMs)) {
    const n = Number(part.value);
    if (part.type === 'year') y = n;
    else if (part.type === 'month') m = n;
    else if (part.type === 'day') d = n;
    else if (part.type === 'hour') h = n;
    else if (part.type === 'minute') min = n;
    else if (part.type === 'second') s = n;
    else if (part.type === 'era') bc = part.value === 'BC' || part.value === 'B';
  }
  return wallMs(bc ? 1 - y : y, m, d, h, min, s);
}

/** The zone's UTC offset at an instant, in milliseconds (east positive). */
export function offsetMs(instantMs: number, timeZone: string): number {
  const whole = Math.floor(instantMs / 1000) * 1000;
  return wallAt(whole, timeZone) - whole;
}

/**
 * A wall time (wallMs) in a zone given by its offset function → the instant. A wall time in a gap
 * moves forward by the gap's length; a repeated one takes its first instant. Assumes at most one
 * offset change within a day of the wall time, which holds for every real zone.
 */
export function wallToInstant(wall: number, offsetAt: (instantMs: number) => number): number {
  const before = offsetAt(wall - DAY);
  const after = offsetAt(wall + DAY);
  let best: number | null = null;
  for (const offset of before === after ? [before] : [before, after]) {
    const t = wall - offset;
    if (t + offsetAt(t) === wall && (best === null || t < best)) best = t;
  }
  // In a gap: the offset in force before it, which lands as far past the gap's start as the wall time was.
  return best ?? wall - before;
}

/** A wall time in an IANA zone → the instant (a gap moves forward, a repeated hour takes the first). */
export function zonedTimeToInstant(
  y: number,
  m: number,
  d: number,
  h: number,
  min: number,
  s: number,
  timeZone: string,
): Date {
  return new Date(wallToInstant(wallMs(y, m, d, h, min, s), (t) => offsetMs(t, timeZone)));
}

function parseDate(date: string): [number, number, number] {
  const match = DATE_RE.exec(date);
  const y = Number(match?.[1]);
  const m = Number(match?.[2]);
  const d = Number(match?.[3]);
  const check = new Date(wallMs(y, m, d));
  if (!match || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d) {
    throw new RangeError(`Not a date (YYYY-MM-DD): ${JSON.stringify(date)}`);
  }
  return [y, m, d];
}

function formatDate(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const yyyy = y < 0 ? `-${String(-y).padStart(6, '0')}` : String(y).padStart(4, '0');
  return `${yyyy}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** YYYY-MM-DD plus n days (n may be negative). */
export function addDays(date: string, n: number): string {
  const [y, m, d] = parseDate(date);
  return formatDate(wallMs(y, m, d) + n * DAY);
}

/** The local date (YYYY-MM-DD) in `timeZone` at an instant. */
export function localDate(instant: Date, timeZone: string): string {
  return formatDate(wallAt(instant.getTime(), timeZone));
}

/** The first instant whose local date is `date` (midnight, or the end of a gap that swallowed midnight). */
function firstInstant(date: string, timeZone: string): number {
  const [y, m, d] = parseDate(date);
  const midnight = wallMs(y, m, d);
  const offsetAt = (t: number) => offsetMs(t, timeZone);
  const guess = wallToInstant(midnight, offsetAt);
  if (guess + offsetAt(guess) === midnight) return guess;
  // Midnight fell in a gap: the day starts where the gap ends. Search by minute (zones change on minutes).
  let lo = Math.floor((guess - DAY) / MINUTE);
  let hi = Math.ceil(guess / MINUTE);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const t = mid * MINUTE;
    if (t + offsetAt(t) >= midnight) hi = mid;
    else lo = mid + 1;
  }
  return hi * MINUTE;
}

/** The day `date` covers in `timeZone`: [its first instant, the next date's first instant). 23 or 25 h on DST days. */
export function dayWindow(date: string, timeZone: string): DayWindow {
  formatter(timeZone);
  return {
    date,
    timeZone,
    start: new Date(firstInstant(date, timeZone)),
    end: new Date(firstInstant(addDays(date, 1), timeZone)),
  };
}

/** ISO 8601 with seconds and the zone's offset at that instant: 2026-03-29T09:00:00+02:00. */
export function zonedIso(instant: Date, timeZone: string): string {
  const t = Math.floor(instant.getTime() / 1000) * 1000;
  const wall = wallAt(t, timeZone);
  const offset = Math.round((wall - t) / 1000);
  const w = new Date(wall);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  // Offsets with seconds only exist before 1972 (local mean time); ISO 8601 cannot show them otherwise.
  const seconds = abs % 60 ? `:${pad(abs % 60)}` : '';
  return (
    `${formatDate(wall)}T${pad(w.getUTCHours())}:${pad(w.getUTCMinutes())}:${pad(w.getUTCSeconds())}` +
    `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${seconds}`
  );
}
