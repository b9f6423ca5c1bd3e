// ICS subscriptions: a calendar's public address, checked, fetched through the SSRF-safe fetcher and
// parsed (off the event loop) before it is stored, then read again for the days asked for.

import { CALENDAR_CONNECTIONS_MAX } from '@daybook/contracts';
import type { Clock } from '../../lib/clock.ts';
import { FetchError, type SafeFetch } from '../../lib/safe-fetch.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { Cache } from './calendar.cache.ts';
import { type CalendarConnections, presentConnection } from './calendar.connections.ts';
import { MESSAGES } from './calendar.messages.ts';
import type { CalendarRepo, ConnectionRow } from './calendar.repo.ts';
import { type IcsSecret, openSecret } from './calendar.secrets.ts';
import { withTimeout } from './calendar.timeout.ts';
import { CalendarError, type CalendarService, type DayWindow, type SourceEvent } from './calendar.types.ts';
import { IcsError } from './ics.ts';
import type { IcsReader } from './ics-reader.ts';

const ICS_ACCEPT = [
  'text/calendar',
  'text/plain',
  'application/ics',
  'application/calendar',
  'text/x-vcalendar',
  'application/octet-stream',
];

/** webcal:// and webcals:// are https:// (as every calendar app reads them); only web addresses pass. */
export function icsAddress(raw: string): string | null {
  let text = raw.trim();
  if (/^webcals?:\/\//i.test(text)) text = text.replace(/^webcals?:\/\//i, 'https://');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password) return null;
  url.hash = '';
  return url.href;
}

function icsProblem(err: unknown): CalendarError {
  if (err instanceof CalendarError) return err;
  if (err instanceof IcsError) return new CalendarError('not_a_calendar', err.message);
  if (err instanceof FetchError) {
    if (err.code === 'blocked') return new CalendarError('refused', MESSAGES.refused);
    if (err.code === 'bad_url') return new CalendarError('invalid_url', MESSAGES.invalidUrl);
    if (err.code === 'unsupported_type')
      return new CalendarError('not_a_calendar', 'That address returned a web page, not a calendar (an .ics file).');
    if (err.code === 'too_large') return new CalendarError('unreachable', MESSAGES.tooLarge);
    if (err.code === 'http_status' && (err.status === 404 || err.status === 410))
      return new CalendarError('unreachable', MESSAGES.notFound);
    return new CalendarError('unreachable', MESSAGES.unreachable);
  }
  return new CalendarError('unreachable', MESSAGES.unreachable);
}

export interface IcsSubscriptionsDeps {
  repo: CalendarRepo;
  /** Seals the address. */
  box: SecretBox;
  clock: Clock;
  /** The SSRF-safe fetcher (ICS addresses are the user's choice). */
  safeFetch: SafeFetch;
  /** Parses ICS calendars off the event loop. */
  icsReader: IcsReader;
  /** One ICS read in all, waiting for a fetch slot included. */
  deadlineMs: number;
  /** The calendars' text, by `<connection id>:ics`. */
  cache: Cache<string>;
  /** Stores the new connection. */
  save: CalendarConnections['save'];
}

export function createIcsSubscriptions(deps: IcsSubscriptionsDeps) {
  const { repo, box, clock, icsReader, cache: icsCache, save } = deps;
  /** Users adding an ICS calendar right now: one at a time each. */
  const adding = new Set<number>();

  /** The calendar's text, through the safe fetcher, within one deadline (waiting for a slot included). */
  async function fetchIcsText(url: string): Promise<string> {
    const page = await withTimeout(
      deps.safeFetch(url, { accept: ICS_ACCEPT }),
      deps.deadlineMs,
      'Reading the calendar',
    );
    return page.text;
  }

  const add: CalendarService['addIcs'] = async (userId, rawUrl, name) => {
    const url = icsAddress(rawUrl);
    if (!url) throw new CalendarError('invalid_url', MESSAGES.invalidUrl);
    // One at a time per user: a user cannot tie up every fetch slot with slow addresses.
    if (adding.has(userId)) throw new CalendarError('busy', MESSAGES.busyAdding);
    adding.add(userId);
    try {
      const uid = `ics-${box.digest(`${userId}\n${url}`).slice(0, 32)}`;
      const existing = await repo.findByUid('ics', uid);
      if (existing) throw new CalendarError('duplicate', MESSAGES.duplicate);
      if ((await repo.list(userId)).length >= CALENDAR_CONNECTIONS_MAX)
        throw new CalendarError('too_many', MESSAGES.tooMany);
      let text: string;
      let calendarName: string | null;
      try {
        text = await fetchIcsText(url);
        calendarName = (await icsReader.read(text)).name;
      } catch (err) {
        throw icsProblem(err);
      }
      const display = name?.trim() || calendarName || new URL(url).hostname;
      const saved = await save({
        userId,
        provider: 'ics',
        uid,
        display,
        secret: box.sealJson({ url } satisfies IcsSecret),
        accessExpiresAt: null,
      });
      if (saved === 'other_user') throw new CalendarError('duplicate', MESSAGES.duplicate);
      if (!saved) throw new CalendarError('too_many', MESSAGES.tooMany);
      await repo.setStatus(saved.id, { lastSyncedAt: clock.now(), updatedAt: clock.now() });
      // The text just read serves the first days asked for.
      void icsCache.get(`${saved.id}:ics`, async () => text);
      return presentConnection({ ...saved, lastSyncedAt: clock.now() });
    } finally {
      adding.delete(userId);
    }
  };

  /** The window's events of a stored ICS connection, and what of the calendar was left out. */
  async function events(row: ConnectionRow, window: DayWindow): Promise<{ events: SourceEvent[]; notes: string[] }> {
    const secret = openSecret<IcsSecret>(box, row);
    const text = await icsCache.get(`${row.id}:ics`, () => fetchIcsText(secret.url));
    const { events, notes } = await icsReader.read(text, window);
    return { events, notes };
  }

  return { add, events };
}

export type IcsSubscriptions = ReturnType<typeof createIcsSubscriptions>;
