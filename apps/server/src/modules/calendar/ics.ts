// iCalendar (.ics) feeds: parse once per fetch, then list the occurrences that overlap a day.
// ical.js parses the text and iterates RRULEs; time zones are resolved here, per calendar, because
// ical.js falls back to a process-wide TimezoneService that one user's calendar must not change.
// Recurrences are iterated in wall time (floating) and each occurrence is placed in its zone afterwards.
// Every step is bounded, since a feed is anyone's text: lines are screened before ical.js reads them,
// RRULEs are priced in steps and in wall time, zones per calendar are capped, and so is a day's list.
import ICAL from 'ical.js';
import { offsetMs, wallMs, wallToInstant } from '../../lib/day.ts';
import type { DayWindow, SourceEvent } from './calendar.types.ts';
import { type BudgetClock, createSeriesBudget, OutOfSteps, Overrun, type Spend } from './ics.budget.ts';

export type { BudgetClock } from './ics.budget.ts';

const NOT_A_CALENDAR = 'That address did not return a calendar (an .ics file).';

export class IcsError extends Error {
  readonly code = 'not_a_calendar' as const;
  constructor(message: string = NOT_A_CALENDAR) {
    super(message);
    this.name = 'IcsError';
  }
}

export interface ParsedCalendar {
  /** X-WR-CALNAME, trimmed, at most 100 characters; null when missing or blank. */
  readonly name: string | null;
  /** What of the calendar is left out or changed, in words for its owner (nothing dropped unsaid). */
  readonly notes: readonly string[];
  /**
   * Every occurrence that overlaps the window (timed: [start, end); all-day: the window's date), at
   * most EVENTS_MAX: all-day events first, then the earliest timed ones.
   */
  events(window: DayWindow): SourceEvent[];
}

/** Events one events() call returns at most, so one day of a hostile feed stays a page, not 130,000 rows. */
export const EVENTS_MAX = 500;
/** Occurrences of one series a day lists at most, so one that repeats by the minute cannot crowd out the rest. */
export const SERIES_DAY_MAX = 100;

const SECOND = 1000;
const DAY = 86_400_000;
// Wall times and instants differ by a zone's offset (at most ~14 h); candidates are kept within this.
const MARGIN = 2 * DAY;
/** RRULE steps (and yearly onsets) all VTIMEZONEs of one calendar may take; past it, TZIDs resolve by name. */
const ZONE_STEPS = 50_000;
/** Distinct TZIDs one calendar may resolve (real ones use a handful); further ones are read as UTC. */
const ZONES_MAX = 200;
/**
 * The characters before a line's value (name and parameters) and the parameters one line may have:
 * ical.js rescans the line to its value for every parameter, so its cost grows with their product.
 */
const PARAM_TEXT_MAX = 10_000;
const PARAMS_MAX = 100;
/** Expanding a year's days costs ical.js about as much as this many daily steps. */
const YEAR_STEPS = 10;
const TITLE_MAX = 300;
const LOCATION_MAX = 500;
const URL_MAX = 2000;
const NAME_MAX = 100;

/** A zone as its UTC offset (ms) at an instant; null is floating (the reader's zone). */
type OffsetAt = (instantMs: number) => number;
type Zone = OffsetAt | null;

const UTC: OffsetAt = () => 0;

/** A DTSTART-like value: wall-clock fields as ms on a UTC line, and the zone they are read in. */
interface TimeValue {
  wall: number;
  date: boolean;
  zone: Zone;
  /** Equal keys mean the same zone ('' floating, 'Z' UTC, else the TZID). */
  zoneKey: string;
}

type End =
  | { kind: 'days'; days: number }
  | { kind: 'wall'; delta: number; zone: Zone }
  | { kind: 'duration'; days: number; ms: number }
  | { kind: 'exact'; ms: number };

/** Recurrence ids or exception dates, by how they are compared. */
interface Marks {
  instants: Set<number>;
  walls: Set<number>;
  dates: Set<number>;
}

interface Item {
  uid: string;
  start: TimeValue;
  end: End;
  /** An upper bound of the wall-time length, for cheap filtering. */
  span: number;
  title: string;
  location: string | null;
  url: string | null;
  rules: ICAL.Recur[];
  /** Its rule repeated by the second, and is read by the minute instead. */
  secondly: boolean;
  rdates: TimeValue[];
  exdates: Marks;
  /** Occurrences replaced by RECURRENCE-ID components (moved or cancelled). */
  replaced: Marks;
  /** For a RECURRENCE-ID component: the occurrence it replaces. */
  recurrenceId: TimeValue | null;
  /** Ran over its limits, or unreadable; not expanded again. */
  broken: boolean;
  /** Expanded within its limits at least once. */
  proven: boolean;
  /** A single timed event's instants, kept: '' when they do not depend on the reader's zone, else that zone. */
  placed: { zone: string; start: number; stop: number } | null;
}

// ---- text ----

// C0/C1 controls (tabs and line breaks become spaces first) and the Unicode line separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function cleanText(value: unknown, max: number): string {
  if (value === null || value === undefined) return '';
  const raw = Array.isArray(value) ? value.join(', ') : String(value);
  const text = raw
    .replace(/[\t\r\n]+/g, ' ')
    .replace(CONTROL, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('').trimEnd();
}

function httpUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (!text || text.length > URL_MAX) return null;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

// ---- time zones ----

