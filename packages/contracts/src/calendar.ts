// Calendars: connections (Google, Microsoft, ICS addresses), allauth's provider shapes, and a day's
// events (GET /api/calendar/events/?date=YYYY-MM-DD).
import { z } from 'zod';

/** Calendars one user may connect. */
export const CALENDAR_CONNECTIONS_MAX = 10;
/** Longest ICS address accepted. */
export const ICS_URL_MAX = 2000;

export const ZCalendarProviderId = z.enum(['google', 'microsoft', 'ics']);
export type TCalendarProviderId = z.infer<typeof ZCalendarProviderId>;

/** allauth's Provider (GET /config data.socialaccount.providers, and each account's provider). */
export const ZAllauthProvider = z.object({
  id: z.string(),
  name: z.string(),
  flows: z.array(z.enum(['provider_redirect', 'provider_token'])),
  client_id: z.string().optional(),
  openid_configuration_url: z.string().optional(),
});
export type TAllauthProvider = z.infer<typeof ZAllauthProvider>;

/** allauth's ProviderAccount (GET /account/providers). */
export const ZProviderAccount = z.object({ uid: z.string(), display: z.string(), provider: ZAllauthProvider });
export type TProviderAccount = z.infer<typeof ZProviderAccount>;

export const ZProviderAccountsResponse = z.object({ status: z.literal(200), data: z.array(ZProviderAccount) });
export type TProviderAccountsResponse = z.infer<typeof ZProviderAccountsResponse>;

export const ZCalendarConnectionStatus = z.enum(['connected', 'needs_reconnect']);
export type TCalendarConnectionStatus = z.infer<typeof ZCalendarConnectionStatus>;

const DATE_MESSAGE = 'must be a date, YYYY-MM-DD';
export const ZLocalDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, DATE_MESSAGE)
  .refine((v) => {
    const d = new Date(`${v}T00:00:00Z`);
    // Years a calendar can hold, with a next day that is still a date.
    const year = d.getUTCFullYear();
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v && year >= 1970 && year <= 9998;
  }, DATE_MESSAGE);

/** An IANA time zone name this runtime knows ("Europe/Berlin", "UTC"). */
export const ZTimeZone = z
  .string()
  .max(64)
  .refine((v) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: v });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone, e.g. Europe/Berlin');

/**
 * A valid time zone as stored: the runtime's spelling when only the case differs (europe/berlin →
 * Europe/Berlin), else as given, so a current name (Asia/Kolkata, Europe/Kyiv) is not turned into
 * the legacy one ICU prefers and still matches what browsers report.
 */
export function canonicalZone(zone: string): string {
  const resolved = new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
  return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
}

/** GET /api/calendar/events/?date=YYYY-MM-DD[&tz=Area/City]: tz defaults to the user's, then UTC. */
export const ZCalendarEventsQuery = z.object({ date: ZLocalDate, tz: ZTimeZone.optional() });
export type TCalendarEventsQuery = z.infer<typeof ZCalendarEventsQuery>;

export const ZCalendarEvent = z.object({
  title: z.string(),
  /** All-day: the date (YYYY-MM-DD). Otherwise ISO 8601 in the day's time zone, with its offset. */
  start: z.string(),
  /** All-day: the day after the last day (exclusive, as iCalendar and Google give it). */
  end: z.string(),
  all_day: z.boolean(),
  location: z.string().nullable(),
  /** The event at the provider, when it has a web page (http or https only). */
  url: z.string().nullable(),
  /** The connection's name, as the connections page shows it. */
  calendar: z.string(),
  connection_id: z.number().int(),
});
export type TCalendarEvent = z.infer<typeof ZCalendarEvent>;

/** A connection whose events are missing from the day. */
export const ZCalendarProblem = z.object({
  connection_id: z.number().int(),
  provider: ZCalendarProviderId,
  calendar: z.string(),
  /** partial: read, but some of its events are left out (the message says which and why). */
  status: z.enum(['needs_reconnect', 'unavailable', 'partial']),
  message: z.string(),
});
export type TCalendarProblem = z.infer<typeof ZCalendarProblem>;

export const ZCalendarDay = z.object({
  date: z.string(),
  time_zone: z.string(),
  /** All-day events first, then by start, then by title. */
  events: z.array(ZCalendarEvent),
  problems: z.array(ZCalendarProblem),
});
export type TCalendarDay = z.infer<typeof ZCalendarDay>;

/** A connection as the owner's pages see it (never its tokens or its ICS address). */
export const ZCalendarConnection = z.object({
  id: z.number().int(),
  provider: ZCalendarProviderId,
  provider_name: z.string(),
  display: z.string(),
  status: ZCalendarConnectionStatus,
  last_synced: z.string().nullable(),
  last_error: z.string().nullable(),
  created: z.string(),
});
export type TCalendarConnection = z.infer<typeof ZCalendarConnection>;
/** GET /api/calendar/connections/: a bare array. */
export const ZCalendarConnectionList = z.array(ZCalendarConnection);

/** The connections page's "Add an ICS calendar" form. */
export const ZIcsConnectForm = z.object({
  url: z
    .string({ error: "Enter the calendar's address." })
    .trim()
    .min(1, "Enter the calendar's address.")
    .max(ICS_URL_MAX, `The address is too long (at most ${ICS_URL_MAX} characters).`),
  name: z.string().trim().max(100, 'The name is too long (at most 100 characters).').optional(),
});
export type TIcsConnectForm = z.infer<typeof ZIcsConnectForm>;
