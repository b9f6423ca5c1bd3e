// One HTTP server on 127.0.0.1 playing Google and Microsoft for the calendar connections: each one's
// OAuth 2.0 authorization server (authorization code with PKCE S256, refresh tokens, Google's
// revocation endpoint, a consent page a browser can click through) and its calendar API (Google
// Calendar API v3, Microsoft Graph v1.0), under /google/... and /microsoft/... at paths shaped like
// the real ones. Behaviour follows the providers where Daybook could trip on it: Google gives a
// refresh token only for access_type=offline and only at the first consent unless prompt=consent,
// Microsoft only for offline_access; Graph refuses /me without User.Read; both APIs check scopes.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthEndpoints } from '../../apps/server/src/modules/calendar/calendar.types.ts';

export type FakeProviderId = 'google' | 'microsoft';

/** Who is signed in at the provider when a consent page is shown. */
export interface FakeAccount {
  /** The id token's `sub`. */
  sub: string;
  email: string;
  name: string;
  /** Microsoft's object id (`oid`); derived from `sub` when left out. */
  oid?: string;
  /** The primary calendar's zone (Google) or the mailbox's (Graph); default UTC. */
  timeZone?: string;
}

export interface FakeClient {
  clientId: string;
  clientSecret: string;
  /** Compared character for character, as both providers do. */
  redirectUris: string[];
  /** Shown on the consent page; default Daybook. */
  name?: string;
}

/** One call to a token endpoint, logged when it arrives; `status` is filled in when it is answered. */
export interface FakeTokenRequest {
  provider: FakeProviderId;
  grantType: string;
  clientId: string | null;
  status: number | null;
  /** The OAuth error code answered, if any. */
  error?: string;
}

/** A token Daybook revoked at Google's revocation endpoint. */
export interface FakeRevocation {
  provider: 'google';
  token: string;
  tokenType: 'access_token' | 'refresh_token';
  clientId: string;
  sub: string;
}

export interface FakeApiRequest {
  provider: FakeProviderId;
  method: string;
  /** Path and query string as sent. */
  url: string;
  /** The Prefer header (Graph's outlook.timezone). */
  prefer?: string;
}

/** A Google calendar list entry; `selected` and `hidden` follow the API (absent means false). */
export interface FakeGoogleCalendar {
  id: string;
  summary: string;
  timeZone?: string;
  selected?: boolean;
  hidden?: boolean;
  accessRole?: 'owner' | 'writer' | 'reader' | 'freeBusyReader';
}

export type FakeGoogleTime = { dateTime: string; timeZone?: string } | { date: string };

/** An event as Google stores it: dateTime with an offset (or local with timeZone), or an all-day date. */
export interface FakeGoogleEvent {
  id?: string;
  /** Left out: the API leaves `summary` out too (an untitled event). */
  summary?: string;
  location?: string;
  status?: 'confirmed' | 'tentative' | 'cancelled';
  htmlLink?: string;
  recurringEventId?: string;
  start: FakeGoogleTime;
  /** Exclusive; for all-day events the day after the last one. */
  end: FakeGoogleTime;
}

/** An event as Graph stores it: local date-times in a zone (IANA or Windows name). */
export interface FakeMicrosoftEvent {
  id?: string;
  subject: string;
  isAllDay?: boolean;
  isCancelled?: boolean;
  webLink?: string;
  location?: string;
  /** For all-day events, midnight of the first day (the time part is ignored). */
  start: { dateTime: string; timeZone: string };
  /** Exclusive: for all-day events, midnight of the day after the last one. */
  end: { dateTime: string; timeZone: string };
}

export interface FakeCalendarProviders {
  /** The server's origin, http://127.0.0.1:<port>. */
  url: string;
  endpoints: { google: OAuthEndpoints & { revokeUrl: string }; microsoft: OAuthEndpoints };
  registerClient(provider: FakeProviderId, client: FakeClient): void;
  /** Who signs in from now on (and whose calendars seeds go to by default). */
  setAccount(provider: FakeProviderId, account: FakeAccount): void;
  account(provider: FakeProviderId): FakeAccount;
  /** What clicking Allow on the consent page does: the redirect back (code and state, or an error redirect). Throws on an error page. */
  approve(authorizeUrl: string): Promise<string>;
  /** The user unticks scopes on the consent screen (Google's granular consent): only these are granted; null: all. */
  grantOnly(provider: FakeProviderId, scopes: string[] | null): void;
  /** What clicking Deny does: the redirect back with error=access_denied. */
  deny(authorizeUrl: string): Promise<string>;
  /** A grant for the current account without the browser dance, for API client tests. */
  createGrant(
    provider: FakeProviderId,
    options?: { scopes?: string[]; clientId?: string },
  ): { accessToken: string; refreshToken: string };
  /** Lifetime of access tokens issued from now on (default 3599 s). */
  setAccessTokenTtl(seconds: number, provider?: FakeProviderId): void;
  /** Moves the fake's clock on: codes (10 min) and access tokens expire without waiting. */
  advanceClock(seconds: number): void;
  /** Whether a refresh returns a new refresh token and retires the old one (default: Microsoft yes, Google no). */
  setRotateRefreshTokens(provider: FakeProviderId, rotate: boolean): void;
  /** As if the user removed the app's access: refreshes answer invalid_grant, APIs 401. */
  revokeAllGrants(provider: FakeProviderId): void;
  tokenRequests: FakeTokenRequest[];
  /** The next `count` token requests (of `provider`, or any) answer `status` (e.g. 500, 503). */
  failNextTokenRequests(count: number, status: number, provider?: FakeProviderId): void;
  /** Token requests wait (after being logged) until the returned function is called. */
  holdTokenRequests(): () => void;
  /** The most token requests in flight at once so far. */
  readonly peakConcurrentTokenRequests: number;
  revoked: FakeRevocation[];
  addGoogleCalendar(calendar: FakeGoogleCalendar, accountEmail?: string): void;
  /** `calendarId` may be 'primary'; the calendar must exist (the primary one always does). */
  addGoogleEvents(calendarId: string, events: FakeGoogleEvent[], accountEmail?: string): void;
  addMicrosoftEvents(events: FakeMicrosoftEvent[], accountEmail?: string): void;
  /** Caps every API page (calendar lists, events) at `size`, below what the client asks; null lifts it. */
  setPageSize(size: number | null): void;
  /** The next `count` API requests of `provider` answer `status` with the provider's error body. */
  failNextApiRequests(provider: FakeProviderId, count: number, status: number): void;
  /** API requests received (answered or refused), per provider. */
  apiCalls: Record<FakeProviderId, number>;
  apiRequests: FakeApiRequest[];
  close(): Promise<void>;
}

const GOOGLE_ISSUER = 'https://accounts.google.com';
// The tenant of personal Microsoft accounts, which sign in through /common.
const MSA_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
const CODE_TTL_S = 600;
const GOOGLE_API = 'https://www.googleapis.com/auth/';
const GRAPH = 'https://graph.microsoft.com/';

const DEFAULT_ACCOUNTS: Record<FakeProviderId, FakeAccount> = {
  google: { sub: '109876543210987654321', email: 'alex.rivera@gmail.com', name: 'Alex Rivera' },
  microsoft: {
    sub: 'AAAAAAAAAAAAAAAAAAAAAKq3tNq0WmXnGdE6bJ8wX2c',
    email: 'alex.rivera@outlook.com',
    name: 'Alex Rivera',
    oid: '00000000-0000-0000-4c2b-8d1e5f7a9b3c',
  },
};