/** Outlook writes Windows zone names as TZIDs; the common ones (CLDR's mapping for territory 001). */
const WINDOWS_ZONES: Record<string, string> = {
  utc: 'UTC',
  'coordinated universal time': 'UTC',
  'greenwich standard time': 'Atlantic/Reykjavik',
  'gmt standard time': 'Europe/London',
  'w. europe standard time': 'Europe/Berlin',
  'central europe standard time': 'Europe/Budapest',
  'central european standard time': 'Europe/Warsaw',
  'romance standard time': 'Europe/Paris',
  'e. europe standard time': 'Europe/Chisinau',
  'fle standard time': 'Europe/Helsinki',
  'gtb standard time': 'Europe/Bucharest',
  'russian standard time': 'Europe/Moscow',
  'turkey standard time': 'Europe/Istanbul',
  'israel standard time': 'Asia/Jerusalem',
  'egypt standard time': 'Africa/Cairo',
  'south africa standard time': 'Africa/Johannesburg',
  'w. central africa standard time': 'Africa/Lagos',
  'e. africa standard time': 'Africa/Nairobi',
  'morocco standard time': 'Africa/Casablanca',
  'arab standard time': 'Asia/Riyadh',
  'arabian standard time': 'Asia/Dubai',
  'iran standard time': 'Asia/Tehran',
  'pakistan standard time': 'Asia/Karachi',
  'india standard time': 'Asia/Kolkata',
  'nepal standard time': 'Asia/Kathmandu',
  'bangladesh standard time': 'Asia/Dhaka',
  'se asia standard time': 'Asia/Bangkok',
  'china standard time': 'Asia/Shanghai',
  'singapore standard time': 'Asia/Singapore',
  'taipei standard time': 'Asia/Taipei',
  'tokyo standard time': 'Asia/Tokyo',
  'korea standard time': 'Asia/Seoul',
  'w. australia standard time': 'Australia/Perth',
  'cen. australia standard time': 'Australia/Adelaide',
  'aus central standard time': 'Australia/Darwin',
  'e. australia standard time': 'Australia/Brisbane',
  'aus eastern standard time': 'Australia/Sydney',
  'tasmania standard time': 'Australia/Hobart',
  'new zealand standard time': 'Pacific/Auckland',
  'hawaiian standard time': 'Pacific/Honolulu',
  'alaskan standard time': 'America/Anchorage',
  'pacific standard time': 'America/Los_Angeles',
  'us mountain standard time': 'America/Phoenix',
  'mountain standard time': 'America/Denver',
  'central standard time': 'America/Chicago',
  'central standard time (mexico)': 'America/Mexico_City',
  'central america standard time': 'America/Guatemala',
  'canada central standard time': 'America/Regina',
  'eastern standard time': 'America/New_York',
  'us eastern standard time': 'America/Indianapolis',
  'sa pacific standard time': 'America/Bogota',
  'venezuela standard time': 'America/Caracas',
  'atlantic standard time': 'America/Halifax',
  'newfoundland standard time': 'America/St_Johns',
  'pacific sa standard time': 'America/Santiago',
  'e. south america standard time': 'America/Sao_Paulo',
  'argentina standard time': 'America/Buenos_Aires',
  'sa eastern standard time': 'America/Cayenne',
};

const OFFSET_RE = /^([+-])(\d{2}):?(\d{2})(?::?(\d{2}))?$/;

function parseOffset(raw: unknown): number | null {
  const m = typeof raw === 'string' ? OFFSET_RE.exec(raw) : null;
  if (!m) return null;
  const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
  if (seconds > 26 * 3600) return null;
  return (m[1] === '-' ? -seconds : seconds) * SECOND;
}

