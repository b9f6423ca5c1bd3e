// Time zones as the schedule and the messages read them: a zone's local date and time, and a zone
// the runtime may have dropped.
import type { ZoneNow } from './daily.repo.ts';

/** A time zone's local date and HH:MM at an instant. */
const formatters = new Map<string, Intl.DateTimeFormat>();
export function zoneNow(tz: string, now: Date): ZoneNow {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(tz, f);
  }
  const parts = Object.fromEntries(f.formatToParts(now).map((p) => [p.type, p.value]));
  return { tz, localDate: `${parts.year}-${parts.month}-${parts.day}`, localTime: `${parts.hour}:${parts.minute}` };
}

/** A time zone the runtime knows, else UTC (a stored zone the runtime dropped must not stop the tick). */
export function knownZone(tz: string | null): string {
  if (!tz) return 'UTC';
  if (formatters.has(tz)) return tz;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return tz;
  } catch {
    return 'UTC';
  }
}