// Scopes each provider knows, with what its consent page says about them.
const GOOGLE_SCOPES: Record<string, string> = {
  openid: 'Associate you with your personal info on Google',
  [`${GOOGLE_API}userinfo.email`]: 'See your primary Google Account email address',
  [`${GOOGLE_API}userinfo.profile`]:
    "See your personal info, including any personal info you've made publicly available",
  [`${GOOGLE_API}calendar`]:
    'See, edit, share, and permanently delete all the calendars you can access using Google Calendar',
  [`${GOOGLE_API}calendar.readonly`]: 'See and download any calendar you can access using your Google Calendar',
  [`${GOOGLE_API}calendar.events`]: 'View and edit events on all your calendars',
  [`${GOOGLE_API}calendar.events.readonly`]: 'View events on all your calendars',
  [`${GOOGLE_API}calendar.calendarlist.readonly`]: 'See the list of Google calendars you’re subscribed to',
  [`${GOOGLE_API}calendar.calendars.readonly`]:
    'See the title, description, default time zone, and other properties of Google calendars you have access to',
};
const MICROSOFT_SCOPES: Record<string, string> = {
  openid: 'Sign you in',
  profile: 'View your basic profile',
  email: 'View your email address',
  offline_access: 'Maintain access to data you have given it access to',
  'User.Read': 'Sign you in and read your profile',
  'Calendars.ReadBasic': 'Read basic details of your calendars',
  'Calendars.Read': 'Read your calendars',
  'Calendars.ReadWrite': 'Have full access to your calendars',
};

// Which scopes each API call accepts (any one of them).
const GOOGLE_NEEDS = {
  calendarList: ['calendar', 'calendar.readonly', 'calendar.calendarlist', 'calendar.calendarlist.readonly'],
  calendar: ['calendar', 'calendar.readonly', 'calendar.calendars', 'calendar.calendars.readonly'],
  events: ['calendar', 'calendar.readonly', 'calendar.events', 'calendar.events.readonly'],
};
const GRAPH_CALENDAR_SCOPES = ['Calendars.ReadBasic', 'Calendars.Read', 'Calendars.ReadWrite'];

// A few Windows zone names Graph accepts in Prefer: outlook.timezone, and their IANA zones.
const WINDOWS_ZONES: Record<string, string> = {
  UTC: 'UTC',
  'Pacific Standard Time': 'America/Los_Angeles',
  'Mountain Standard Time': 'America/Denver',
  'Central Standard Time': 'America/Chicago',
  'Eastern Standard Time': 'America/New_York',
  'GMT Standard Time': 'Europe/London',
  'W. Europe Standard Time': 'Europe/Berlin',
  'Romance Standard Time': 'Europe/Paris',
  'India Standard Time': 'Asia/Kolkata',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'AUS Eastern Standard Time': 'Australia/Sydney',
};

// ---- Time zones (Intl only) ----

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

function isZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock in `timeZone` at `ms`: YYYY-MM-DDTHH:mm:ss. */
function localTime(ms: number, timeZone: string): string {
  const p: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(ms))) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

function offsetMinutes(ms: number, timeZone: string): number {
  const wall = Date.parse(`${localTime(ms, timeZone)}Z`);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
}

/** The instant a wall clock time (YYYY-MM-DDTHH:mm[:ss]) names in `timeZone`. */
function zonedInstant(local: string, timeZone: string): number {
  const wall = Date.parse(`${local.length === 16 ? `${local}:00` : local}Z`);
  const first = wall - offsetMinutes(wall, timeZone) * 60_000;
  return wall - offsetMinutes(first, timeZone) * 60_000;
}

/** RFC 3339 in `timeZone`, as Google writes it: Z for UTC, else the offset. */
function rfc3339In(ms: number, timeZone: string): string {
  const offset = offsetMinutes(ms, timeZone);
  if (offset === 0 && (timeZone === 'UTC' || timeZone === 'Etc/UTC')) return `${localTime(ms, timeZone)}Z`;
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${localTime(ms, timeZone)}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

// ---- Tokens and ids ----

const token = (bytes = 24) => randomBytes(bytes).toString('base64url');
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** A JWT that looks signed (RS256) but is not: nothing should verify it, only read its claims. */
function fakeJwt(claims: Record<string, unknown>): string {
  return `${b64url({ alg: 'RS256', kid: 'fake-calendar-key-1', typ: 'JWT' })}.${b64url(claims)}.${token(64)}`;
}

function oidOf(account: FakeAccount): string {
  if (account.oid) return account.oid;
  const h = createHash('sha256').update(account.sub).digest('hex');
  return `00000000-0000-0000-${h.slice(0, 4)}-${h.slice(4, 16)}`;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

// ---- State ----

interface Grant {
  provider: FakeProviderId;
  clientId: string;
  account: FakeAccount;
  scopes: string[];
  offline: boolean;
  revoked: boolean;
  nonce?: string;
}

interface PendingConsent {
  provider: FakeProviderId;
  client: FakeClient;
  account: FakeAccount;
  redirectUri: string;
  state: string;
  scopes: string[];
  challenge: string;
  offline: boolean;
  promptConsent: boolean;
  nonce?: string;
}

interface IssuedCode extends PendingConsent {
  expiresAt: number;
  used: boolean;
}

interface GoogleCalendarData {
  entry: Required<Pick<FakeGoogleCalendar, 'id' | 'summary' | 'timeZone' | 'accessRole'>> & FakeGoogleCalendar;
  primary: boolean;
  events: StoredGoogleEvent[];
}

interface StoredGoogleEvent {
  event: FakeGoogleEvent & { id: string };
  start: number;
  end: number;
  created: string;
}

interface StoredMicrosoftEvent {
  event: FakeMicrosoftEvent & { id: string };
  created: string;
}

interface Mailbox {
  calendars: Map<string, GoogleCalendarData>;
  graphEvents: StoredMicrosoftEvent[];
}

type AuthorizeCheck =
  | { kind: 'page'; status: number; title: string; detail: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'ok'; consent: PendingConsent };

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));

const html = (res: ServerResponse, status: number, body: string) =>
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);