/** The canonical IANA name when this runtime knows the zone, else null. */
function ianaZone(name: string): string | null {
  if (!name || name.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

function ianaOffsets(name: string): OffsetAt {
  if (name === 'UTC' || name === 'Etc/UTC' || name === 'Etc/GMT') return UTC;
  return (t) => offsetMs(t, name);
}

/** A TZID that names an IANA zone, also behind an older exporter's path; else null. */
function ianaNamed(tzid: string): OffsetAt | null {
  const direct = ianaZone(tzid);
  if (direct) return ianaOffsets(direct);
  // "/mozilla.org/20050126_1/Europe/Berlin", "/softwarestudio.org/Olson_20011030_5/America/New_York"
  const segments = tzid.split('/').filter(Boolean);
  for (const n of [3, 2]) {
    if (segments.length > n) {
      const tail = ianaZone(segments.slice(-n).join('/'));
      if (tail) return ianaOffsets(tail);
    }
  }
  return null;
}

/** A TZID that is not in the calendar and not IANA's: Windows names, "(UTC+01:00) ...". */
function otherNamedZone(tzid: string): OffsetAt | null {
  const windows = WINDOWS_ZONES[tzid.trim().toLowerCase()];
  if (windows) {
    const zone = ianaZone(windows);
    if (zone) return ianaOffsets(zone);
  }
  // Outlook's display names carry the standard offset; it misses summer time, but beats UTC.
  const display = /^\((?:UTC|GMT)\s*(?:([+-])(\d{1,2}):?(\d{2}))?\)/i.exec(tzid.trim());
  if (display) {
    const ms = (Number(display[2] ?? 0) * 60 + Number(display[3] ?? 0)) * 60 * SECOND;
    const fixed = display[1] === '-' ? -ms : ms;
    return () => fixed;
  }
  return null;
}

const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

/**
 * The onsets of the rule nearly every VTIMEZONE uses, "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", computed
 * directly: Outlook starts them in 1601, and ical.js would walk every year since.
 * Null for any other rule.
 */
function annualOnsets(
  rule: ICAL.Recur,
  start: number,
  until: number,
  spend: (n: number) => void,
): (() => number | null) | null {
  const parts = rule.parts as Record<string, unknown[] | undefined>;
  const keys = Object.keys(parts).filter((k) => parts[k]?.length);
  if (rule.freq !== 'YEARLY' || (rule.interval || 1) !== 1 || rule.count || keys.length !== 2) return null;
  const [month] = (parts.BYMONTH ?? []) as number[];
  const [byday] = (parts.BYDAY ?? []) as string[];
  const m = typeof byday === 'string' ? /^([+-]?[1-5])(MO|TU|WE|TH|FR|SA|SU)$/.exec(byday) : null;
  if (parts.BYMONTH?.length !== 1 || parts.BYDAY?.length !== 1 || !m || !month || month < 1 || month > 12) return null;
  const nth = Number(m[1]);
  const weekday = WEEKDAYS.indexOf(m[2] ?? '');
  const s = new Date(start);
  const time = start - floorDay(start);
  let year = s.getUTCFullYear();
  return () => {
    for (; year <= 9999; year++) {
      // Cheap, but a VTIMEZONE may hold thousands of observances, each from 1601.
      spend(1);
      const days = daysIn(year, month);
      let day: number;
      if (nth > 0) {
        const first = new Date(wallMs(year, month, 1)).getUTCDay();
        day = 1 + ((weekday - first + 7) % 7) + (nth - 1) * 7;
      } else {
        const last = new Date(wallMs(year, month, days)).getUTCDay();
        day = days - ((last - weekday + 7) % 7) + (nth + 1) * 7;
      }
      if (day < 1 || day > days) continue;
      const wall = wallMs(year, month, day) + time;
      if (wall < start) continue;
      year++;
      return wall > until ? null : wall;
    }
    return null;
  };
}

/**
 * A VTIMEZONE's offsets from its STANDARD/DAYLIGHT onsets, expanded lazily as far as asked. The file
 * says nothing of instants before its first onset: `earlier` answers for them when given, else that
 * onset's TZOFFSETFROM does (the guess calendar apps make).
 */
function vtimezoneOffsets(component: ICAL.Component, budget: Budget, earlier: OffsetAt | null): OffsetAt | null {
  interface Observance {
    from: number;
    to: number;
    pending: number[];
    next: (() => number | null) | null;
  }
  const observances: Observance[] = [];
  for (const sub of component.getAllSubcomponents()) {
    if (sub.name !== 'standard' && sub.name !== 'daylight') continue;
    const from = parseOffset(sub.getFirstProperty('tzoffsetfrom')?.jCal[3]);
    const to = parseOffset(sub.getFirstProperty('tzoffsetto')?.jCal[3]);
    const dtstart = sub.getFirstProperty('dtstart');
    const start = dtstart ? parseWall(dtstart.jCal[3]) : null;
    if (from === null || to === null || !start) continue;
    // Onsets are local wall times in the offset before the change (UTC when written with Z).
    const onset = (wall: number, utc: boolean) => (utc ? wall : wall - from);
    const pending = [onset(start.wall, start.utc)];
    for (const prop of sub.getAllProperties('rdate')) {
      for (const raw of prop.jCal.slice(3)) {
        const v = parseWall(Array.isArray(raw) ? raw[0] : raw);
        if (v) pending.push(onset(v.wall, v.utc));
      }
    }
    let next: Observance['next'] = null;
    const rrule = sub.getFirstProperty('rrule');
    const spend = (n: number) => {
      budget.left -= n;
      if (budget.left < 0) throw new OutOfSteps();
    };
    if (rrule) {
      try {
        const rule = (rrule.getFirstValue() as ICAL.Recur).clone();
        let until = Number.POSITIVE_INFINITY;
        if (rule.until) {
          const u = rule.until;
          const untilWall = wallMs(u.year, u.month, u.day, u.hour, u.minute, u.second);
          until = u.zone === ICAL.Timezone.utcTimezone ? untilWall + from : untilWall;
          rule.until = floatingTime(until, false);
        }
        const yearly = annualOnsets(rule, start.wall, until, spend);
        if (yearly) {
          next = () => {
            const wall = yearly();
            return wall === null ? null : onset(wall, false);
          };
        } else {
          const it = guardedIterator(rule, floatingTime(start.wall, false), spend);
          next = () => {
            const t = it.next();
            return t ? onset(wallMs(t.year, t.month, t.day, t.hour, t.minute, t.second), false) : null;
          };
        }
      } catch {
        next = null;
      }
    }
    observances.push({ from, to, pending, next });
  }
  if (!observances.length) return null;

  let changes: { at: number; offset: number }[] = [];
  let coveredUntil = Number.NEGATIVE_INFINITY;
  const cover = (until: number) => {
    for (const o of observances) {
      while (o.next) {
        let at: number | null;
        try {
          at = o.next();
        } catch {
          at = null;
        }
        if (at === null) {
          o.next = null;
          break;
        }
        o.pending.push(at);
        if (at > until) break;
      }
      for (const at of o.pending) changes.push({ at, offset: o.to });
      o.pending = [];
    }
    changes = changes.sort((a, b) => a.at - b.at);
    coveredUntil = until;
  };
  // Before the first onset, the offset that onset changes from.
  let before = 0;
  let earliest = Number.POSITIVE_INFINITY;
  for (const o of observances) {
    for (const at of o.pending) {
      if (at < earliest) {
        earliest = at;
        before = o.from;
      }
    }
  }
  return (t) => {
    if (t > coveredUntil) cover(t + 400 * DAY);
    let lo = 0;
    let hi = changes.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((changes[mid]?.at ?? 0) <= t) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return earlier ? earlier(t) : before;
    return changes[found]?.offset ?? before;
  };
}

/**
 * Resolves TZIDs for one calendar: its own VTIMEZONEs first, then IANA, Windows names, else UTC.
 * Where a VTIMEZONE's TZID is an IANA name, IANA's rules answer for instants before its first onset,
 * since producers such as iCalcreator write only recent onsets; the file's own onsets still rule after
 * (Outlook's custom zones). Each TZID is resolved once, failures too; past ZONES_MAX distinct ones,
 * new ones are UTC unread (an unknown name costs several Intl lookups, and a feed can hold hundreds of thousands).
 */
function zoneResolver(vtimezones: ICAL.Component[]): (tzid: string) => OffsetAt {
  const budget: Budget = { left: ZONE_STEPS };
  const defined = new Map<string, ICAL.Component>();
  for (const vtz of vtimezones) {
    const id = vtz.getFirstPropertyValue('tzid');
    if (typeof id === 'string' && !defined.has(id)) defined.set(id, vtz);
  }
  const cache = new Map<string, OffsetAt>();
  return (tzid) => {
    let zone = cache.get(tzid);
    if (!zone) {
      if (cache.size >= ZONES_MAX) return UTC;
      const vtz = defined.get(tzid);
      const iana = ianaNamed(tzid);
      let own: OffsetAt | null = null;
      try {
        own = vtz ? vtimezoneOffsets(vtz, budget, iana) : null;
      } catch {
        // An unreadable VTIMEZONE: fall back to the name, as if the file had none.
      }
      zone = own || iana || otherNamedZone(tzid) || UTC;
      cache.set(tzid, zone);
    }
    return zone;
  };
}

// ---- values ----

const WALL_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(Z)?|T::)?$/;

/** ical.js's jCal date or date-time string → wall ms; null when malformed. */
function parseWall(raw: unknown): { wall: number; date: boolean; utc: boolean } | null {
  const m = typeof raw === 'string' ? WALL_RE.exec(raw) : null;
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // "DTSTART:20260330" without VALUE=DATE reaches us as "2026-03-30T::".
  const date = m[4] === undefined;
  const [h, mi, s] = date ? [0, 0, 0] : [Number(m[4]), Number(m[5]), Math.min(Number(m[6]), 59)];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59) return null;
  const wall = wallMs(y, mo, d, h, mi, s);
  if (new Date(wall).getUTCDate() !== d) return null;
  return { wall, date, utc: m[7] === 'Z' };
}

