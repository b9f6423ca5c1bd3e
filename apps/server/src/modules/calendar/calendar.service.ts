// Calendar connections (Google and Microsoft by OAuth 2.0 with PKCE, any ICS address) and a user's
// events for a day. Tokens and ICS addresses are sealed at rest and never leave this module.
import { createHash } from 'node:crypto';
import {
  CALENDAR_CONNECTIONS_MAX,
  type TCalendarConnection,
  type TCalendarEvent,
  type TCalendarProblem,
  type TCalendarProviderId,
} from '@daybook/contracts';
import {
  ArcticFetchError,
  CodeChallengeMethod,
  generateCodeVerifier,
  generateState,
  OAuth2Client,
  OAuth2RequestError,
} from 'arctic';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { FetchError, type SafeFetch } from '../../lib/safe-fetch.ts';
import { type SecretBox, SecretBoxError } from '../../lib/secret-box.ts';
import { createCache } from './calendar.cache.ts';
import type { CalendarRepo, ConnectionRow, NewConnection } from './calendar.repo.ts';
import {
  type CalendarApi,
  CalendarError,
  type CalendarService,
  type ConnectOutcome,
  type DayWindow,
  type EnabledProvider,
  type OAuthEndpoints,
  type OAuthProviderId,
  ProviderApiError,
  type SourceEvent,
} from './calendar.types.ts';
import { dayWindow, zonedIso } from './day.ts';
import { EVENTS_MAX, IcsError } from './ics.ts';
import type { IcsReader } from './ics-reader.ts';
import { createGoogleCalendarApi } from './providers/google.ts';
import { createMicrosoftCalendarApi } from './providers/microsoft.ts';

export const PROVIDER_NAMES: Record<TCalendarProviderId, string> = {
  google: 'Google',
  microsoft: 'Microsoft Outlook',
  ics: 'ICS calendar',
};

