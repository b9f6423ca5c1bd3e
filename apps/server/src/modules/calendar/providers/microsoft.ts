// Microsoft Graph v1.0 with an OAuth access token (Calendars.ReadBasic is enough): the account behind
// it, from the default calendar's owner (GET /me would need User.Read), and a day's events from the
// default calendar's calendarView, which expands recurring events. All times are asked for in UTC.
// Reference: learn.microsoft.com/graph/api/user-list-calendarview.
import { z } from 'zod';
import type { CalendarApi, SourceEvent } from '../calendar.types.ts';
import {
  apiBase,
  failure,
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

const LABEL = 'Microsoft Outlook';
/** Graph's calendarView gives 10 events a page unless $top asks for more. */
const PAGE_SIZE = '100';
const SELECT = 'subject,start,end,isAllDay,isCancelled,location,webLink';
// Graph writes event times in this zone, as local times without an offset.
const PREFER_UTC = { Prefer: 'outlook.timezone="UTC"' };

const ZCalendar = z.object({
  id: z.string().min(1),
  owner: z.object({ name: z.string().nullish(), address: z.string().nullish() }).nullish(),
});
const ZPage = z.object({ value: z.array(z.unknown()), '@odata.nextLink': z.string().optional() });
const ZTime = z.object({ dateTime: z.string(), timeZone: z.string().nullish() });
const ZEvent = z.object({
  id: z.string().min(1),
  subject: z.string().nullish(),
  isAllDay: z.boolean().nullish(),
  isCancelled: z.boolean().nullish(),
  webLink: z.string().nullish(),
  location: z.object({ displayName: z.string().nullish() }).nullish(),
  start: ZTime,
  end: ZTime,
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw unexpectedShape(LABEL, parsed.error);
  return parsed.data;
}

const LOCAL = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(\.\d+)?$/;

/** A Graph date-time in UTC ("2026-11-24T09:00:00.0000000") as an instant; NaN when it is not one. */
function utcInstant(time: z.infer<typeof ZTime>): number {
  // Some other zone means Graph ignored the Prefer header: those times cannot be placed.
  if (time.timeZone && !/^(etc\/)?utc$/i.test(time.timeZone)) throw unexpectedShape(LABEL);
  const match = LOCAL.exec(time.dateTime);
  if (!match) return Number.NaN;
  return Date.parse(`${match[1]}${(match[2] ?? '').slice(0, 4)}Z`);
}

function toSourceEvent(item: unknown): SourceEvent | null {
  const parsed = ZEvent.safeParse(item);
  if (!parsed.success || parsed.data.isCancelled) return null;
  const event = parsed.data;
  const common = {
    id: event.id,
    title: textOrNull(event.subject) ?? NO_TITLE,
    location: textOrNull(event.location?.displayName),
    url: webUrl(event.webLink),
  };
  if (event.isAllDay) {
    // All-day events come as midnights in the zone asked for, so with UTC the date part is the date.
    const startDate = event.start.dateTime.slice(0, 10);
    const endDate = event.end.dateTime.slice(0, 10);
    if (!isDate(startDate)) return null;
    return {
      ...common,
      allDay: true,
      startDate,
      endDate: isDate(endDate) && endDate > startDate ? endDate : nextDate(startDate),
    };
  }
  const start = utcInstant(event.start);
  const end = utcInstant(event.end);
  if (Number.isNaN(start)) return null;
  return {
    ...common,
    allDay: false,
    start: new Date(start),
    end: new Date(Number.isNaN(end) ? start : Math.max(start, end)),
  };
}

export function createMicrosoftCalendarApi(options: ProviderApiOptions): CalendarApi {
  const base = apiBase(options.apiUrl);
  const origin = new URL(base).origin;

  return {
    async account(accessToken, signal) {
      const calendar = parse(
        ZCalendar,
        await getJson(LABEL, new URL(`${base}/me/calendar`), accessToken, options, signal),
      );
      const address = calendar.owner?.address?.trim();
      return {
        uid: address ? address.toLowerCase() : calendar.id,
        display: address || calendar.owner?.name?.trim() || 'Outlook calendar',
      };
    },

    async events(accessToken, window, signal) {
      let url = new URL(`${base}/me/calendarView`);
      url.searchParams.set('startDateTime', window.start.toISOString());
      url.searchParams.set('endDateTime', window.end.toISOString());
      url.searchParams.set('$select', SELECT);
      url.searchParams.set('$top', PAGE_SIZE);
      url.searchParams.set('$orderby', 'start/dateTime');
      const events: SourceEvent[] = [];
      for (let page = 0; page < MAX_PAGES; page++) {
        const body = parse(ZPage, await getJson(LABEL, url, accessToken, options, signal, PREFER_UTC));
        for (const item of body.value) {
          const event = toSourceEvent(item);
          if (event && onDay(event, window)) events.push(event);
        }
        const next = body['@odata.nextLink'];
        if (!next) break;
        let nextUrl: URL;
        try {
          nextUrl = new URL(next);
        } catch (err) {
          throw unexpectedShape(LABEL, err);
        }
        // The next page goes with the access token: only to the API the operator configured.
        if (nextUrl.origin !== origin) throw failure(`${LABEL} pointed the next page at another host.`);
        url = nextUrl;
      }
      return events;
    },
  };
}