function floatingTime(wall: number, isDate: boolean): ICAL.Time {
  const d = new Date(wall);
  return new ICAL.Time(
    {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: isDate ? 0 : d.getUTCHours(),
      minute: isDate ? 0 : d.getUTCMinutes(),
      second: isDate ? 0 : d.getUTCSeconds(),
      isDate,
    },
    ICAL.Timezone.localTimezone,
  );
}

function tzidOf(prop: ICAL.Property): string | null {
  const p = prop.getParameter('tzid');
  const id = Array.isArray(p) ? p[0] : p;
  return typeof id === 'string' && id.trim() ? id : null;
}

function timeValue(raw: unknown, tzid: string | null, zones: (tzid: string) => OffsetAt): TimeValue | null {
  const v = parseWall(raw);
  if (!v) return null;
  if (v.date) return { wall: v.wall, date: true, zone: null, zoneKey: '' };
  if (v.utc) return { wall: v.wall, date: false, zone: UTC, zoneKey: 'Z' };
  if (tzid) return { wall: v.wall, date: false, zone: zones(tzid), zoneKey: `tz:${tzid}` };
  return { wall: v.wall, date: false, zone: null, zoneKey: '' };
}

function propTime(comp: ICAL.Component, name: string, zones: (tzid: string) => OffsetAt): TimeValue | null {
  const prop = comp.getFirstProperty(name);
  return prop ? timeValue(prop.jCal[3], tzidOf(prop), zones) : null;
}

/** All values of a multi-valued date property (EXDATE, RDATE; RDATE periods give their start). */
function propTimes(comp: ICAL.Component, name: string, zones: (tzid: string) => OffsetAt): TimeValue[] {
  const out: TimeValue[] = [];
  for (const prop of comp.getAllProperties(name)) {
    const tzid = tzidOf(prop);
    for (const raw of prop.jCal.slice(3)) {
      const v = timeValue(Array.isArray(raw) ? raw[0] : raw, tzid, zones);
      if (v) out.push(v);
    }
  }
  return out;
}

const DURATION_RE = /^([+-])?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

function parseDuration(raw: unknown): { days: number; ms: number } | null {
  const m = typeof raw === 'string' ? DURATION_RE.exec(raw) : null;
  if (!m) return null;
  if (m[1] === '-') return { days: 0, ms: 0 };
  const days = Number(m[2] ?? 0) * 7 + Number(m[3] ?? 0);
  const ms = ((Number(m[4] ?? 0) * 60 + Number(m[5] ?? 0)) * 60 + Number(m[6] ?? 0)) * SECOND;
  if (days > 3660 || ms > 3660 * DAY) return null;
  return { days, ms };
}

/** Instant of a timed value; floating ones are read in `floating` (the window's zone). */
function instantOf(v: TimeValue, floating: OffsetAt): number {
  if (v.zone === UTC) return v.wall;
  return wallToInstant(v.wall, v.zone ?? floating);
}

function emptyMarks(): Marks {
  return { instants: new Set(), walls: new Set(), dates: new Set() };
}

/** Shared by the many events with none (three Sets each would weigh on a feed of 100,000 events); never marked. */
const NO_MARKS: Marks = emptyMarks();

/** Adds recurrence ids or exception dates; all-day series compare by date only. */
function mark(marks: Marks, v: TimeValue, allDay: boolean) {
  if (allDay || v.date) marks.dates.add(floorDay(v.wall));
  else if (v.zone === null) marks.walls.add(v.wall);
  else marks.instants.add(instantOf(v, UTC));
}

function marked(marks: Marks, wall: number, instant: number | null): boolean {
  const day = floorDay(wall);
  return marks.dates.has(day) || marks.walls.has(wall) || (instant !== null && marks.instants.has(instant));
}

// ---- RRULE iteration ----

/**
 * An RRULE iterator that reports its work to `spend`, which throws to stop it: ical.js's next() spins
 * forever on a rule no date satisfies (FREQ=DAILY;INTERVAL=7;BYDAY=MO from a Tuesday), and its init()
 * may expand thousands of years looking for one. A rule ical.js refuses yields nothing.
 */
function guardedIterator(rule: ICAL.Recur, start: ICAL.Time, spend: (n: number) => void): { next(): ICAL.Time | null } {
  const cost = stepCost(rule);
  // Built uninitialised, so the guard is in place before init() runs.
  const it = new ICAL.RecurIterator({ rule, dtstart: start, initialized: true });
  const check = it.check_contracting_rules.bind(it);
  // Paid before the step it allows: next() moves to a candidate, then checks it, and so on.
  it.check_contracting_rules = () => {
    spend(cost);
    return check();
  };
  const expand = it.expand_year_days.bind(it);
  it.expand_year_days = (year: number) => {
    spend(YEAR_STEPS);
    return expand(year);
  };
  try {
    (it as unknown as { init(): void }).init();
  } catch (err) {
    if (err instanceof Overrun) throw err;
    return { next: () => null };
  }
  return {
    next() {
      spend(cost);
      return it.next() ?? null;
    },
  };
}

/** One ical.js step in daily-step units: it advances day by day (so a long INTERVAL costs), months cost more. */
function stepCost(rule: ICAL.Recur): number {
  const interval = Math.max(1, rule.interval || 1);
  const days: Record<string, number> = {
    SECONDLY: 1 / 86_400,
    MINUTELY: 1 / 1440,
    HOURLY: 1 / 24,
    DAILY: 1,
    WEEKLY: 7,
  };
  const perDay = days[rule.freq];
  return perDay === undefined ? 10 : 1 + Math.ceil((interval * perDay) / 100);
}

const FIXED_PERIOD: Record<string, number> = {
  SECONDLY: SECOND,
  MINUTELY: 60 * SECOND,
  HOURLY: 3600 * SECOND,
  DAILY: DAY,
  WEEKLY: 7 * DAY,
};

const daysIn = (y: number, m: number) => new Date(wallMs(y, m + 1, 1) - DAY).getUTCDate();

/**
 * Moves DTSTART forward by whole periods of the rule to shortly before `low`, so a years-old daily
 * event does not iterate from its first day. Not for COUNT rules (they count from the real start).
 * The moved start is yielded even when it does not match the rule, but it lies before `low`.
 */