async function readBody(req: IncomingMessage): Promise<string> {
  let raw = '';
  for await (const chunk of req) {
    raw += chunk;
    if (raw.length > 65_536) throw new HttpError(413, { error: 'invalid_request', error_description: 'Too large' });
  }
  return raw;
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #202124; }
ul { padding-left: 1.2rem; } li { margin: .4rem 0; } small { overflow-wrap: anywhere; }
.actions { display: flex; gap: .75rem; justify-content: flex-end; margin-top: 1.5rem; }
button { font: inherit; padding: .5rem 1.25rem; border-radius: .25rem; border: 1px solid #888; background: #fff; cursor: pointer; }
button[value="allow"] { background: #1a73e8; color: #fff; border-color: #1a73e8; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

export async function startFakeCalendarProviders(): Promise<FakeCalendarProviders> {
  const clients: Record<FakeProviderId, Map<string, FakeClient>> = { google: new Map(), microsoft: new Map() };
  const current: Record<FakeProviderId, FakeAccount> = { ...DEFAULT_ACCOUNTS };
  const accounts: Record<FakeProviderId, Map<string, FakeAccount>> = {
    google: new Map([[DEFAULT_ACCOUNTS.google.email.toLowerCase(), DEFAULT_ACCOUNTS.google]]),
    microsoft: new Map([[DEFAULT_ACCOUNTS.microsoft.email.toLowerCase(), DEFAULT_ACCOUNTS.microsoft]]),
  };
  const mailboxes = new Map<string, Mailbox>();
  const pending = new Map<string, PendingConsent>();
  const codes = new Map<string, IssuedCode>();
  const grants: Grant[] = [];
  const refreshTokens = new Map<string, { grant: Grant; valid: boolean }>();
  const accessTokens = new Map<string, { grant: Grant; expiresAt: number }>();
  const accessTtl: Record<FakeProviderId, number> = { google: 3599, microsoft: 3599 };
  const rotate: Record<FakeProviderId, boolean> = { google: false, microsoft: true };
  const tokenRequests: FakeTokenRequest[] = [];
  const revoked: FakeRevocation[] = [];
  const apiCalls: Record<FakeProviderId, number> = { google: 0, microsoft: 0 };
  const apiRequests: FakeApiRequest[] = [];
  const tokenFailures: { provider?: FakeProviderId; status: number }[] = [];
  const apiFailures: Record<FakeProviderId, number[]> = { google: [], microsoft: [] };
  let clockOffsetMs = 0;
  let pageSize: number | null = null;
  let held: Promise<void> | null = null;
  let inFlight = 0;
  let peak = 0;
  let eventSeq = 0;
  const now = () => Date.now() + clockOffsetMs;

  const mailboxKey = (provider: FakeProviderId, account: FakeAccount) => `${provider}:${account.sub}`;
  function mailbox(provider: FakeProviderId, account: FakeAccount): Mailbox {
    const key = mailboxKey(provider, account);
    let box = mailboxes.get(key);
    if (!box) {
      box = { calendars: new Map(), graphEvents: [] };
      if (provider === 'google') {
        box.calendars.set(account.email, {
          entry: {
            id: account.email,
            summary: account.email,
            timeZone: account.timeZone ?? 'UTC',
            accessRole: 'owner',
            selected: true,
          },
          primary: true,
          events: [],
        });
      }
      mailboxes.set(key, box);
    }
    return box;
  }
  function accountFor(provider: FakeProviderId, email?: string): FakeAccount {
    if (email === undefined) return current[provider];
    const account = accounts[provider].get(email.toLowerCase());
    if (!account) throw new Error(`fake-calendar: no ${provider} account ${email}; call setAccount first`);
    return account;
  }

  // ---- Scopes ----

  /** Canonical scope names, or null for one the provider does not know. */
  function canonicalScopes(provider: FakeProviderId, raw: string): (string | null)[] {
    return raw
      .split(/\s+/)
      .filter(Boolean)
      .map((scope) => {
        if (provider === 'google') {
          const full =
            scope === 'email' || scope === 'profile'
              ? `${GOOGLE_API}userinfo.${scope}`
              : scope === 'openid' || scope.startsWith('https://')
                ? scope
                : `${GOOGLE_API}${scope}`;
          return full in GOOGLE_SCOPES ? full : null;
        }
        const bare = scope.toLowerCase().startsWith(GRAPH) ? scope.slice(GRAPH.length) : scope;
        return Object.keys(MICROSOFT_SCOPES).find((known) => known.toLowerCase() === bare.toLowerCase()) ?? null;
      });
  }
  function grantedScopeString(grant: Grant): string {
    if (grant.provider === 'google') return grant.scopes.join(' ');
    // Microsoft names Graph's permissions by resource and leaves offline_access out.
    return grant.scopes
      .filter((s) => s !== 'offline_access')
      .map((s) => (['openid', 'profile', 'email'].includes(s) ? s : `${GRAPH}${s}`))
      .join(' ');
  }

  // ---- Authorization endpoint ----

  function checkAuthorize(provider: FakeProviderId, params: URLSearchParams): AuthorizeCheck {
    const clientId = params.get('client_id');
    const client = clientId ? clients[provider].get(clientId) : undefined;
    if (!client) {
      return provider === 'google'
        ? { kind: 'page', status: 401, title: 'Error 401: invalid_client', detail: 'The OAuth client was not found.' }
        : {
            kind: 'page',
            status: 400,
            title: 'unauthorized_client',
            detail: `AADSTS700016: Application with identifier '${clientId ?? ''}' was not found in the directory.`,
          };
    }
    const redirectUri = params.get('redirect_uri');
    if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
      return provider === 'google'
        ? {
            kind: 'page',
            status: 400,
            title: 'Error 400: redirect_uri_mismatch',
            detail: `You can't sign in to this app because it doesn't comply with Google's OAuth 2.0 policy. redirect_uri=${redirectUri ?? ''}`,
          }
        : {
            kind: 'page',
            status: 400,
            title: 'invalid_request',
            detail: `AADSTS50011: The redirect URI '${redirectUri ?? ''}' specified in the request does not match the redirect URIs configured for the application.`,
          };
    }
    const state = params.get('state');
    const back = (error: string, description: string): AuthorizeCheck => {
      const location = new URL(redirectUri);
      location.searchParams.set('error', error);
      location.searchParams.set('error_description', description);
      if (state) location.searchParams.set('state', state);
      return { kind: 'redirect', location: location.href };
    };
    if (params.get('response_type') !== 'code') {
      return back('unsupported_response_type', 'Only response_type=code is supported.');
    }
    const rawScope = params.get('scope');
    if (!rawScope?.trim()) return back('invalid_request', 'Missing required parameter: scope');
    const scopes = canonicalScopes(provider, rawScope);
    if (scopes.some((s) => s === null)) return back('invalid_scope', 'Some requested scopes were invalid.');
    if (!state) return back('invalid_request', 'Missing required parameter: state');
    const challenge = params.get('code_challenge');
    if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      return back('invalid_request', 'Missing or malformed code_challenge (PKCE is required).');
    }
    if (params.get('code_challenge_method') !== 'S256') {
      return back('invalid_request', 'code_challenge_method must be S256.');
    }
    const unique = [...new Set(scopes as string[])];
    return {
      kind: 'ok',
      consent: {
        provider,
        client,
        account: current[provider],
        redirectUri,
        state,
        scopes: unique,
        challenge,
        offline: provider === 'google' ? params.get('access_type') === 'offline' : unique.includes('offline_access'),
        promptConsent: (params.get('prompt') ?? '').split(/\s+/).includes('consent'),
        nonce: params.get('nonce') ?? undefined,
      },
    };
  }

  function consentPage(provider: FakeProviderId, requestId: string, consent: PendingConsent, action: string): string {
    const brand = provider === 'google' ? 'Google' : 'Microsoft';
    const descriptions = provider === 'google' ? GOOGLE_SCOPES : MICROSOFT_SCOPES;
    const appName = consent.client.name ?? 'Daybook';
    const items = consent.scopes
      .map((s) => `<li>${escapeHtml(descriptions[s] ?? s)} <small>(${escapeHtml(s)})</small></li>`)
      .join('\n');
    return page(
      `Sign in - ${brand} Accounts`,
      `<p>${brand}</p>
<h1>${escapeHtml(appName)} wants to read your calendars</h1>
<p>Signed in as <strong>${escapeHtml(consent.account.email)}</strong> (${escapeHtml(consent.account.name)})</p>
<p>${escapeHtml(appName)} is asking to:</p>
<ul>
${items}
</ul>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="request" value="${escapeHtml(requestId)}">
<div class="actions">
<button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="allow">Allow</button>
</div>
</form>`,
    );
  }

  function errorPage(res: ServerResponse, provider: FakeProviderId, status: number, title: string, detail: string) {
    const brand = provider === 'google' ? 'Google' : 'Microsoft';
    html(
      res,
      status,
      page(`${title} - ${brand}`, `<p>${brand}</p>\n<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(detail)}</p>`),
    );
  }

  const grantedOnly: Record<FakeProviderId, string[] | null> = { google: null, microsoft: null };

  /** The redirect back after the user decided. */
  function decide(asked: PendingConsent, allow: boolean): string {
    const only = grantedOnly[asked.provider];
    const consent = only ? { ...asked, scopes: asked.scopes.filter((s) => only.includes(s)) } : asked;
    const location = new URL(consent.redirectUri);
    if (!allow) {
      location.searchParams.set('error', 'access_denied');
      if (consent.provider === 'microsoft') {
        location.searchParams.set('error_description', 'AADSTS65004: User declined to consent to access the app.');
      }
      location.searchParams.set('state', consent.state);
      return location.href;
    }
    const code = consent.provider === 'google' ? `4/0${token(32)}` : `M.C5${token(32)}`;
    codes.set(code, { ...consent, expiresAt: now() + CODE_TTL_S * 1000, used: false });
    location.searchParams.set('code', code);
    location.searchParams.set('state', consent.state);
    // What the providers add beside code and state; a callback should ignore them.
    if (consent.provider === 'google') {
      location.searchParams.set('scope', consent.scopes.join(' '));
      location.searchParams.set('authuser', '0');
      location.searchParams.set('prompt', 'consent');
    } else {
      location.searchParams.set('session_state', randomUUID());
    }
    return location.href;
  }

  async function authorize(provider: FakeProviderId, req: IncomingMessage, res: ServerResponse, url: URL) {
    if (req.method === 'GET') {
      const check = checkAuthorize(provider, url.searchParams);
      if (check.kind === 'page') return errorPage(res, provider, check.status, check.title, check.detail);
      if (check.kind === 'redirect') return res.writeHead(302, { location: check.location }).end();
      const id = token(16);
      pending.set(id, check.consent);
      return html(res, 200, consentPage(provider, id, check.consent, url.pathname));
    }
    if (req.method === 'POST') {
      const form = new URLSearchParams(await readBody(req));
      const id = form.get('request') ?? '';
      const consent = pending.get(id);
      if (!consent || consent.provider !== provider) {
        return errorPage(res, provider, 400, 'This sign-in request has expired', 'Go back to the app and try again.');
      }
      pending.delete(id);
      const decision = form.get('decision');
      if (decision !== 'allow' && decision !== 'deny') {
        return errorPage(res, provider, 400, 'Choose Allow or Deny', 'The form was sent without a decision.');
      }
      return res.writeHead(303, { location: decide(consent, decision === 'allow') }).end();
    }
    res.writeHead(405, { allow: 'GET, POST' }).end();
  }

  // ---- Token endpoint ----

  function oauthError(provider: FakeProviderId, status: number, error: string, description: string, aadsts?: number) {
    const body: Record<string, unknown> = { error, error_description: description };
    if (provider === 'microsoft') {
      // Entra ID adds these to every error; clients should not need them.
      body.error_description = `AADSTS${aadsts ?? 9002313}: ${description} Trace ID: ${randomUUID()} Correlation ID: ${randomUUID()} Timestamp: ${new Date(now()).toISOString()}`;
      body.error_codes = [aadsts ?? 9002313];
      body.timestamp = new Date(now()).toISOString();
      body.trace_id = randomUUID();
      body.correlation_id = randomUUID();
    }
    return new HttpError(status, body);
  }

  function idToken(grant: Grant): string {
    const iat = Math.floor(now() / 1000);
    const { account } = grant;
    const has = (s: string) => grant.scopes.includes(s);
    if (grant.provider === 'google') {
      return fakeJwt({
        iss: GOOGLE_ISSUER,
        azp: grant.clientId,
        aud: grant.clientId,
        sub: account.sub,
        ...(has(`${GOOGLE_API}userinfo.email`) ? { email: account.email, email_verified: true } : {}),
        ...(has(`${GOOGLE_API}userinfo.profile`) ? { name: account.name } : {}),
        ...(grant.nonce ? { nonce: grant.nonce } : {}),
        iat,
        exp: iat + 3600,
      });
    }
    return fakeJwt({
      ver: '2.0',
      iss: `https://login.microsoftonline.com/${MSA_TENANT}/v2.0`,
      aud: grant.clientId,
      sub: account.sub,
      oid: oidOf(account),
      tid: MSA_TENANT,
      ...(has('email') ? { email: account.email } : {}),
      ...(has('profile') ? { name: account.name, preferred_username: account.email } : {}),
      ...(grant.nonce ? { nonce: grant.nonce } : {}),
      iat,
      nbf: iat,
      exp: iat + 3600,
    });
  }

  function issueAccessToken(grant: Grant): { accessToken: string; expiresIn: number } {
    const expiresIn = accessTtl[grant.provider];
    const accessToken =
      grant.provider === 'google'
        ? `ya29.${token(48)}`
        : fakeJwt({ aud: '00000003-0000-0000-c000-000000000000', scp: grant.scopes.join(' '), jti: token(12) });
    accessTokens.set(accessToken, { grant, expiresAt: now() + expiresIn * 1000 });
    return { accessToken, expiresIn };
  }

  function issueRefreshToken(grant: Grant): string {
    const refreshToken = grant.provider === 'google' ? `1//0${token(48)}` : `M.C5${token(64)}`;
    refreshTokens.set(refreshToken, { grant, valid: true });
    return refreshToken;
  }

  function tokenResponse(grant: Grant, refreshToken: string | null): Record<string, unknown> {
    const { accessToken, expiresIn } = issueAccessToken(grant);
    const body: Record<string, unknown> = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: expiresIn,
      ...(grant.provider === 'microsoft' ? { ext_expires_in: expiresIn } : {}),
      scope: grantedScopeString(grant),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      ...(grant.scopes.includes('openid') ? { id_token: idToken(grant) } : {}),
    };
    return body;
  }

  function authenticateClient(provider: FakeProviderId, req: IncomingMessage, form: URLSearchParams): FakeClient {
    const header = req.headers.authorization;
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    if (header?.startsWith('Basic ')) {
      if (secret !== null) {
        throw oauthError(provider, 400, 'invalid_request', 'Only one client authentication method may be used.');
      }
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const basicId = safeDecode(decoded.slice(0, colon));
      if (colon < 0 || (id !== null && id !== basicId)) {
        throw oauthError(provider, 401, 'invalid_client', 'Client authentication failed.', 7000215);
      }
      id = basicId;
      secret = safeDecode(decoded.slice(colon + 1));
    }
    const client = id ? clients[provider].get(id) : undefined;
    if (!client || secret === null || secret !== client.clientSecret) {
      const error = oauthError(
        provider,
        401,
        'invalid_client',
        provider === 'google' ? 'Unauthorized' : 'Invalid client secret provided.',
        7000215,
      );
      if (header?.startsWith('Basic ')) error.headers['www-authenticate'] = 'Basic realm="token"';
      throw error;
    }
    return client;
  }

  function redeemCode(provider: FakeProviderId, client: FakeClient, form: URLSearchParams): Record<string, unknown> {
    const code = form.get('code') ?? '';
    const issued = codes.get(code);
    const google = provider === 'google';
    if (!issued || issued.provider !== provider || issued.client.clientId !== client.clientId) {
      throw oauthError(
        provider,
        400,
        'invalid_grant',
        google ? 'Malformed auth code.' : 'Invalid authorization code.',
        9002313,
      );
    }
    if (issued.used) {
      throw oauthError(
        provider,
        400,
        'invalid_grant',
        google ? 'Bad Request' : 'OAuth2 Authorization code was already redeemed.',
        54005,
      );
    }
    if (issued.expiresAt <= now()) {
      throw oauthError(provider, 400, 'invalid_grant', google ? 'Bad Request' : 'The code has expired.', 70008);
    }
    if (form.get('redirect_uri') !== issued.redirectUri) {
      throw oauthError(
        provider,
        400,
        'invalid_grant',
        google ? 'Bad Request' : 'The redirect URI does not match the one used to obtain the code.',
        500112,
      );
    }
    const verifier = form.get('code_verifier');
    if (!verifier) {
      throw oauthError(provider, 400, 'invalid_grant', 'Missing code verifier.', 50148);
    }
    if (s256(verifier) !== issued.challenge) {
      throw oauthError(
        provider,
        400,
        'invalid_grant',
        google
          ? 'Invalid code verifier.'
          : 'The code_verifier does not match the code_challenge supplied in the authorization request.',
        501481,
      );
    }
    issued.used = true;
    // Google hands out a refresh token once per user and app, unless the app asks for consent again.
    const hadOffline =
      google &&
      grants.some(
        (g) =>
          g.provider === 'google' &&
          g.clientId === client.clientId &&
          g.account.sub === issued.account.sub &&
          g.offline &&
          !g.revoked,
      );
    const grant: Grant = {
      provider,
      clientId: client.clientId,
      account: issued.account,
      scopes: issued.scopes,
      offline: issued.offline,
      revoked: false,
      nonce: issued.nonce,
    };
    grants.push(grant);
    const withRefresh = issued.offline && (!google || issued.promptConsent || !hadOffline);
    return tokenResponse(grant, withRefresh ? issueRefreshToken(grant) : null);
  }

  function refresh(provider: FakeProviderId, client: FakeClient, form: URLSearchParams): Record<string, unknown> {
    const presented = form.get('refresh_token') ?? '';
    const stored = refreshTokens.get(presented);
    const google = provider === 'google';
    if (!stored || stored.grant.provider !== provider || stored.grant.clientId !== client.clientId) {
      throw oauthError(provider, 400, 'invalid_grant', google ? 'Bad Request' : 'Invalid refresh token.', 9002313);
    }
    if (!stored.valid || stored.grant.revoked) {
      throw oauthError(
        provider,
        400,
        'invalid_grant',
        google ? 'Token has been expired or revoked.' : 'The refresh token has been revoked.',
        stored.grant.revoked ? 50173 : 700084,
      );
    }
    const { grant } = stored;
    const asked = form.get('scope');
    if (asked) {
      const scopes = canonicalScopes(provider, asked);
      if (scopes.some((s) => s === null || !grant.scopes.includes(s))) {
        throw oauthError(provider, 400, 'invalid_scope', 'The requested scope exceeds the granted scope.', 70011);
      }
    }
    let next: string | null = null;
    if (rotate[provider]) {
      stored.valid = false;
      next = issueRefreshToken(grant);
    } else if (!google) {
      next = presented;
    }
    return tokenResponse(grant, next);
  }

  async function tokenEndpoint(provider: FakeProviderId, req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
    const raw = await readBody(req);
    const form = new URLSearchParams(raw);
    const entry: FakeTokenRequest = {
      provider,
      grantType: form.get('grant_type') ?? '',
      clientId: form.get('client_id') ?? basicClientId(req.headers.authorization),
      status: null,
    };
    tokenRequests.push(entry);
    inFlight++;
    peak = Math.max(peak, inFlight);
    try {
      if (held) await held;
      const failure = tokenFailures.findIndex((f) => !f.provider || f.provider === provider);
      if (failure >= 0) {
        const [{ status }] = tokenFailures.splice(failure, 1) as [{ status: number }];
        throw oauthError(
          provider,
          status,
          status === 503 ? 'temporarily_unavailable' : 'server_error',
          'The server is temporarily unable to handle the request.',
          90033,
        );
      }
      if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
        throw oauthError(
          provider,
          400,
          'invalid_request',
          'The request body must be application/x-www-form-urlencoded.',
          900144,
        );
      }
      const client = authenticateClient(provider, req, form);
      let body: Record<string, unknown>;
      if (entry.grantType === 'authorization_code') body = redeemCode(provider, client, form);
      else if (entry.grantType === 'refresh_token') body = refresh(provider, client, form);
      else throw oauthError(provider, 400, 'unsupported_grant_type', 'Invalid grant_type.', 70003);
      entry.status = 200;
      json(res, 200, body, { 'cache-control': 'no-store', pragma: 'no-cache' });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      entry.status = err.status;
      entry.error = (err.body as { error?: string }).error;
      json(res, err.status, err.body, { 'cache-control': 'no-store', ...err.headers });
    } finally {
      inFlight--;
    }
  }

  async function googleRevoke(req: IncomingMessage, res: ServerResponse, url: URL) {
    if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
    const form = new URLSearchParams(await readBody(req));
    const presented = form.get('token') ?? url.searchParams.get('token');
    if (!presented) return json(res, 400, { error: 'invalid_request', error_description: 'Bad Request' });
    const refreshGrant = refreshTokens.get(presented);
    const accessGrant = accessTokens.get(presented);
    const grant = refreshGrant?.grant ?? accessGrant?.grant;
    const live =
      grant &&
      grant.provider === 'google' &&
      !grant.revoked &&
      (refreshGrant ? refreshGrant.valid : accessGrant && accessGrant.expiresAt > now());
    if (!grant || !live)
      return json(res, 400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
    // Revoking either token ends the whole grant, as at Google.
    grant.revoked = true;
    revoked.push({
      provider: 'google',
      token: presented,
      tokenType: refreshGrant ? 'refresh_token' : 'access_token',
      clientId: grant.clientId,
      sub: grant.account.sub,
    });
    json(res, 200, {});
  }

  // ---- APIs ----

  function bearer(req: IncomingMessage, provider: FakeProviderId): Grant | null {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const stored = match?.[1] ? accessTokens.get(match[1]) : undefined;
    if (!stored || stored.grant.provider !== provider || stored.grant.revoked || stored.expiresAt <= now()) return null;
    return stored.grant;
  }

  function googleError(status: number, reason: string, message: string, extra: Record<string, unknown> = {}) {
    return new HttpError(status, {
      error: {
        code: status,
        message,
        errors: [{ message, domain: 'global', reason, ...extra }],
        ...statusName(status),
      },
    });
  }

  function googleFailure(status: number): HttpError {
    if (status === 429) return googleError(429, 'rateLimitExceeded', 'Rate Limit Exceeded');
    if (status === 403) return googleError(403, 'rateLimitExceeded', 'Rate Limit Exceeded');
    if (status === 503) return googleError(503, 'backendError', 'The service is currently unavailable.');
    return googleError(status, 'backendError', 'Backend Error');
  }

  function googleNeeds(grant: Grant, which: keyof typeof GOOGLE_NEEDS) {
    if (!GOOGLE_NEEDS[which].some((s) => grant.scopes.includes(`${GOOGLE_API}${s}`))) {
      throw new HttpError(403, {
        error: {
          code: 403,
          message: 'Request had insufficient authentication scopes.',
          errors: [{ message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' }],
          status: 'PERMISSION_DENIED',
        },
      });
    }
  }

  const pageLimit = (asked: number) => Math.max(1, Math.min(asked, pageSize ?? asked));
  const pageToken = (offset: number) => Buffer.from(`o:${offset}`).toString('base64url');
  function pageOffset(value: string | null, bad: () => HttpError): number {
    if (value === null) return 0;
    const match = /^o:(\d+)$/.exec(Buffer.from(value, 'base64url').toString('utf8'));
    if (!match) throw bad();
    return Number(match[1]);
  }
  function intParam(value: string | null, fallback: number, max: number, bad: () => HttpError): number {
    if (value === null) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < 1) throw bad();
    return Math.min(Number(value), max);
  }

  function googleCalendarEntry(data: GoogleCalendarData) {
    const { entry } = data;
    return {
      kind: 'calendar#calendarListEntry',
      etag: `"${createHash('sha1').update(entry.id).digest('hex').slice(0, 16)}"`,
      id: entry.id,
      summary: entry.summary,
      timeZone: entry.timeZone,
      colorId: '14',
      backgroundColor: '#9fe1e7',
      foregroundColor: '#000000',
      // Google leaves false booleans out.
      ...(entry.selected ? { selected: true } : {}),
      ...(entry.hidden ? { hidden: true } : {}),
      accessRole: entry.accessRole,
      defaultReminders: [],
      ...(data.primary ? { primary: true } : {}),
      conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
    };
  }

  function googleTime(time: FakeGoogleTime, zone: string): Record<string, string> {
    if ('date' in time) return { date: time.date };
    const ms = googleInstant(time, 'UTC');
    return { dateTime: rfc3339In(ms, zone), ...(time.timeZone ? { timeZone: time.timeZone } : {}) };
  }

  function googleEventBody(stored: StoredGoogleEvent, organizer: string, zone: string) {
    const { event } = stored;
    return {
      kind: 'calendar#event',
      etag: `"${createHash('sha1').update(event.id).digest('hex').slice(0, 16)}"`,
      id: event.id,
      status: event.status ?? 'confirmed',
      htmlLink:
        event.htmlLink ??
        `https://www.google.com/calendar/event?eid=${Buffer.from(`${event.id} ${organizer}`).toString('base64url')}`,
      created: stored.created,
      updated: stored.created,
      ...(event.summary !== undefined ? { summary: event.summary } : {}),
      ...(event.location !== undefined ? { location: event.location } : {}),
      creator: { email: organizer, self: true },
      organizer: { email: organizer, self: true },
      start: googleTime(event.start, zone),
      end: googleTime(event.end, zone),
      ...(event.recurringEventId
        ? { recurringEventId: event.recurringEventId, originalStartTime: googleTime(event.start, zone) }
        : {}),
      iCalUID: `${event.recurringEventId ?? event.id}@google.com`,
      sequence: 0,
      reminders: { useDefault: true },
      eventType: 'default',
    };
  }

  function googleApi(path: string[], url: URL, grant: Grant): unknown {
    const account = grant.account;
    const box = mailbox('google', account);
    const badRequest = (message = 'Bad Request') => googleError(400, 'badRequest', message);
    const notFound = () => googleError(404, 'notFound', 'Not Found');
    const calendarOf = (id: string) => {
      const data = box.calendars.get(id === 'primary' ? account.email : id);
      if (!data) throw notFound();
      return data;
    };

    if (path.length === 3 && path[0] === 'users' && path[1] === 'me' && path[2] === 'calendarList') {
      googleNeeds(grant, 'calendarList');
      const showHidden = url.searchParams.get('showHidden') === 'true';
      const all = [...box.calendars.values()].filter((c) => showHidden || !c.entry.hidden);
      const limit = pageLimit(
        intParam(url.searchParams.get('maxResults'), 100, 250, () => badRequest('Invalid Value')),
      );
      const offset = pageOffset(url.searchParams.get('pageToken'), () => badRequest('Invalid Value'));
      const slice = all.slice(offset, offset + limit);
      return {
        kind: 'calendar#calendarList',
        etag: `"p${offset}"`,
        ...(offset + limit < all.length
          ? { nextPageToken: pageToken(offset + limit) }
          : { nextSyncToken: `sync${token(8)}` }),
        items: slice.map(googleCalendarEntry),
      };
    }
    if (path.length === 2 && path[0] === 'calendars') {
      googleNeeds(grant, 'calendar');
      const data = calendarOf(path[1] ?? '');
      return {
        kind: 'calendar#calendar',
        etag: `"${createHash('sha1').update(data.entry.id).digest('hex').slice(0, 16)}"`,
        id: data.entry.id,
        summary: data.entry.summary,
        timeZone: data.entry.timeZone,
        conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
      };
    }
    if (path.length === 3 && path[0] === 'calendars' && path[2] === 'events') {
      googleNeeds(grant, 'events');
      const data = calendarOf(path[1] ?? '');
      const q = url.searchParams;
      const timeMin = q.get('timeMin');
      const timeMax = q.get('timeMax');
      for (const t of [timeMin, timeMax]) if (t !== null && !RFC3339.test(t)) throw badRequest();
      const min = timeMin === null ? null : Date.parse(timeMin);
      const max = timeMax === null ? null : Date.parse(timeMax);
      if (min !== null && max !== null && max <= min) throw badRequest('The specified time range is empty.');
      const singleEvents = q.get('singleEvents') === 'true';
      const orderBy = q.get('orderBy');
      if (orderBy !== null && orderBy !== 'startTime' && orderBy !== 'updated') throw badRequest('Invalid Value');
      if (orderBy === 'startTime' && !singleEvents) {
        throw badRequest('The requested ordering is not available for the particular query.');
      }
      const zone = q.get('timeZone') ?? data.entry.timeZone;
      if (!isZone(zone)) throw badRequest('Invalid time zone definition for time zone.');
      const limit = pageLimit(intParam(q.get('maxResults'), 250, 2500, () => badRequest('Invalid Value')));
      const offset = pageOffset(q.get('pageToken'), () => badRequest('Invalid Value'));
      const showDeleted = q.get('showDeleted') === 'true';
      // timeMin bounds the end and timeMax the start, both exclusive, as in the API's reference.
      const matching = data.events.filter(
        (e) =>
          (showDeleted || e.event.status !== 'cancelled') &&
          (min === null || e.end > min) &&
          (max === null || e.start < max),
      );
      if (orderBy === 'startTime') matching.sort((a, b) => a.start - b.start);
      const slice = matching.slice(offset, offset + limit);
      return {
        kind: 'calendar#events',
        etag: `"p${offset}"`,
        summary: data.entry.summary,
        description: '',
        updated: new Date(now()).toISOString(),
        timeZone: data.entry.timeZone,
        accessRole: data.entry.accessRole,
        defaultReminders: [],
        ...(offset + limit < matching.length ? { nextPageToken: pageToken(offset + limit) } : {}),
        items: slice.map((e) => googleEventBody(e, data.entry.id, zone)),
      };
    }
    throw notFound();
  }

  function graphError(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    return new HttpError(
      status,
      {
        error: {
          code,
          message,
          innerError: {
            date: new Date(now()).toISOString().slice(0, 19),
            'request-id': randomUUID(),
            'client-request-id': randomUUID(),
          },
        },
      },
      headers,
    );
  }

  function graphFailure(status: number): HttpError {
    if (status === 429) {
      return graphError(429, 'TooManyRequests', 'Too many requests.', { 'retry-after': '3' });
    }
    if (status === 503) return graphError(503, 'ServiceNotAvailable', 'Service unavailable.');
    if (status === 504) return graphError(504, 'UnknownError', '');
    return graphError(status, 'InternalServerError', 'An internal server error occurred.');
  }

  const GRAPH_EVENT_FIELDS = new Set([
    'id',
    'subject',
    'isAllDay',
    'isCancelled',
    'webLink',
    'location',
    'start',
    'end',
    'createdDateTime',
    'lastModifiedDateTime',
    'changeKey',
    'categories',
    'iCalUId',
    'bodyPreview',
    'importance',
    'sensitivity',
    'isOrganizer',
    'showAs',
    'type',
    'organizer',
  ]);

  /** Graph's Prefer: outlook.timezone; an unknown zone leaves UTC in force. */
  function preferredZone(prefer: string | undefined): { name: string; iana: string; applied: boolean } {
    const match = /outlook\.timezone\s*=\s*"([^"]*)"/i.exec(prefer ?? '');
    const name = match?.[1];
    if (name) {
      const iana = WINDOWS_ZONES[name] ?? (isZone(name) ? name : undefined);
      if (iana) return { name, iana, applied: true };
    }
    return { name: 'UTC', iana: 'UTC', applied: false };
  }

  function graphEventBody(stored: StoredMicrosoftEvent, zone: { name: string; iana: string }, owner: FakeAccount) {
    const { event } = stored;
    const time = (t: FakeMicrosoftEvent['start']) => {
      // All-day events float: midnight of their dates in whatever zone was asked for.
      const local = event.isAllDay ? `${t.dateTime.slice(0, 10)}T00:00:00` : localTime(graphInstant(t), zone.iana);
      return { dateTime: `${local}.0000000`, timeZone: zone.name };
    };
    return {
      '@odata.etag': `W/"${createHash('sha1').update(event.id).digest('base64').slice(0, 20)}"`,
      id: event.id,
      createdDateTime: stored.created,
      lastModifiedDateTime: stored.created,
      changeKey: createHash('sha1').update(event.id).digest('base64').slice(0, 20),
      categories: [],
      iCalUId: `040000008200E00074C5B7101A82E008${createHash('sha1').update(event.id).digest('hex').toUpperCase()}`,
      subject: event.subject,
      bodyPreview: '',
      importance: 'normal',
      sensitivity: 'normal',
      isAllDay: event.isAllDay ?? false,
      isCancelled: event.isCancelled ?? false,
      isOrganizer: true,
      showAs: event.isAllDay ? 'free' : 'busy',
      type: 'singleInstance',
      webLink:
        event.webLink ??
        `https://outlook.live.com/owa/?itemid=${encodeURIComponent(event.id)}&exvsurl=1&path=/calendar/item`,
      start: time(event.start),
      end: time(event.end),
      location: event.location
        ? { displayName: event.location, locationType: 'default', uniqueIdType: 'unknown' }
        : { displayName: '', locationType: 'default', uniqueIdType: 'unknown' },
      organizer: { emailAddress: { name: owner.name, address: owner.email } },
    };
  }

  function graphSpan(stored: StoredMicrosoftEvent, zone: string): [number, number] {
    const { event } = stored;
    if (event.isAllDay) {
      return [
        zonedInstant(`${event.start.dateTime.slice(0, 10)}T00:00`, zone),
        zonedInstant(`${event.end.dateTime.slice(0, 10)}T00:00`, zone),
      ];
    }
    return [graphInstant(event.start), graphInstant(event.end)];
  }

  function graphApi(
    path: string[],
    url: URL,
    grant: Grant,
    req: IncomingMessage,
    base: string,
  ): { body: unknown; headers?: Record<string, string> } {
    const account = grant.account;
    const box = mailbox('microsoft', account);
    const route = path.join('/').toLowerCase();
    const denied = () => graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
    const calendarScope = () => {
      if (!GRAPH_CALENDAR_SCOPES.some((s) => grant.scopes.includes(s))) throw denied();
    };
    const calendarId = `AQMkADAwATM0MDAAMS1${createHash('sha1').update(account.sub).digest('base64url').slice(0, 24)}AAAA==`;

    if (route === 'me') {
      if (!grant.scopes.includes('User.Read')) {
        throw graphError(403, 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.');
      }
      const [givenName, ...rest] = account.name.split(' ');
      return {
        body: {
          '@odata.context': `${base}/$metadata#users/$entity`,
          id: oidOf(account).replace(/-/g, '').slice(-16),
          displayName: account.name,
          givenName,
          surname: rest.join(' ') || null,
          mail: account.email,
          userPrincipalName: account.email,
          preferredLanguage: 'en-US',
        },
      };
    }
    if (route === 'me/calendar') {
      calendarScope();
      return {
        body: {
          '@odata.context': `${base}/$metadata#users('${encodeURIComponent(account.email)}')/calendar/$entity`,
          id: calendarId,
          name: 'Calendar',
          color: 'auto',
          hexColor: '',
          isDefaultCalendar: true,
          changeKey: 'DwAAABYAAAA',
          canShare: true,
          canViewPrivateItems: true,
          canEdit: true,
          allowedOnlineMeetingProviders: ['teamsForBusiness'],
          defaultOnlineMeetingProvider: 'teamsForBusiness',
          isTallyingResponses: true,
          isRemovable: false,
          owner: { name: account.name, address: account.email },
        },
      };
    }
    if (route === 'me/calendarview') {
      calendarScope();
      const q = url.searchParams;
      const startRaw = q.get('startDateTime') ?? q.get('StartDateTime');
      const endRaw = q.get('endDateTime') ?? q.get('EndDateTime');
      if (!startRaw || !endRaw) {
        throw graphError(
          400,
          'ErrorInvalidParameter',
          'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.',
        );
      }
      const parse = (value: string) => {
        const ms = Date.parse(/(Z|[+-]\d{2}:\d{2})$/i.test(value) ? value : `${value}Z`);
        if (!LOCAL_TIME.test(value.replace(/(Z|[+-]\d{2}:\d{2})$/i, '')) || Number.isNaN(ms)) {
          throw graphError(400, 'ErrorInvalidParameter', `The parameter 'StartDateTime' or 'EndDateTime' is invalid.`);
        }
        return ms;
      };
      const start = parse(startRaw);
      const end = parse(endRaw);
      const select =
        q
          .get('$select')
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean) ?? null;
      for (const field of select ?? []) {
        if (!GRAPH_EVENT_FIELDS.has(field)) {
          throw graphError(
            400,
            'RequestBroker--ParseUri',
            `Could not find a property named '${field}' on type 'microsoft.graph.event'.`,
          );
        }
      }
      const orderBy = q.get('$orderby');
      const order = orderBy ? /^(start\/dateTime|end\/dateTime|subject)(\s+(asc|desc))?$/i.exec(orderBy.trim()) : null;
      if (orderBy && !order) {
        throw graphError(
          400,
          'BadRequest',
          `Could not find a property named '${orderBy.split(/[\s/]/)[0]}' on type 'microsoft.graph.event'.`,
        );
      }
      const bad = () => graphError(400, 'BadRequest', "Invalid value for '$top' or '$skip'.");
      const top = intParam(q.get('$top'), 10, 1000, bad);
      const skip = q.get('$skip') === null ? 0 : Number.parseInt(q.get('$skip') ?? '', 10);
      if (!Number.isInteger(skip) || skip < 0) throw bad();
      const zone = preferredZone([req.headers.prefer ?? ''].flat().join(', '));
      const matching = box.graphEvents
        .map((e) => ({ e, span: graphSpan(e, zone.iana) }))
        .filter(({ span }) => span[0] < end && span[1] > start);
      if (order) {
        const key = order[1]?.toLowerCase();
        const dir = order[3]?.toLowerCase() === 'desc' ? -1 : 1;
        matching.sort((a, b) =>
          key === 'subject'
            ? dir * a.e.event.subject.localeCompare(b.e.event.subject)
            : dir * (key === 'end/datetime' ? a.span[1] - b.span[1] : a.span[0] - b.span[0]),
        );
      }
      const limit = pageLimit(top);
      const slice = matching.slice(skip, skip + limit);
      const value = slice.map(({ e }) => {
        const full = graphEventBody(e, zone, account) as Record<string, unknown>;
        if (!select) return full;
        const picked: Record<string, unknown> = { '@odata.etag': full['@odata.etag'], id: full.id };
        for (const field of select) picked[field] = full[field];
        return picked;
      });
      const body: Record<string, unknown> = {
        '@odata.context': `${base}/$metadata#users('${encodeURIComponent(account.email)}')/calendarView${select ? `(${select.join(',')})` : ''}`,
        value,
      };
      if (skip + limit < matching.length) {
        const next = new URL(`${base}/me/calendarView`);
        q.forEach((val, key) => {
          if (key !== '$skip') next.searchParams.set(key, val);
        });
        next.searchParams.set('$skip', String(skip + limit));
        body['@odata.nextLink'] = next.href;
      }
      return {
        body,
        headers: zone.applied ? { 'preference-applied': `outlook.timezone="${zone.name}"` } : {},
      };
    }
    throw graphError(400, 'BadRequest', `Resource not found for the segment '${path[path.length - 1] ?? ''}'.`);
  }

  async function api(provider: FakeProviderId, req: IncomingMessage, res: ServerResponse, url: URL, rest: string) {
    apiCalls[provider]++;
    apiRequests.push({
      provider,
      method: req.method ?? '',
      url: req.url ?? '',
      ...(req.headers.prefer ? { prefer: String(req.headers.prefer) } : {}),
    });
    await readBody(req);
    try {
      const failure = apiFailures[provider].shift();
      if (failure !== undefined) throw provider === 'google' ? googleFailure(failure) : graphFailure(failure);
      const grant = bearer(req, provider);
      if (!grant) {
        if (provider === 'google') {
          const err = googleError(
            401,
            'authError',
            'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
            { location: 'Authorization', locationType: 'header' },
          );
          err.headers['www-authenticate'] = 'Bearer realm="https://accounts.google.com/", error="invalid_token"';
          throw err;
        }
        throw graphError(401, 'InvalidAuthenticationToken', 'Access token has expired or is not yet valid.', {
          'www-authenticate':
            'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"',
        });
      }
      if (req.method !== 'GET') {
        throw provider === 'google'
          ? googleError(405, 'httpMethodNotAllowed', 'Method Not Allowed')
          : graphError(405, 'Request_BadRequest', 'Specified HTTP method is not allowed for the request target.');
      }
      const path = rest
        .split('/')
        .filter(Boolean)
        .map((segment) => safeDecode(segment));
      if (provider === 'google') return json(res, 200, googleApi(path, url, grant));
      const answer = graphApi(path, url, grant, req, `${origin}/microsoft/v1.0`);
      return json(res, 200, answer.body, answer.headers);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      json(res, err.status, err.body, err.headers);
    }
  }

  // ---- Routing ----

  async function route(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const p = url.pathname;
    if (p === '/google/o/oauth2/v2/auth') return authorize('google', req, res, url);
    if (p === '/google/token') return tokenEndpoint('google', req, res);
    if (p === '/google/revoke') return googleRevoke(req, res, url);
    if (p.startsWith('/google/calendar/v3/'))
      return api('google', req, res, url, p.slice('/google/calendar/v3/'.length));
    if (p === '/microsoft/common/oauth2/v2.0/authorize') return authorize('microsoft', req, res, url);
    if (p === '/microsoft/common/oauth2/v2.0/token') return tokenEndpoint('microsoft', req, res);
    if (p.startsWith('/microsoft/v1.0/')) return api('microsoft', req, res, url, p.slice('/microsoft/v1.0/'.length));
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) return json(res, err.status, err.body, err.headers);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  async function decideByHttp(authorizeUrl: string, decision: 'allow' | 'deny'): Promise<string> {
    const shown = await fetch(authorizeUrl, { redirect: 'manual' });
    const text = await shown.text();
    const location = shown.headers.get('location');
    if (shown.status >= 300 && shown.status < 400 && location) return location;
    if (shown.status !== 200) {
      const title = /<h1>([^<]*)<\/h1>/.exec(text)?.[1] ?? `status ${shown.status}`;
      throw new Error(`fake-calendar: the provider showed an error page: ${title}`);
    }
    const requestId = /name="request" value="([^"]+)"/.exec(text)?.[1];
    const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
    if (!requestId || !action) throw new Error('fake-calendar: no consent form on the page');
    const sent = await fetch(new URL(action, authorizeUrl), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: requestId, decision }).toString(),
    });
    await sent.body?.cancel();
    const back = sent.headers.get('location');
    if (!back) throw new Error(`fake-calendar: the consent form answered ${sent.status} without a redirect`);
    return back;
  }

  return {
    url: origin,
    endpoints: {
      google: {
        authorizeUrl: `${origin}/google/o/oauth2/v2/auth`,
        tokenUrl: `${origin}/google/token`,
        revokeUrl: `${origin}/google/revoke`,
        apiUrl: `${origin}/google/calendar/v3`,
      },
      microsoft: {
        authorizeUrl: `${origin}/microsoft/common/oauth2/v2.0/authorize`,
        tokenUrl: `${origin}/microsoft/common/oauth2/v2.0/token`,
        apiUrl: `${origin}/microsoft/v1.0`,
      },
    },
    registerClient(provider, client) {
      clients[provider].set(client.clientId, { ...client, redirectUris: [...client.redirectUris] });
    },
    setAccount(provider, account) {
      if (account.timeZone !== undefined && !isZone(account.timeZone)) {
        throw new Error(`fake-calendar: unknown time zone ${account.timeZone}`);
      }
      const known = accounts[provider].get(account.email.toLowerCase());
      const next = known && known.sub === account.sub ? Object.assign(known, account) : { ...account };
      accounts[provider].set(account.email.toLowerCase(), next);
      current[provider] = next;
    },
    account: (provider) => current[provider],
    approve: (authorizeUrl) => decideByHttp(authorizeUrl, 'allow'),
    grantOnly: (provider, scopes) => {
      grantedOnly[provider] = scopes;
    },
    deny: (authorizeUrl) => decideByHttp(authorizeUrl, 'deny'),
    createGrant(provider, options = {}) {
      const scopes =
        options.scopes ??
        (provider === 'google'
          ? ['openid', `${GOOGLE_API}userinfo.email`, `${GOOGLE_API}calendar.readonly`]
          : ['openid', 'email', 'offline_access', 'Calendars.ReadBasic']);
      const canonical = canonicalScopes(provider, scopes.join(' '));
      if (canonical.some((s) => s === null))
        throw new Error(`fake-calendar: unknown ${provider} scope in ${scopes.join(' ')}`);
      const grant: Grant = {
        provider,
        clientId: options.clientId ?? 'fake-calendar-direct',
        account: current[provider],
        scopes: [...new Set(canonical as string[])],
        offline: true,
        revoked: false,
      };
      grants.push(grant);
      return { accessToken: issueAccessToken(grant).accessToken, refreshToken: issueRefreshToken(grant) };
    },
    setAccessTokenTtl(seconds, provider) {
      for (const p of provider ? [provider] : (['google', 'microsoft'] as const)) accessTtl[p] = seconds;
    },
    advanceClock(seconds) {
      clockOffsetMs += seconds * 1000;
    },
    setRotateRefreshTokens(provider, on) {
      rotate[provider] = on;
    },
    revokeAllGrants(provider) {
      for (const grant of grants) if (grant.provider === provider) grant.revoked = true;
    },
    tokenRequests,
    failNextTokenRequests(count, status, provider) {
      for (let i = 0; i < count; i++) tokenFailures.push({ provider, status });
    },
    holdTokenRequests() {
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      held = gate;
      return () => {
        if (held === gate) held = null;
        release();
      };
    },
    get peakConcurrentTokenRequests() {
      return peak;
    },
    revoked,
    addGoogleCalendar(calendar, accountEmail) {
      const box = mailbox('google', accountFor('google', accountEmail));
      if (box.calendars.has(calendar.id)) throw new Error(`fake-calendar: calendar ${calendar.id} exists`);
      const timeZone = calendar.timeZone ?? 'UTC';
      if (!isZone(timeZone)) throw new Error(`fake-calendar: unknown time zone ${timeZone}`);
      box.calendars.set(calendar.id, {
        entry: { ...calendar, timeZone, accessRole: calendar.accessRole ?? 'reader' },
        primary: false,
        events: [],
      });
    },
    addGoogleEvents(calendarId, events, accountEmail) {
      const account = accountFor('google', accountEmail);
      const box = mailbox('google', account);
      const data = box.calendars.get(calendarId === 'primary' ? account.email : calendarId);
      if (!data) throw new Error(`fake-calendar: no calendar ${calendarId}; add it with addGoogleCalendar`);
      for (const event of events) {
        const id =
          event.id ??
          `ev${++eventSeq}${token(6)
            .toLowerCase()
            .replace(/[^a-v0-9]/g, '')}`;
        const stored = { ...event, id };
        data.events.push({
          event: stored,
          start: googleInstant(event.start, data.entry.timeZone),
          end: googleInstant(event.end, data.entry.timeZone),
          created: new Date(now()).toISOString(),
        });
      }
    },
    addMicrosoftEvents(events, accountEmail) {
      const box = mailbox('microsoft', accountFor('microsoft', accountEmail));
      for (const event of events) {
        graphInstant(event.start);
        graphInstant(event.end);
        box.graphEvents.push({
          event: { ...event, id: event.id ?? `AAMkAGI2T${token(24)}=` },
          created: new Date(now()).toISOString(),
        });
      }
    },
    setPageSize(size) {
      pageSize = size;
    },
    failNextApiRequests(provider, count, status) {
      for (let i = 0; i < count; i++) apiFailures[provider].push(status);
    },
    apiCalls,
    apiRequests,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A Google time's instant; all-day dates start at midnight in the calendar's zone. */
function googleInstant(time: FakeGoogleTime, calendarZone: string): number {
  if ('date' in time) {
    if (!DATE.test(time.date)) throw new Error(`fake-calendar: bad date ${time.date}`);
    return zonedInstant(`${time.date}T00:00`, calendarZone);
  }
  if (RFC3339.test(time.dateTime)) return Date.parse(time.dateTime);
  if (LOCAL_TIME.test(time.dateTime) && time.timeZone && isZone(time.timeZone)) {
    return zonedInstant(time.dateTime, time.timeZone);
  }
  throw new Error(`fake-calendar: ${time.dateTime} needs an offset or a known timeZone`);
}

function graphInstant(time: { dateTime: string; timeZone: string }): number {
  const zone = WINDOWS_ZONES[time.timeZone] ?? time.timeZone;
  if (!LOCAL_TIME.test(time.dateTime) || !isZone(zone)) {
    throw new Error(`fake-calendar: ${time.dateTime} in ${time.timeZone} is not a Graph date-time`);
  }
  return zonedInstant(time.dateTime, zone);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function basicClientId(header: string | undefined): string | null {
  if (!header?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : safeDecode(decoded.slice(0, colon));
}

function statusName(status: number): { status?: string } {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL',
    503: 'UNAVAILABLE',
  };
  return names[status] ? { status: names[status] } : {};
}

/** A calendar host serving ICS files by path (any query), as Google's secret address or a Nextcloud does. */
export interface CalendarHost {
  url(path: string): string;
  close(): Promise<void>;
}

export async function startCalendarHost(files: Record<string, string>): Promise<CalendarHost> {
  const server = createServer((req, res) => {
    const body = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${origin}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Registers a Daybook at `publicUrl` with both providers (client `<provider>-client`, secret
 * `<provider>-secret`) and answers the settings that enable them.
 */
export function registerDaybook(providers: FakeCalendarProviders, publicUrl: string): Record<string, string> {
  for (const id of ['google', 'microsoft'] as const)
    providers.registerClient(id, {
      clientId: `${id}-client`,
      clientSecret: `${id}-secret`,
      redirectUris: [`${publicUrl}/accounts/${id}/login/callback/`],
    });
  return {
    GOOGLE_CLIENT_ID: 'google-client',
    GOOGLE_CLIENT_SECRET: 'google-secret',
    MICROSOFT_CLIENT_ID: 'microsoft-client',
    MICROSOFT_CLIENT_SECRET: 'microsoft-secret',
  };
}
