// What the calendar module's parts share: the events providers give, and the service the pages,
// the allauth endpoints, the API and the chat use.
import type { TCalendarConnection, TCalendarDay, TCalendarProviderId } from '@daybook/contracts';
import type { DayWindow } from '../../lib/day.ts';

/** An event as a source gives it, before it is placed in the user's day. */
export type SourceEvent = {
  /** Unique within the source (an instance of a recurring event has its own). */
  id: string;
  title: string;
  location: string | null;
  /** http(s) only; anything else is dropped by the source. */
  url: string | null;
} & (
  | { allDay: true /** YYYY-MM-DD */; startDate: string /** YYYY-MM-DD, exclusive */; endDate: string }
  | { allDay: false; start: Date; end: Date }
);

export type { DayWindow };

export type OAuthProviderId = Exclude<TCalendarProviderId, 'ics'>;

/** The provider's endpoints; tests point them at local fakes (only through test configuration). */
export interface OAuthEndpoints {
  authorizeUrl: string;
  tokenUrl: string;
  /** Where tokens are revoked, for providers that offer it (Google). */
  revokeUrl?: string;
  /** The calendar API's base (Google: https://www.googleapis.com/calendar/v3, Graph: https://graph.microsoft.com/v1.0). */
  apiUrl: string;
}

/** A provider API's refusal: `unauthorized` means the access token is not (or no longer) good. */
export class ProviderApiError extends Error {
  constructor(
    readonly kind: 'unauthorized' | 'unavailable',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProviderApiError';
  }
}

/** What a calendar API client does with an access token. */
export interface CalendarApi {
  /** The account behind the token: a stable id (allauth's uid) and what to show (an address). */
  account(accessToken: string, signal?: AbortSignal): Promise<{ uid: string; display: string }>;
  /** Events that overlap the window, recurring ones expanded to instances. */
  events(accessToken: string, window: DayWindow, signal?: AbortSignal): Promise<SourceEvent[]>;
}

/** Failures the pages and the allauth endpoints show, in words for the user. */
export type CalendarErrorCode =
  | 'unknown_provider'
  | 'invalid_url'
  | 'refused'
  | 'unreachable'
  | 'not_a_calendar'
  | 'duplicate'
  | 'too_many'
  | 'busy'
  | 'not_found';

export class CalendarError extends Error {
  constructor(
    readonly code: CalendarErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CalendarError';
  }
}

export interface EnabledProvider {
  id: OAuthProviderId;
  name: string;
  clientId: string;
  /** Where its consent page is (the connections page's form-action must allow it). */
  consentOrigin: string;
}

/** allauth's error codes on the callback_url after a provider handshake. */
export type ConnectOutcome =
  | { ok: true; callbackUrl: string; connection: TCalendarConnection }
  | { ok: false; callbackUrl: string; error: 'cancelled' | 'denied' | 'unknown' | 'connected_other' };

export interface CalendarService {
  /** The OAuth providers this installation enabled (with a client id and secret). */
  providers(): EnabledProvider[];
  list(userId: number): Promise<TCalendarConnection[]>;
  /** The same with each connection's provider account id (allauth's uid), for the account API. */
  accounts(userId: number): Promise<Array<TCalendarConnection & { uid: string }>>;
  /** Null for an id that is not the user's. */
  get(userId: number, id: number): Promise<TCalendarConnection | null>;
  /** The provider's consent address; throws CalendarError('unknown_provider'). */
  startConnect(userId: number, provider: string, callbackUrl: string): Promise<string>;
  /** The provider sent the browser back: `userId` is whoever is signed in now (null: nobody). */
  finishConnect(
    userId: number | null,
    provider: string,
    params: { state?: string; code?: string; error?: string },
  ): Promise<ConnectOutcome>;
  /** Validates, fetches and parses the calendar before storing it; throws CalendarError. */
  addIcs(userId: number, url: string, name?: string): Promise<TCalendarConnection>;
  /** False when the id is not the user's. Revokes at the provider where it can. */
  disconnect(userId: number, id: number): Promise<boolean>;
  /** allauth's disconnect: by provider and uid. */
  disconnectAccount(userId: number, provider: string, uid: string): Promise<boolean>;
  /** The user's events for a local date, merged across connections; a failing one is reported. */
  eventsForDay(userId: number, date: string, timeZone?: string): Promise<TCalendarDay>;
}