function fastForward(start: number, rule: ICAL.Recur, low: number): number {
  if (rule.count || start >= low) return start;
  const interval = Math.max(1, rule.interval || 1);
  const fixed = FIXED_PERIOD[rule.freq];
  if (fixed) {
    const period = fixed * interval;
    const k = Math.floor((low - start) / period) - 1;
    return k > 0 ? start + k * period : start;
  }
  const s = new Date(start);
  const l = new Date(low);
  const unit = rule.freq === 'YEARLY' ? 12 : 1;
  const months = (l.getUTCFullYear() - s.getUTCFullYear()) * 12 + (l.getUTCMonth() - s.getUTCMonth());
  let k = Math.floor(months / (unit * interval)) - 1;
  for (; k > 0; k--) {
    const total = s.getUTCMonth() + k * unit * interval;
    const y = s.getUTCFullYear() + Math.floor(total / 12);
    const m = (total % 12) + 1;
    if (s.getUTCDate() <= daysIn(y, m)) {
      return wallMs(y, m, s.getUTCDate(), s.getUTCHours(), s.getUTCMinutes(), s.getUTCSeconds());
    }
  }
  return start;
}

/**
 * The last occurrence of a COUNT rule whose occurrences are evenly spaced (a fixed FREQ, no BY parts),
 * else null: "daily, 5,000 times" from years ago would otherwise be iterated from its first day.
 */
function lastCounted(rule: ICAL.Recur, start: number): number | null {
  const fixed = FIXED_PERIOD[rule.freq];
  if (!rule.count || !fixed || Object.values(rule.parts).some((v) => v?.length)) return null;
  return start + (rule.count - 1) * fixed * Math.max(1, rule.interval || 1);
}

/** UNTIL as a wall time in the series' zone, so it compares with the floating occurrences. */
function untilWall(rule: ICAL.Recur, item: Item, floating: OffsetAt): number | null {
  const u = rule.until;
  if (!u) return null;
  const wall = wallMs(u.year, u.month, u.day, u.hour, u.minute, u.second);
  if (u.isDate) return item.start.date ? wall : wall + DAY - SECOND;
  if (u.zone !== ICAL.Timezone.utcTimezone || item.start.date) return wall;
  const zone = item.start.zone ?? floating;
  return wall + zone(wall);
}

// ---- parsing ----

function itemOf(vevent: ICAL.Component, zones: (tzid: string) => OffsetAt): Item | null {
  let start = propTime(vevent, 'dtstart', zones);
  if (!start) return null;
  let dtend = propTime(vevent, 'dtend', zones);
  // Outlook's all-day events are sometimes midnight-to-midnight date-times with this flag.
  const outlookAllDay = String(vevent.getFirstPropertyValue('x-microsoft-cdo-alldayevent') ?? '').toUpperCase();
  if (outlookAllDay === 'TRUE' && !start.date && start.wall % DAY === 0) {
    start = { wall: start.wall, date: true, zone: null, zoneKey: '' };
    if (dtend && dtend.wall % DAY === 0) dtend = { wall: dtend.wall, date: true, zone: null, zoneKey: '' };
  }
  const durationProp = vevent.getFirstProperty('duration');
  const duration = durationProp ? parseDuration(durationProp.jCal[3]) : null;

  let end: End;
  let span: number;
  if (start.date) {
    let days = 1;
    if (dtend) days = Math.round((floorDay(dtend.wall) - start.wall) / DAY);
    else if (duration) days = duration.days + Math.ceil(duration.ms / DAY);
    days = Math.max(1, days);
    end = { kind: 'days', days };
    span = days * DAY;
  } else if (dtend && dtend.zoneKey === start.zoneKey) {
    const delta = Math.max(0, dtend.wall - start.wall);
    end = { kind: 'wall', delta, zone: dtend.zone };
    span = delta;
  } else if (dtend) {
    // Different zones (a flight): the exact length; floating ends are read as UTC for this.
    const ms = Math.max(0, instantOf(dtend, UTC) - instantOf(start, UTC));
    end = { kind: 'exact', ms };
    span = ms + MARGIN;
  } else {
    const d = duration ?? { days: 0, ms: 0 };
    end = { kind: 'duration', days: d.days, ms: d.ms };
    span = d.days * DAY + d.ms + DAY;
  }

  const rules: ICAL.Recur[] = [];
  let secondly = false;
  for (const prop of vevent.getAllProperties('rrule')) {
    const rule = prop.getFirstValue() as ICAL.Recur;
    if (!(rule instanceof ICAL.Recur) || !rule.freq) return null;
    if (rule.freq === 'SECONDLY') {
      // A day of seconds is past any budget: such an event is shown at most once a minute (and said so).
      rule.freq = 'MINUTELY';
      rule.interval = Math.max(1, Math.ceil((rule.interval || 1) / 60));
      delete rule.parts.BYSECOND;
      secondly = true;
    }
    rules.push(rule);
  }
  const allDay = start.date;
  const exdateValues = propTimes(vevent, 'exdate', zones);
  const exdates = exdateValues.length ? emptyMarks() : NO_MARKS;
  for (const v of exdateValues) mark(exdates, v, allDay);
  const recurrenceId = propTime(vevent, 'recurrence-id', zones);
  const uid = cleanText(vevent.getFirstPropertyValue('uid'), 1000);
  const location = cleanText(vevent.getFirstPropertyValue('location'), LOCATION_MAX);
  return {
    uid,
    start,
    end,
    span,
    title: cleanText(vevent.getFirstPropertyValue('summary'), TITLE_MAX),
    location: location || null,
    url: httpUrl(vevent.getFirstPropertyValue('url')),
    rules: recurrenceId ? [] : rules,
    secondly,
    rdates: recurrenceId ? [] : propTimes(vevent, 'rdate', zones),
    exdates,
    replaced: NO_MARKS,
    recurrenceId,
    broken: false,
    proven: false,
    placed: null,
  };
}

