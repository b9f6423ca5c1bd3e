// A user's events for a day: each connection read (through the cache) and placed in the day's window
// of the user's zone, merged, with what failed reported beside them rather than thrown.
import type { TCalendarEvent, TCalendarProblem } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { dayWindow, zonedIso } from '../../lib/day.ts';
import { FetchError } from '../../lib/safe-fetch.ts';
import type { Cache } from './calendar.cache.ts';
import { MESSAGES } from './calendar.messages.ts';
import type { OAuthProviders } from './calendar.providers.ts';
import type { CalendarRepo, ConnectionRow } from './calendar.repo.ts';
import { NeedsReconnect } from './calendar.secrets.ts';
import type { IcsSubscriptions } from './calendar.subscriptions.ts';
import type { CalendarTokens } from './calendar.tokens.ts';
import {
  type CalendarService,
  type DayWindow,
  type OAuthProviderId,
  ProviderApiError,
  type SourceEvent,
} from './calendar.types.ts';
import { EVENTS_MAX, IcsError } from './ics.ts';

/** Events of one connection on one day (the ICS reader's cap, for every provider): more is no schedule a person reads. */
export const DAY_EVENTS_MAX = EVENTS_MAX;

/** Memos of pure functions of a zone (and a date): building an Intl formatter and the day window's
 * wall-clock readings were most of the service's own time in a profile of reading a day. */
const MEMO_MAX = 1000;
function memo<T>(map: Map<string, T>, key: string, make: () => T): T {
  let value = map.get(key);
  if (value === undefined) {
    // Names differ also in case ("europe/berlin"): a long-running server could collect many.
    if (map.size >= MEMO_MAX) map.clear();
    value = make();
    map.set(key, value);
  }
  return value;
}

const zones = new Map<string, string>();
/** The zone's canonical name; UTC for one this runtime does not know. */
function canonicalZone(zone: string): string {
  return memo(zones, zone, () => {
    try {
      return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
    } catch {
      return 'UTC';
    }
  });
}

const windows = new Map<string, DayWindow>();
/** The day's window (frozen: every read of that day shares it). */
const windowOf = (date: string, zone: string) =>
  memo(windows, `${date} ${zone}`, () => Object.freeze(dayWindow(date, zone)));

/** The event in the day's terms (a local time, or the dates of an all-day one); null when it is not that day's. */
function place(event: SourceEvent, row: ConnectionRow, window: DayWindow): TCalendarEvent | null {
  const common = {
    title: event.title,
    location: event.location,
    url: event.url,
    calendar: row.display,
    connection_id: row.id,
  };
  if (event.allDay) {
    if (!(event.startDate <= window.date && window.date < event.endDate)) return null;
    return { ...common, start: event.startDate, end: event.endDate, all_day: true };
  }
  // A zero-length event at the day's first instant belongs to the day.
  const overlaps =
    event.start < window.end && (event.end > window.start || event.start.getTime() === window.start.getTime());
  if (!overlaps) return null;
  return {
    ...common,
    start: zonedIso(event.start, window.timeZone),
    end: zonedIso(event.end, window.timeZone),
    all_day: false,
  };
}

const byDay = (a: TCalendarEvent, b: TCalendarEvent) => {
  if (a.all_day !== b.all_day) return a.all_day ? -1 : 1;
  const at = a.all_day ? a.start : Date.parse(a.start);
  const bt = b.all_day ? b.start : Date.parse(b.start);
  if (at !== bt) return at < bt ? -1 : 1;
  return a.title.localeCompare(b.title);
};

export interface CalendarEventsDeps {
  repo: CalendarRepo;
  clock: Clock;
  log: FastifyBaseLogger;
  /** What each connection gave for a window, by `<connection id>:<window>`. */
  cache: Cache<{ events: SourceEvent[]; notes: string[] }>;
  /** Drops what is cached of a connection. */
  forget(id: number): void;
  providers: OAuthProviders;
  tokens: CalendarTokens;
  ics: Pick<IcsSubscriptions, 'events'>;
}