/** The real endpoints; tests replace them through AppDeps only. */
export function defaultEndpoints(tenant = 'common'): Record<OAuthProviderId, OAuthEndpoints> {
  return {
    google: {
      authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      revokeUrl: 'https://oauth2.googleapis.com/revoke',
      apiUrl: 'https://www.googleapis.com/calendar/v3',
    },
    microsoft: {
      authorizeUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`,
      tokenUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
      apiUrl: 'https://graph.microsoft.com/v1.0',
    },
  };
}

/** Read-only scopes, plus what keeps access working while the user is away. */
const SCOPES: Record<OAuthProviderId, string[]> = {
  google: ['https://www.googleapis.com/auth/calendar.readonly'],
  microsoft: ['offline_access', 'Calendars.ReadBasic'],
};
const EXTRA_AUTHORIZE_PARAMS: Record<OAuthProviderId, Record<string, string>> = {
  // offline + consent: Google sends a refresh token every time, also when reconnecting.
  google: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  microsoft: { prompt: 'select_account' },
};

const STATE_TTL_MS = 10 * 60_000;
/** Consents one user may have in progress (several tabs); older ones are dropped. */
const STATES_PER_USER = 5;
/** How often a process waiting for another one's refresh looks whether it is done. */
const LEASE_POLL_MS = 200;
/** Refreshed this long before the access token expires. */
const REFRESH_MARGIN_MS = 2 * 60_000;
const DEFAULT_CACHE_MS = 5 * 60_000;
/** Events held in the cache in all, and characters of ICS text: bounded whatever users ask for. */
const EVENTS_CACHE_MAX = 200_000;
const ICS_CACHE_MAX_CHARS = 50_000_000;
/** Events of one connection on one day (the ICS reader's cap, for every provider): more is no schedule a person reads. */
export const DAY_EVENTS_MAX = EVENTS_MAX;
const ICS_ACCEPT = [
  'text/calendar',
  'text/plain',
  'application/ics',
  'application/calendar',
  'text/x-vcalendar',
  'application/octet-stream',
];

export const MESSAGES = {
  unknownProvider: 'That calendar provider is not enabled on this Daybook.',
  invalidUrl: "Enter the calendar's address: it starts with https://, http:// or webcal://.",
  refused:
    "Daybook does not read addresses on private or local networks. Use the calendar's public address, or ask whoever runs Daybook to allow this host (FETCH_ALLOW).",
  unreachable: 'Daybook could not reach that address. Check it and try again.',
  notFound: 'That address answered "not found". Check that you copied the whole address.',
  tooLarge: 'That calendar is too large for Daybook to read.',
  duplicate: 'That calendar is already connected.',
  busyAdding: 'Another calendar of yours is being added. Try again when it is done.',
  tooMany: `You can connect at most ${CALENDAR_CONNECTIONS_MAX} calendars. Remove one to add another.`,
  needsReconnect: 'Daybook can no longer read this calendar. Reconnect it on the Calendar Connections page.',
  keyChanged: "Daybook's secret key changed since this calendar was connected. Remove it and connect it again.",
  withdrawn: 'Access to this calendar was withdrawn or has expired. Reconnect it.',
  unavailable: 'Daybook could not read this calendar just now.',
  icsUnreadable: 'Daybook could not read this calendar just now; it will try again later.',
};

interface OAuthSecret {
  access: string;
  refresh: string | null;
  /** ms since epoch; null when the provider did not say. */
  expiresAt: number | null;
}
interface IcsSecret {
  url: string;
}

export interface CalendarServiceDeps {
  repo: CalendarRepo;
  /** Seals tokens and ICS addresses. */
  box: SecretBox;
  clock: Clock;
  log: FastifyBaseLogger;
  publicUrl: string;
  clients: {
    google?: { clientId: string; clientSecret: string };
    microsoft?: { clientId: string; clientSecret: string; tenant: string };
  };
  /** Test configuration only: local fakes of the providers. */
  endpoints?: Partial<Record<OAuthProviderId, OAuthEndpoints>>;
  /** The SSRF-safe fetcher (ICS addresses are the user's choice). */
  safeFetch: SafeFetch;
  /** Parses ICS calendars off the event loop. */
  icsReader: IcsReader;
  /** One ICS read in all, waiting for a fetch slot included (default 30 s). */
  icsDeadlineMs?: number;
  /** How long a connection's events (and a parsed ICS calendar) are reused. */
  cacheMs?: number;
  /** Token and calendar API requests. */
  timeoutMs?: number;
}

class NeedsReconnect extends Error {
  constructor(
    readonly reason: string,
    /** The row already says so (another process, or the refresh that found it). */
    readonly recorded = false,
  ) {
    super(reason);
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ProviderApiError('unavailable', `${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

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

export function createCalendarService(deps: CalendarServiceDeps): CalendarService {
  const { repo, box, clock, log } = deps;
  const timeoutMs = deps.timeoutMs ?? 15_000;
  const cacheMs = deps.cacheMs ?? DEFAULT_CACHE_MS;
  // Longer than any refresh may take, so a lease runs out only when its process died.
  const leaseMs = timeoutMs + 5_000;
  const icsDeadlineMs = deps.icsDeadlineMs ?? 30_000;
  const nowMs = () => clock.now().getTime();

  const oauth = new Map<
    OAuthProviderId,
    { client: OAuth2Client; endpoints: OAuthEndpoints; api: CalendarApi; clientId: string }
  >();
  for (const id of ['google', 'microsoft'] as const) {
    const creds = deps.clients[id];
    if (!creds) continue;
    const tenant = id === 'microsoft' ? (deps.clients.microsoft?.tenant ?? 'common') : 'common';
    const endpoints = deps.endpoints?.[id] ?? defaultEndpoints(tenant)[id];
    const redirectUri = `${deps.publicUrl}/accounts/${id}/login/callback/`;
    const api =
      id === 'google'
        ? createGoogleCalendarApi({ apiUrl: endpoints.apiUrl, timeoutMs })
        : createMicrosoftCalendarApi({ apiUrl: endpoints.apiUrl, timeoutMs });
    oauth.set(id, {
      client: new OAuth2Client(creds.clientId, creds.clientSecret, redirectUri),
      endpoints,
      api,
      clientId: creds.clientId,
    });
  }

  const eventsCache = createCache<{ events: SourceEvent[]; notes: string[] }>({
    ttlMs: cacheMs,
    maxWeight: EVENTS_CACHE_MAX,
    weigh: ({ events }) => events.length,
    now: nowMs,
  });
  // The calendars' text, parsed again in the ICS worker only when another day is asked for.
  const icsCache = createCache<string>({
    ttlMs: cacheMs,
    maxWeight: ICS_CACHE_MAX_CHARS,
    weigh: (t) => t.length,
    now: nowMs,
  });
  /** Users adding an ICS calendar right now: one at a time each. */
  const adding = new Set<number>();
  const refreshing = new Map<number, Promise<string>>();

  const present = (row: ConnectionRow): TCalendarConnection => ({
    id: row.id,
    provider: row.provider,
    provider_name: PROVIDER_NAMES[row.provider],
    display: row.display,
    status: row.status,
    last_synced: row.lastSyncedAt?.toISOString() ?? null,
    last_error: row.lastError,
    created: row.createdAt.toISOString(),
  });

  const forget = (id: number) => {
    eventsCache.dropPrefix(`${id}:`);
    icsCache.dropPrefix(`${id}:`);
  };

  async function markNeedsReconnect(id: number, reason: string) {
    await repo.setStatus(id, { status: 'needs_reconnect', lastError: reason, updatedAt: clock.now() });
    forget(id);
  }

  // ---- OAuth tokens ----

  /** A connection's sealed secret; one sealed under another SECRET_KEY means reconnecting. */
  function openSecret<T extends OAuthSecret | IcsSecret>(row: ConnectionRow): T {
    try {
      return box.openJson<T>(row.secret);
    } catch (err) {
      if (err instanceof SecretBoxError) throw new NeedsReconnect(MESSAGES.keyChanged);
      throw err;
    }
  }
  const openTokens = (row: ConnectionRow) => openSecret<OAuthSecret>(row);

  const fresh = (t: OAuthSecret) => t.expiresAt === null || t.expiresAt - nowMs() > REFRESH_MARGIN_MS;

  /**
   * A new access token, one refresh at a time per connection: in this process by sharing the
   * promise, across processes by a lease on the row (no transaction stays open while the provider
   * answers: on the embedded database that would hold up every other query). `stale` is a token the
   * API refused.
   */
  function refresh(row: ConnectionRow, stale?: string): Promise<string> {
    const running = refreshing.get(row.id);
    if (running) return running;
    const work = (async () => {
      const giveUp = nowMs() + 2 * leaseMs;
      for (;;) {
        const claimed = await repo.claimRefresh(row.id, clock.now(), new Date(nowMs() + leaseMs));
        if (claimed) return refreshClaimed(claimed, stale);
        // Another process is refreshing it: its token serves this read too.
        await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
        const latest = await repo.byId(row.id);
        if (!latest) throw new NeedsReconnect(MESSAGES.needsReconnect, true);
        if (latest.status === 'needs_reconnect')
          throw new NeedsReconnect(latest.lastError ?? MESSAGES.needsReconnect, true);
        const tokens = openTokens(latest);
        if (tokens.access !== stale && fresh(tokens)) return tokens.access;
        if (nowMs() > giveUp) throw new ProviderApiError('unavailable', 'another refresh of this token took too long');
      }
    })().finally(() => refreshing.delete(row.id));
    refreshing.set(row.id, work);
    return work;
  }

  /** The refresh itself, holding the lease; the lease ends with what it changed. */
  async function refreshClaimed(current: ConnectionRow, stale?: string): Promise<string> {
    const provider = oauth.get(current.provider as OAuthProviderId);
    const reconnect = async (reason: string): Promise<never> => {
      await repo.endRefresh(current.id, { status: 'needs_reconnect', lastError: reason, updatedAt: clock.now() });
      forget(current.id);
      throw new NeedsReconnect(reason, true);
    };
    if (current.status === 'needs_reconnect') return reconnect(current.lastError ?? MESSAGES.needsReconnect);
    let tokens: OAuthSecret;
    try {
      tokens = openTokens(current);
    } catch (err) {
      if (err instanceof NeedsReconnect) return reconnect(err.reason);
      await repo.endRefresh(current.id, {});
      throw err;
    }
    // Another process (or request) refreshed it meanwhile.
    if (tokens.access !== stale && fresh(tokens)) {
      await repo.endRefresh(current.id, {});
      return tokens.access;
    }
    if (!tokens.refresh) return reconnect(MESSAGES.withdrawn);
    if (!provider) {
      await repo.endRefresh(current.id, {});
      throw new ProviderApiError('unavailable', 'provider not enabled');
    }
    let next: OAuthSecret;
    try {
      const result = await withTimeout(
        provider.client.refreshAccessToken(
          provider.endpoints.tokenUrl,
          tokens.refresh,
          SCOPES[current.provider as OAuthProviderId],
        ),
        timeoutMs,
        'The token refresh',
      );
      next = {
        access: result.accessToken(),
        // A rotated refresh token replaces the old one, which stops working.
        refresh: result.hasRefreshToken() ? result.refreshToken() : tokens.refresh,
        expiresAt: expiresAtOf(result),
      };
    } catch (err) {
      if (err instanceof OAuth2RequestError && (err.code === 'invalid_grant' || err.code === 'unauthorized_client'))
        return reconnect(MESSAGES.withdrawn);
      await repo.endRefresh(current.id, {});
      throw transient(err);
    }
    await repo.endRefresh(current.id, {
      secret: box.sealJson(next),
      accessExpiresAt: next.expiresAt === null ? null : new Date(next.expiresAt),
      lastError: null,
      updatedAt: clock.now(),
    });
    return next.access;
  }

  function expiresAtOf(tokens: { accessTokenExpiresAt(): Date }): number | null {
    try {
      return tokens.accessTokenExpiresAt().getTime();
    } catch {
      return null;
    }
  }

  /** Provider failures in words that name no token and no personal data. */
  function transient(err: unknown): ProviderApiError {
    if (err instanceof ProviderApiError) return err;
    if (err instanceof OAuth2RequestError)
      return new ProviderApiError('unavailable', `token endpoint refused: ${err.code}`);
    if (err instanceof ArcticFetchError) return new ProviderApiError('unavailable', 'token endpoint unreachable');
    const status = (err as { status?: unknown }).status;
    return new ProviderApiError(
      'unavailable',
      `token endpoint failed${typeof status === 'number' ? ` (HTTP ${status})` : ''}`,
    );
  }

  async function accessToken(row: ConnectionRow): Promise<string> {
    const tokens = openTokens(row);
    return fresh(tokens) ? tokens.access : refresh(row);
  }

  async function oauthEvents(row: ConnectionRow, window: DayWindow): Promise<SourceEvent[]> {
    const provider = oauth.get(row.provider as OAuthProviderId);
    // The provider was switched off after the user connected it.
    if (!provider) throw new ProviderApiError('unavailable', 'provider not enabled');
    const token = await accessToken(row);
    try {
      return await provider.api.events(token, window);
    } catch (err) {
      if (!(err instanceof ProviderApiError) || err.kind !== 'unauthorized') throw err;
      // Refused before its time (revoked, or a clock skew): one refresh, one more try.
      return provider.api.events(await refresh(row, token), window);
    }
  }

  // ---- ICS ----

  /** The calendar's text, through the safe fetcher, within one deadline (waiting for a slot included). */
  async function fetchIcsText(url: string): Promise<string> {
    const page = await withTimeout(deps.safeFetch(url, { accept: ICS_ACCEPT }), icsDeadlineMs, 'Reading the calendar');
    return page.text;
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

  async function icsEvents(row: ConnectionRow, window: DayWindow): Promise<{ events: SourceEvent[]; notes: string[] }> {
    const secret = openSecret<IcsSecret>(row);
    const text = await icsCache.get(`${row.id}:ics`, () => fetchIcsText(secret.url));
    const { events, notes } = await deps.icsReader.read(text, window);
    return { events, notes };
  }

  // ---- a day's events ----

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
        row.provider === 'ics' ? icsEvents(row, window) : { events: await oauthEvents(row, window), notes: [] },
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

  const byDay = (a: TCalendarEvent, b: TCalendarEvent) => {
    if (a.all_day !== b.all_day) return a.all_day ? -1 : 1;
    const at = a.all_day ? a.start : Date.parse(a.start);
    const bt = b.all_day ? b.start : Date.parse(b.start);
    if (at !== bt) return at < bt ? -1 : 1;
    return a.title.localeCompare(b.title);
  };

  // ---- the service ----

  async function saveConnection(data: NewConnection) {
    const result = await repo.upsert({ ...data, now: clock.now() }, CALENDAR_CONNECTIONS_MAX);
    if (result && result !== 'other_user') forget(result.id);
    return result;
  }

  async function revokeToken(provider: { client: OAuth2Client; endpoints: OAuthEndpoints }, token: string) {
    if (!provider.endpoints.revokeUrl) return;
    await withTimeout(
      provider.client.revokeToken(provider.endpoints.revokeUrl, token),
      timeoutMs,
      'The token revocation',
    );
  }

  async function revoke(row: ConnectionRow) {
    const provider = oauth.get(row.provider as OAuthProviderId);
    if (!provider?.endpoints.revokeUrl) return;
    try {
      const tokens = box.openJson<OAuthSecret>(row.secret);
      // Revoking the refresh token ends the whole grant (Google).
      await revokeToken(provider, tokens.refresh ?? tokens.access);
    } catch (err) {
      // Already revoked (by the user at Google) is as good as done.
      if (err instanceof OAuth2RequestError && err.code === 'invalid_token') return;
      log.warn(
        { connectionId: row.id, provider: row.provider, reason: transient(err).message },
        'token revocation failed',
      );
    }
  }

  const service: CalendarService = {
    providers(): EnabledProvider[] {
      return [...oauth.entries()].map(([id, p]) => ({
        id,
        name: PROVIDER_NAMES[id],
        clientId: p.clientId,
        consentOrigin: new URL(p.endpoints.authorizeUrl).origin,
      }));
    },

    async list(userId) {
      return (await repo.list(userId)).map(present);
    },

    async accounts(userId) {
      return (await repo.list(userId)).map((row) => ({ ...present(row), uid: row.uid }));
    },

    async get(userId, id) {
      const row = await repo.get(userId, id);
      return row ? present(row) : null;
    },

    async startConnect(userId, providerId, callbackUrl) {
      const provider = oauth.get(providerId as OAuthProviderId);
      if (!provider) throw new CalendarError('unknown_provider', MESSAGES.unknownProvider);
      const existing = await repo.list(userId);
      // At the cap only a reconnect makes sense; say so before the user goes through consent.
      if (existing.length >= CALENDAR_CONNECTIONS_MAX && !existing.some((c) => c.provider === providerId))
        throw new CalendarError('too_many', MESSAGES.tooMany);
      const state = generateState();
      const verifier = generateCodeVerifier();
      await repo.pruneStates(clock.now());
      await repo.saveState(
        sha256(state),
        {
          userId,
          provider: providerId,
          verifier: box.seal(verifier),
          callbackUrl,
          expiresAt: new Date(nowMs() + STATE_TTL_MS),
        },
        STATES_PER_USER,
      );
      const url = provider.client.createAuthorizationURLWithPKCE(
        provider.endpoints.authorizeUrl,
        state,
        CodeChallengeMethod.S256,
        verifier,
        SCOPES[providerId as OAuthProviderId],
      );
      for (const [k, v] of Object.entries(EXTRA_AUTHORIZE_PARAMS[providerId as OAuthProviderId]))
        url.searchParams.set(k, v);
      return url.href;
    },

    async finishConnect(userId, providerId, params): Promise<ConnectOutcome> {
      const fallback = '/accounts/3rdparty/';
      const fail = (callbackUrl: string, error: Extract<ConnectOutcome, { ok: false }>['error']): ConnectOutcome => ({
        ok: false,
        callbackUrl,
        error,
      });
      if (!params.state || userId === null) return fail(fallback, 'unknown');
      // Single use: a replayed state finds nothing. Only the user who started it takes it: a link
      // opened in someone else's session neither finishes nor spends it.
      const pending = await repo.takeState(sha256(params.state), userId);
      if (!pending || pending.expiresAt.getTime() < nowMs() || pending.provider !== providerId)
        return fail(pending?.callbackUrl ?? fallback, 'unknown');
      if (params.error) return fail(pending.callbackUrl, params.error === 'access_denied' ? 'cancelled' : 'denied');
      const provider = oauth.get(providerId as OAuthProviderId);
      if (!provider || !params.code) return fail(pending.callbackUrl, 'unknown');
      try {
        const verifier = box.open(pending.verifier);
        const tokens = await withTimeout(
          provider.client.validateAuthorizationCode(provider.endpoints.tokenUrl, params.code, verifier),
          timeoutMs,
          'The code exchange',
        );
        const access = tokens.accessToken();
        // Google lets people untick scopes on its consent screen: without calendar access there is nothing to read.
        const granted = tokens.hasScopes() ? tokens.scopes() : null;
        if (
          granted &&
          !SCOPES[providerId as OAuthProviderId].every(
            (s) => s === 'offline_access' || granted.some((g) => g.endsWith(s)),
          )
        ) {
          await revokeToken(provider, tokens.hasRefreshToken() ? tokens.refreshToken() : access).catch(() => {});
          return fail(pending.callbackUrl, 'denied');
        }
        const account = await provider.api.account(access);
        const existing = await repo.findByUid(providerId, account.uid);
        const previous = existing && existing.userId === userId ? openTokensOrNull(existing) : null;
        const secret: OAuthSecret = {
          access,
          // Without a new refresh token (a provider that sends one only once), the old one stays.
          refresh: tokens.hasRefreshToken() ? tokens.refreshToken() : (previous?.refresh ?? null),
          expiresAt: expiresAtOf(tokens),
        };
        const saved = await saveConnection({
          userId: pending.userId,
          provider: providerId as OAuthProviderId,
          uid: account.uid,
          display: account.display,
          secret: box.sealJson(secret),
          accessExpiresAt: secret.expiresAt === null ? null : new Date(secret.expiresAt),
        });
        if (saved === 'other_user') {
          // The grant just made is of no use to Daybook: give it back.
          await revokeToken(provider, secret.refresh ?? access).catch(() => {});
          return fail(pending.callbackUrl, 'connected_other');
        }
        if (!saved) return fail(pending.callbackUrl, 'unknown');
        return { ok: true, callbackUrl: pending.callbackUrl, connection: present(saved) };
      } catch (err) {
        log.warn({ provider: providerId, reason: transient(err).message }, 'calendar connection failed');
        return fail(pending.callbackUrl, 'unknown');
      }
    },

    async addIcs(userId, rawUrl, name) {
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
          calendarName = (await deps.icsReader.read(text)).name;
        } catch (err) {
          throw icsProblem(err);
        }
        const display = name?.trim() || calendarName || new URL(url).hostname;
        const saved = await saveConnection({
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
        return present({ ...saved, lastSyncedAt: clock.now() });
      } finally {
        adding.delete(userId);
      }
    },

    async disconnect(userId, id) {
      const row = await repo.remove(userId, id);
      if (!row) return false;
      forget(row.id);
      await revoke(row);
      return true;
    },

    async disconnectAccount(userId, providerId, uid) {
      const row = (await repo.list(userId)).find((c) => c.provider === providerId && c.uid === uid);
      return row ? service.disconnect(userId, row.id) : false;
    },

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

  function openTokensOrNull(row: ConnectionRow): OAuthSecret | null {
    try {
      return openTokens(row);
    } catch {
      return null;
    }
  }

  return service;
}