function calendarItems(root: ICAL.Component): Item[] {
  const zones = zoneResolver(root.getAllSubcomponents('vtimezone'));
  const masters = new Map<string, Item>();
  const items: Item[] = [];
  const overrides: { item: Item; cancelled: boolean }[] = [];
  const vevents = root.getAllSubcomponents('vevent');
  vevents.forEach((vevent, index) => {
    let item: Item | null;
    try {
      item = itemOf(vevent, zones);
    } catch {
      // One malformed event (a bad date, an unreadable RRULE) is skipped, not the whole calendar.
      item = null;
    }
    if (!item) return;
    if (!item.uid) item.uid = `event-${index + 1}`;
    const cancelled = String(vevent.getFirstPropertyValue('status') ?? '').toUpperCase() === 'CANCELLED';
    if (item.recurrenceId) {
      overrides.push({ item, cancelled });
      return;
    }
    if (cancelled) return;
    if (!masters.has(item.uid)) masters.set(item.uid, item);
    items.push(item);
  });
  for (const { item, cancelled } of overrides) {
    const master = masters.get(item.uid);
    const id = item.recurrenceId;
    // The instance it replaces is gone from the series whether it moved or was cancelled.
    if (master && id) {
      if (master.replaced === NO_MARKS) master.replaced = emptyMarks();
      mark(master.replaced, id, master.start.date);
    }
    if (!cancelled) items.push(item);
  }
  return items;
}

// ---- occurrences ----

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function stamp(ms: number, date: boolean, utc: boolean): string {
  const d = new Date(ms);
  const day = `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  if (date) return day;
  return `${day}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}${utc ? 'Z' : ''}`;
}

/** The occurrence's recurrence id as text: a date, a floating wall time, or a UTC instant. */
function occurrenceKey(wall: number, instant: number | null, allDay: boolean): string {
  if (allDay) return stamp(wall, true, false);
  return instant === null ? stamp(wall, false, false) : stamp(instant, false, true);
}

interface Budget {
  left: number;
}

/** An occurrence that overlaps the window, before it becomes a SourceEvent. */
interface Hit {
  item: Item;
  /** Its start's wall time (all-day: its first date). */
  wall: number;
  /** Timed: its instants; all-day: NaN. */
  start: number;
  stop: number;
  /** The instance's recurrence id, or null for an event that is not part of a series. */
  rid: { wall: number; instant: number | null; date: boolean } | null;
}

/** A timed occurrence's start and end instants; `at` is the start when the caller has it already. */
function instants(item: Item, wall: number, floating: OffsetAt, at: number | null): [number, number] {
  const zone = item.start.zone ?? floating;
  const start = at ?? (item.start.zone === UTC ? wall : wallToInstant(wall, zone));
  const end = item.end;
  let stop = start;
  if (end.kind === 'wall') stop = wallToInstant(wall + end.delta, end.zone ?? floating);
  else if (end.kind === 'duration') stop = wallToInstant(wall + end.days * DAY, zone) + end.ms;
  else if (end.kind === 'exact') stop = start + end.ms;
  return [start, Math.max(start, stop)];
}

/** All-day events first (by date), then timed ones by start: what EVENTS_MAX keeps. */
function byStart(a: Hit, b: Hit): number {
  const aDay = Number.isNaN(a.start);
  const bDay = Number.isNaN(b.start);
  if (aDay !== bDay) return aDay ? -1 : 1;
  return aDay ? a.wall - b.wall : a.start - b.start || a.stop - b.stop;
}

function sourceEvent(hit: Hit): SourceEvent {
  const { item, rid } = hit;
  const id = rid ? `${item.uid}/${occurrenceKey(rid.wall, rid.instant, rid.date)}` : item.uid;
  const base = { id, title: item.title || '(No title)', location: item.location, url: item.url };
  if (item.end.kind === 'days') {
    const endDate = dayString(hit.wall + item.end.days * DAY);
    return { ...base, allDay: true, startDate: dayString(hit.wall), endDate };
  }
  return { ...base, allDay: false, start: new Date(hit.start), end: new Date(hit.stop) };
}

function createCalendar(name: string | null, items: Item[], notes: string[], now: BudgetClock): ParsedCalendar {
  const singles = items.filter((item) => !item.rules.length && !item.rdates.length);
  const series = items.filter((item) => item.rules.length || item.rdates.length);
  const budget = createSeriesBudget(series, now);
  return {
    name,
    notes,
    events(window) {
      const call = budget.call();
      const floating: OffsetAt = (t) => offsetMs(t, window.timeZone);
      const ws = window.start.getTime();
      const we = window.end.getTime();
      const [y, m, d] = window.date.split('-').map(Number) as [number, number, number];
      const dateWall = wallMs(y, m, d);
      const hits: Hit[] = [];

      /** The occurrence as a hit when it overlaps the window; `at`: its start instant when known. */
      const hit = (item: Item, wall: number, rid: Hit['rid'], at: number | null = null): Hit | null => {
        const end = item.end;
        if (end.kind === 'days') {
          const overlaps = wall <= dateWall && dateWall < wall + end.days * DAY;
          return overlaps ? { item, wall, start: Number.NaN, stop: Number.NaN, rid } : null;
        }
        let start: number;
        let stop: number;
        if (item.rules.length || item.rdates.length) {
          [start, stop] = instants(item, wall, floating, at);
        } else {
          // A single event's instants are the same every call (for floating ones, in the same zone).
          const zone = item.start.zone === null || (end.kind === 'wall' && end.zone === null) ? window.timeZone : '';
          if (item.placed?.zone !== zone) {
            const [a, b] = instants(item, wall, floating, at);
            item.placed = { zone, start: a, stop: b };
          }
          ({ start, stop } = item.placed as { start: number; stop: number });
        }
        return start < we && (stop > ws || start === ws) ? { item, wall, start, stop, rid } : null;
      };

      // Wall times that can touch the window: whole days for all-day items, ±MARGIN for timed ones.
      const low = (item: Item) => (item.start.date ? dateWall : ws - MARGIN) - item.span;
      const high = (item: Item) => (item.start.date ? dateWall : we + MARGIN);

      let timeLeft = true;
      for (let i = 0; i < singles.length; i++) {
        if ((i & 255) === 255 && call.overdue()) {
          timeLeft = false;
          break;
        }
        const item = singles[i] as Item;
        const wall = item.start.wall;
        if (wall < low(item) || wall > high(item)) continue;
        const id = item.recurrenceId;
        const rid = id && {
          wall: id.wall,
          instant: id.date || id.zone === null ? null : instantOf(id, UTC),
          date: id.date,
        };
        const found = hit(item, wall, rid);
        if (found) hits.push(found);
      }

      /** One try at a series: its hits, or an Overrun (or ical.js's error) thrown. */
      const expand = (item: Item, spend: Spend): Hit[] => {
        const found: Hit[] = [];
        for (const wall of occurrences(item, low(item), high(item), floating, spend)) {
          if (found.length >= SERIES_DAY_MAX) break;
          spend(0);
          const timedZone = item.start.date ? null : item.start.zone;
          const instant = timedZone ? instantOf({ ...item.start, wall }, floating) : null;
          if (marked(item.exdates, wall, instant) || marked(item.replaced, wall, instant)) continue;
          const h = hit(item, wall, { wall, instant, date: item.start.date }, instant);
          if (h) found.push(h);
        }
        return found;
      };
      for (const h of call.expandSeries(expand, timeLeft)) hits.push(h);

      const events = hits.sort(byStart).slice(0, EVENTS_MAX).map(sourceEvent);
      // Ids stay unique even when a feed repeats a UID.
      const seen = new Map<string, number>();
      for (const event of events) {
        const n = (seen.get(event.id) ?? 0) + 1;
        seen.set(event.id, n);
        if (n > 1) event.id = `${event.id}#${n}`;
      }
      return events;
    },
  };
}

