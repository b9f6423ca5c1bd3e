// Google Calendar API v3 with an OAuth access token: the account behind it (its primary calendar's id
// is the address) and a day's events across the calendars the user shows in Google Calendar.
// Reference: developers.google.com/calendar/api/v3/reference (calendarList.list, events.list).
import { z } from 'zod';
import type { CalendarApi, DayWindow, SourceEvent } from '../calendar.types.ts';
import {
  apiBase,
  getJson,
  isDate,
  MAX_PAGES,
  NO_TITLE,
  nextDate,
  onDay,
  type ProviderApiOptions,
  textOrNull,
  unexpectedShape,
  webUrl,
} from './provider-http.ts';

const LABEL = 'Google Calendar';
/** Calendars read for a day: the primary one first, then the others shown in Google Calendar. */
const MAX_CALENDARS = 10;
/** Per page: the most calendarList.list gives is 250; events.list gives up to 2500. */
const PAGE_SIZE = '250';

const ZCalendar = z.object({ id: z.string().min(1) });
const ZPage = z.object({ items: z.array(z.unknown()).optional(), nextPageToken: z.string().min(1).optional() });
const ZListEntry = z.object({
  id: z.string().min(1),
  primary: z.boolean().optional(),
  // The API leaves false booleans out: an entry without `selected` is hidden in Google Calendar.
  selected: z.boolean().optional(),
});
const ZTime = z.object({ date: z.string().optional(), dateTime: z.string().optional() });
const ZEvent = z.object({
  id: z.string().min(1),
  status: z.string().optional(),
  summary: z.string().nullish(),
  location: z.string().nullish(),
  htmlLink: z.string().nullish(),
  start: ZTime,
  end: ZTime.optional(),
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw unexpectedShape(LABEL, parsed.error);
  return parsed.data;
}

/** An event as SourceEvent, or null for a cancelled one or one without usable times. */
function toSourceEvent(item: unknown): SourceEvent | null {
  const parsed = ZEvent.safeParse(item);
  if (!parsed.success || parsed.data.status === 'cancelled') return null;
  const event = parsed.data;
  const common = {
    id: event.id,
    title: textOrNull(event.summary) ?? NO_TITLE,
    location: textOrNull(event.location),
    url: webUrl(event.htmlLink),
  };
  const startDate = event.start.date;
  if (isDate(startDate)) {
    const endDate = event.end?.date;
    return {
      ...common,
      allDay: true,
      startDate,
      endDate: isDate(endDate) && endDate > startDate ? endDate : nextDate(startDate),
    };
  }
  const start = Date.parse(event.start.dateTime ?? '');
  if (Number.isNaN(start)) return null;
  const end = Date.parse(event.end?.dateTime ?? '');
  return {
    ...common,
    allDay: false,
    start: new Date(start),
    end: new Date(Number.isNaN(end) ? start : Math.max(start, end)),
  };
}

export function createGoogleCalendarApi(options: ProviderApiOptions): CalendarApi {
  const base = apiBase(options.apiUrl);

  function get(path: string, params: Record<string, string>, accessToken: string, signal?: AbortSignal) {
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return getJson(LABEL, url, accessToken, options, signal);
  }

  /** Ids of the calendars to read: the primary one, then those shown (`selected`), at most 10. */
  async function calendarIds(accessToken: string, signal?: AbortSignal): Promise<string[]> {
    const ids: string[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params: Record<string, string> = { maxResults: PAGE_SIZE };
      if (pageToken) params.pageToken = pageToken;
      const body = parse(ZPage, await get('/users/me/calendarList', params, accessToken, signal));
      for (const item of body.items ?? []) {
        const entry = ZListEntry.safeParse(item).data;
        if (!entry) continue;
        if (entry.primary) ids.unshift(entry.id);
        else if (entry.selected) ids.push(entry.id);
      }
      pageToken = body.nextPageToken;
      if (!pageToken) break;
    }
    return [...new Set(ids)].slice(0, MAX_CALENDARS);
  }

  async function calendarEvents(
    calendarId: string,
    accessToken: string,
    window: DayWindow,
    signal?: AbortSignal,
  ): Promise<SourceEvent[]> {
    const events: SourceEvent[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params: Record<string, string> = {
        singleEvents: 'true',
        orderBy: 'startTime',
        timeMin: window.start.toISOString(),
        timeMax: window.end.toISOString(),
        timeZone: window.timeZone,
        maxResults: PAGE_SIZE,
      };
      if (pageToken) params.pageToken = pageToken;
      const body = parse(
        ZPage,
        await get(`/calendars/${encodeURIComponent(calendarId)}/events`, params, accessToken, signal),
      );
      for (const item of body.items ?? []) {
        const event = toSourceEvent(item);
        if (event && onDay(event, window)) events.push(event);
      }
      pageToken = body.nextPageToken;
      if (!pageToken) break;
    }
    return events;
  }

  return {
    async account(accessToken, signal) {
      const calendar = parse(ZCalendar, await get('/calendars/primary', {}, accessToken, signal));
      return { uid: calendar.id, display: calendar.id };
    },

    async events(accessToken, window, signal) {
      const ids = await calendarIds(accessToken, signal);
      const lists = await Promise.all(ids.map((id) => calendarEvents(id, accessToken, window, signal)));
      // A meeting on two of the user's calendars has the same event id on both: show it once.
      const byId = new Map<string, SourceEvent>();
      for (const event of lists.flat()) if (!byId.has(event.id)) byId.set(event.id, event);
      return [...byId.values()];
    },
  };
}