export function createCalendarEvents(deps: CalendarEventsDeps): Pick<CalendarService, 'eventsForDay'> {
  const { repo, clock, log, cache: eventsCache, forget, providers: oauth, tokens, ics } = deps;
  const nowMs = () => clock.now().getTime();

  async function markNeedsReconnect(id: number, reason: string) {
    await repo.setStatus(id, { status: 'needs_reconnect', lastError: reason, updatedAt: clock.now() });
    forget(id);
  }

  async function oauthEvents(row: ConnectionRow, window: DayWindow): Promise<SourceEvent[]> {
    const provider = oauth.get(row.provider as OAuthProviderId);
    // The provider was switched off after the user connected it.
    if (!provider) throw new ProviderApiError('unavailable', 'provider not enabled');
    const token = await tokens.accessToken(row);
    try {
      return await provider.api.events(token, window);
    } catch (err) {
      if (!(err instanceof ProviderApiError) || err.kind !== 'unauthorized') throw err;
      // Refused before its time (revoked, or a clock skew): one refresh, one more try.
      return provider.api.events(await tokens.refresh(row, token), window);
    }
  }

  async function connectionEvents(
    row: ConnectionRow,
    window: DayWindow,
  ): Promise<{ events: TCalendarEvent[]; problem?: TCalendarProblem } | { problem: TCalendarProblem }> {
    const problem = (status: TCalendarProblem['status'], message: string) => ({
      problem: { connection_id: row.id, provider: row.provider, calendar: row.display, status, message },
    });
    if (row.status === 'needs_reconnect') return problem('needs_reconnect', row.lastError ?? MESSAGES.needsReconnect);
    try {
      const key = `${row.id}:${window.start.toISOString()}:${window.end.toISOString()}:${window.timeZone}`;
      const { events: source, notes } = await eventsCache.get(key, async () =>
        row.provider === 'ics' ? ics.events(row, window) : { events: await oauthEvents(row, window), notes: [] },
      );
      const synced = row.lastSyncedAt?.getTime() ?? 0;
      // The page's "last synced": written at most once a minute, not on every read.
      if (row.lastError || nowMs() - synced > 60_000)
        await repo.setStatus(row.id, { lastSyncedAt: clock.now(), lastError: null, updatedAt: clock.now() });
      return {
        events: source
          .map((e) => place(e, row, window))
          .filter((e): e is TCalendarEvent => e !== null)
          .sort(byDay)
          .slice(0, DAY_EVENTS_MAX),
        // Read, with something left out: its owner is told what (never silently).
        ...(notes.length ? problem('partial', notes.join(' ')) : {}),
      };
    } catch (err) {
      if (err instanceof NeedsReconnect) {
        if (!err.recorded) await markNeedsReconnect(row.id, err.reason);
        return problem('needs_reconnect', err.reason);
      }
      const message = row.provider === 'ics' ? MESSAGES.icsUnreadable : MESSAGES.unavailable;
      // The reason, not the address or any token.
      log.warn(
        { connectionId: row.id, provider: row.provider, reason: err instanceof Error ? err.message : String(err) },
        'calendar read failed',
      );
      if (err instanceof FetchError || err instanceof IcsError || err instanceof ProviderApiError)
        await repo.setStatus(row.id, { lastError: message, updatedAt: clock.now() });
      return problem('unavailable', message);
    }
  }

  return {
    async eventsForDay(userId, date, timeZone) {
      // One spelling per zone ("europe/berlin" is Europe/Berlin), for the cache and the answer.
      const day = await repo.dayOf(userId);
      const zone = canonicalZone(timeZone ?? day.timeZone ?? 'UTC');
      const window = windowOf(date, zone);
      const rows = day.connections;
      const results = await Promise.all(rows.map((row) => connectionEvents(row, window)));
      const events: TCalendarEvent[] = [];
      const problems: TCalendarProblem[] = [];
      for (const r of results) {
        if (r.problem) problems.push(r.problem);
        if ('events' in r) for (const event of r.events) events.push(event);
      }
      return { date, time_zone: zone, events: events.sort(byDay), problems };
    },
  };
}