const dayString = (wall: number) => stamp(wall, true, false).replace(/^(\d{4})(\d{2})(\d{2})$/, '$1-$2-$3');
const floorDay = (wall: number) => wall - (((wall % DAY) + DAY) % DAY);

/**
 * Start wall times of a series' occurrences in [low, high], from DTSTART, each RRULE and RDATE.
 * `spend` is told of every step and throws an Overrun to stop.
 */
function occurrences(item: Item, low: number, high: number, floating: OffsetAt, spend: (n: number) => void): number[] {
  const found = new Set<number>();
  const consider = (wall: number) => {
    if (wall >= low && wall <= high) found.add(wall);
  };
  consider(item.start.wall);
  item.rdates.forEach((r, i) => {
    // A feed may list a hundred thousand RDATEs; each one read in another zone costs a few Intl calls.
    if ((i & 63) === 63) spend(0);
    const same = r.date === item.start.date && (r.date || r.zoneKey === item.start.zoneKey);
    consider(same ? r.wall : rdateWall(r, item, floating));
  });
  for (const base of item.rules) {
    const rule = base.clone();
    let until = untilWall(base, item, floating);
    const last = lastCounted(base, item.start.wall);
    if (last !== null) {
      // Now it can be fast-forwarded like any other rule, instead of counted from DTSTART every call.
      rule.count = null;
      until = until === null ? last : Math.min(until, last);
    }
    if (until !== null && until < low) continue;
    rule.until = floatingTime(until === null ? high : Math.min(until, high), false);
    const from = fastForward(item.start.wall, rule, low);
    try {
      const it = guardedIterator(rule, floatingTime(from, item.start.date), spend);
      for (let t = it.next(); t; t = it.next()) {
        const wall = wallMs(t.year, t.month, t.day, t.hour, t.minute, t.second);
        if (wall > high) break;
        consider(wall);
      }
    } catch (err) {
      if (err instanceof Overrun) throw err;
      // ical.js gave up part-way through the rule; what it found stands.
    }
  }
  return [...found].sort((a, b) => a - b);
}

/** An RDATE whose type differs from DTSTART's: its wall time in the series' zone (or its date). */
function rdateWall(r: TimeValue, item: Item, floating: OffsetAt): number {
  if (item.start.date) return floorDay(r.wall);
  const instant = instantOf(r, floating);
  const zone = item.start.zone ?? floating;
  return instant + zone(instant);
}

// ---- screening ----

/** Parameters whose quoted values ical.js reads as lists ("a","b"), in the iCalendar design it uses. */
const LIST_PARAMS = new Set(['member', 'delegated-to', 'delegated-from']);

/**
 * What ical.js will make of one unfolded line, from its first characters (at least PARAM_TEXT_MAX + 3):
 * a component's BEGIN or END, a line whose name and parameters are over PARAM_TEXT_MAX characters or
 * PARAMS_MAX parameters, or an ordinary line. Follows ical.js's own reading of parameters (a quote
 * opens only right after a parameter's "=", a ":" ends them only outside quotes and names), so no
 * line it would read slowly passes; stranger lines may count a few parameters more than it does.
 */
function lineKind(head: string, more: boolean): 'begin' | 'end' | 'over' | 'ok' {
  const limit = Math.min(head.length, PARAM_TEXT_MAX);
  let i = 0;
  while (i < limit && head[i] !== ':' && head[i] !== ';') i++;
  if (i < limit && head[i] === ':') {
    const name = i <= 5 ? head.slice(0, i).toLowerCase() : '';
    return name === 'begin' ? 'begin' : name === 'end' ? 'end' : 'ok';
  }
  let params = 0;
  let state: 'name' | 'value' | 'quoted' | 'closed' = 'value';
  let nameStart = i + 1;
  let list = false;
  for (; i < limit; i++) {
    const c = head[i];
    if (state === 'quoted') {
      if (c !== '"') continue;
      // ical.js keeps a list parameter's quotes open across '","'.
      if (list && head[i + 1] === ',' && head[i + 2] === '"') i += 2;
      else state = 'closed';
    } else if (c === ';' && state !== 'name') {
      if (++params > PARAMS_MAX) return 'over';
      state = 'name';
      nameStart = i + 1;
    } else if (state === 'name') {
      if (c === ';') {
        if (++params > PARAMS_MAX) return 'over';
        nameStart = i + 1;
      } else if (c === '=') {
        list = i - nameStart <= 16 && LIST_PARAMS.has(head.slice(nameStart, i).toLowerCase());
        if (head[i + 1] === '"') {
          state = 'quoted';
          i++;
        } else state = 'value';
      }
    } else if (c === ':') {
      return 'ok';
    }
  }
  return more || head.length > PARAM_TEXT_MAX ? 'over' : 'ok';
}

/**
 * Leaves out what ical.js would read in quadratic time: a line whose name and parameters run past
 * PARAM_TEXT_MAX characters or PARAMS_MAX parameters. No exporter writes one, so it is hostile or
 * broken; the component holding it (a VEVENT, a VTIMEZONE) goes with it, as a malformed event would,
 * because without the line it could mean something else (an RRULE, EXDATE or STATUS dropped). Such a
 * line outside any component goes alone. Values may be long: ical.js reads them in linear time.
 * Lines are unfolded and components nested as ical.js does; the text comes back as it was when all is well.
 */
function screen(text: string): { text: string; unreadableRules: number } {
  const cuts: [number, number][] = [];
  /** Lines replaced as they were repaired: [start, end, the line as it should have been]. */
  const repairs: [number, number, string][] = [];
  let unreadableRules = 0;
  let ruleBroken = false;
  const headMax = PARAM_TEXT_MAX + 3;
  let depth = 0;
  let topStart = 0;
  let dropTop = false;
  let pos = 0;
  while (pos < text.length) {
    const lineStart = pos;
    let head = '';
    let more = false;
    do {
      // ical.js: a line ends at "\n" (with a "\r" before it), and one starting with a space or tab continues it.
      const nl = text.indexOf('\n', pos);
      const stop = nl === -1 ? text.length : text[nl - 1] === '\r' ? nl - 1 : nl;
      const from = pos === lineStart ? pos : pos + 1;
      if (head.length < headMax) head += text.slice(from, Math.min(stop, from + headMax - head.length));
      else if (stop > from) more = true;
      pos = nl === -1 ? text.length : nl + 1;
    } while (pos < text.length && (text[pos] === ' ' || text[pos] === '\t'));

    const kind = lineKind(head, more);
    if (kind === 'begin') {
      depth++;
      if (depth === 2) {
        topStart = lineStart;
        dropTop = false;
        ruleBroken = false;
      }
    } else if (kind === 'end') {
      if (depth === 2 && dropTop) cuts.push([topStart, pos]);
      if (depth === 2 && ruleBroken) unreadableRules++;
      depth--;
    } else if (kind === 'ok' && depth >= 2 && !more && RULE_LINE.test(head)) {
      const rule = repairedRule(head);
      if (rule === null) {
        dropTop = true;
        ruleBroken = true;
      } else if (rule !== head) repairs.push([lineStart, pos, `${rule}\r\n`]);
    } else if (kind === 'over') {
      if (depth >= 2) dropTop = true;
      else cuts.push([lineStart, pos]);
    }
  }
  if (depth >= 2 && dropTop) cuts.push([topStart, text.length]);
  if (depth >= 2 && ruleBroken) unreadableRules++;
  if (!cuts.length && !repairs.length) return { text, unreadableRules };
  // Cuts take whole components; a repair inside a cut goes with it.
  const edits: [number, number, string][] = [
    ...cuts.map(([a, b]): [number, number, string] => [a, b, '']),
    ...repairs.filter(([a]) => !cuts.some(([c, d]) => a >= c && a < d)),
  ];
  const kept: string[] = [];
  let from = 0;
  for (const [a, b, insert] of edits.sort((p, q) => p[0] - q[0])) {
    if (a > from) kept.push(text.slice(from, a));
    if (a >= from) kept.push(insert);
    from = Math.max(from, b);
  }
  kept.push(text.slice(from));
  return { text: kept.join(''), unreadableRules };
}

const RULE_LINE = /^(RRULE|EXRULE)[:;]/i;

/** How many times a day a fixed-period rule repeats (by its FREQ and INTERVAL; BY parts may thin it). */
function perDay(rule: ICAL.Recur): number {
  const period = FIXED_PERIOD[rule.freq];
  return period ? DAY / (period * Math.max(1, rule.interval || 1)) : 0;
}

/**
 * A repeat rule line as ical.js can read it, or null when it cannot be: space around its separators
 * (Exchange's CDO writes BYDAY=MO, TU, WE) is unambiguous and taken out; anything else unreadable
 * leaves the event out (as a malformed event would be), and the calendar says so.
 */
function repairedRule(line: string): string | null {
  const colon = line.indexOf(':');
  const name = line.slice(0, colon);
  const value = line.slice(colon + 1);
  const repaired = value.replace(/\s*([;,=])\s*/g, '$1').trim();
  try {
    ICAL.Recur.fromString(repaired);
  } catch {
    return null;
  }
  return repaired === value ? line : `${name}:${repaired}`;
}

/**
 * Parses an iCalendar feed. Throws IcsError when the text is not a VCALENDAR (a web page, JSON,
 * nothing) or ical.js cannot read it. Malformed events inside a readable calendar are skipped, and
 * so are events with a line no exporter writes (see screen()).
 */
/**
 * `now`: the clock of the wall-time budgets. Tests of what a calendar lists pass one that stands still,
 * so their results do not depend on how busy the machine is; the budgets' own tests move it.
 */
export function parseIcs(text: string, now: BudgetClock = () => performance.now()): ParsedCalendar {
  const body = text.replace(/^\uFEFF/, '').trimStart();
  if (!/^BEGIN:VCALENDAR\r?\n/i.test(body)) throw new IcsError();
  let parsed: unknown;
  const screened = screen(body);
  try {
    parsed = ICAL.parse(screened.text);
  } catch {
    throw new IcsError();
  }
  if (!Array.isArray(parsed)) throw new IcsError();
  const jcals = (typeof parsed[0] === 'string' ? [parsed] : parsed) as unknown[];
  const roots: ICAL.Component[] = [];
  for (const jcal of jcals) {
    if (Array.isArray(jcal) && jcal[0] === 'vcalendar') roots.push(new ICAL.Component(jcal));
  }
  if (!roots.length) throw new IcsError();
  const items = roots.flatMap((root) => calendarItems(root));
  const name = cleanText(roots[0]?.getFirstPropertyValue('x-wr-calname'), NAME_MAX);
  const notes: string[] = [];
  const n = screened.unreadableRules;
  if (n)
    notes.push(
      `${n} event${n === 1 ? ' has a repeat rule' : 's have repeat rules'} Daybook cannot read, so ${n === 1 ? 'it is' : 'they are'} left out.`,
    );
  const fast = items.filter((item) => item.secondly).length;
  if (fast)
    notes.push(`${fast} event${fast === 1 ? ' repeats' : 's repeat'} every few seconds: shown at most once a minute.`);
  const often = items.filter((item) => item.rules.some((r) => perDay(r) > SERIES_DAY_MAX)).length;
  if (often)
    notes.push(
      `${often} event${often === 1 ? ' repeats' : 's repeat'} more than ${SERIES_DAY_MAX} times a day: each day lists the first ${SERIES_DAY_MAX}.`,
    );
  return createCalendar(name || null, items, notes, now);
}
