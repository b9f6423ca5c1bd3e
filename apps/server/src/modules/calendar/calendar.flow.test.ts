// Calendar connections end to end through the real app: the allauth provider endpoints, the OAuth
// dance against a real (local) authorization server, token refresh and its failures, the events API
// and the assistant's calendar_events tool.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ZCalendarDay, ZProviderAccountsResponse } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CalendarHost,
  type FakeCalendarProviders,
  registerDaybook,
  startCalendarHost,
  startFakeCalendarProviders,
} from '../../../../../tests/helpers/fake-calendar.ts';
import type { FakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { systemClock } from '../../lib/clock.ts';
import { createSafeFetch } from '../../lib/safe-fetch.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { connectIcs, signedInUser } from '../../test/factories.ts';
import { type Browser, TEST_SECRET, type TestApp, waitFor } from '../../test/test-app.ts';
import { type ChatApp, connect as openChat, startChatApp } from '../chat/chat.test-client.ts';
import { createCalendarRepo } from './calendar.repo.ts';
import { createCalendarService } from './calendar.service.ts';
import { createIcsReader } from './ics-reader.ts';

const API = '/_allauth/browser/v1';
const PUBLIC = 'http://daybook.test';
const today = new Date().toISOString().slice(0, 10);
/** How long a held request may take to reach the fake provider. */
const SOON = { timeoutMs: 5000, intervalMs: 10 };

let providers: FakeCalendarProviders;
let openai: FakeOpenAI;
let chatApp: ChatApp;
let t: TestApp;
let icsHost: CalendarHost;
let icsUrl: string;

const ICS = `BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Test//EN\r
X-WR-CALNAME:Family\r
BEGIN:VEVENT\r
UID:family-1\r
DTSTAMP:20260101T000000Z\r
DTSTART:${today.replaceAll('-', '')}T170000Z\r
DTEND:${today.replaceAll('-', '')}T180000Z\r
SUMMARY:Swimming lesson\r
END:VEVENT\r
END:VCALENDAR\r
`;

beforeAll(async () => {
  providers = await startFakeCalendarProviders();
  const enabled = registerDaybook(providers, PUBLIC);
  icsHost = await startCalendarHost({
    '/family.ics': ICS,
    // Exchange's spaced BYDAY is read as meant; an unreadable rule leaves its event out, said so.
    '/exchange.ics': ICS.replace('X-WR-CALNAME:Family', 'X-WR-CALNAME:Office')
      .replace('SUMMARY:Swimming lesson', 'RRULE:FREQ=DAILY;BYDAY=MO, TU, WE, TH, FR, SA, SU\r\nSUMMARY:Daily standup')
      .replace(
        'END:VCALENDAR',
        'BEGIN:VEVENT\r\nUID:odd-1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T090000Z\r\nRRULE:FREQ=DAILY;BYDAY=XX\r\nSUMMARY:Odd\r\nEND:VEVENT\r\nEND:VCALENDAR',
      ),
  });
  icsUrl = icsHost.url('/family.ics');
  // The real app with the fake model, listening for the chat's socket.
  chatApp = await startChatApp(
    {
      ...enabled,
      FETCH_ALLOW: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    },
    // Every read goes to the provider, so refreshes and failures show at once.
    { calendar: { endpoints: providers.endpoints, cacheMs: 0 } },
  );
  t = chatApp.t;
  openai = chatApp.fake;
});

afterAll(async () => {
  await chatApp?.close();
  await providers?.close();
  await icsHost?.close();
});

/** The form post a connect button makes; answers the consent page's address. */
async function startConnect(browser: Browser, provider: string, callback = '/accounts/3rdparty/') {
  const res = await browser.request(
    'POST',
    `${API}/auth/provider/redirect`,
    new URLSearchParams({
      provider,
      process: 'connect',
      callback_url: callback,
      csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '',
    }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded' },
  );
  expect(res.statusCode).toBe(302);
  return String(res.headers.location);
}

/** The provider sent the browser back to Daybook's callback: Daybook's answer. */
async function land(browser: Browser, redirect: string) {
  const url = new URL(redirect);
  expect(url.origin).toBe(PUBLIC);
  const res = await browser.get(url.pathname + url.search);
  expect(res.statusCode).toBe(302);
  return String(res.headers.location);
}

async function connect(browser: Browser, provider: 'google' | 'microsoft') {
  return land(browser, await providers.approve(await startConnect(browser, provider)));
}

/** The connections page's ICS form, posted. */
async function addIcs(browser: Browser) {
  expect(await connectIcs(browser, icsUrl)).toBe(303);
}

async function day(browser: Browser, date = today, tz = 'UTC') {
  const res = await browser.get(`/api/calendar/events/?date=${date}&tz=${encodeURIComponent(tz)}`);
  expect(res.statusCode).toBe(200);
  return ZCalendarDay.parse(res.json());
}

describe('connecting Google', () => {
  it('lists the enabled providers in allauth config, with the read-only scopes and PKCE on the consent address', async () => {
    const { browser } = await signedInUser(t);
    const config = await browser.get(`${API}/config`);
    expect(config.json().data.socialaccount.providers).toEqual([
      { id: 'google', name: 'Google', flows: ['provider_redirect'], client_id: 'google-client' },
      { id: 'microsoft', name: 'Microsoft Outlook', flows: ['provider_redirect'], client_id: 'microsoft-client' },
    ]);
    const consent = new URL(await startConnect(browser, 'google'));
    expect(consent.origin + consent.pathname).toBe(providers.endpoints.google.authorizeUrl);
    expect(consent.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/calendar.readonly');
    expect(consent.searchParams.get('code_challenge_method')).toBe('S256');
    expect(consent.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(consent.searchParams.get('access_type')).toBe('offline');
    expect(consent.searchParams.get('redirect_uri')).toBe(`${PUBLIC}/accounts/google/login/callback/`);
    expect(consent.searchParams.get('state')?.length).toBeGreaterThan(20);
  });

  it('connects, lists the account in allauth shape, reads events, and stores no token in plain text', async () => {
    providers.setAccount('google', { sub: 'g-ana', email: 'ana@gmail.test', name: 'Ana' });
    providers.addGoogleEvents(
      'primary',
      [
        { summary: 'Standup', start: { dateTime: `${today}T09:00:00Z` }, end: { dateTime: `${today}T09:15:00Z` } },
        { summary: 'Holiday', start: { date: today }, end: { date: nextDay(today) } },
        {
          summary: 'Tomorrow',
          start: { dateTime: `${nextDay(today)}T09:00:00Z` },
          end: { dateTime: `${nextDay(today)}T10:00:00Z` },
        },
      ],
      'ana@gmail.test',
    );
    const { browser, userId } = await signedInUser(t);
    expect(await connect(browser, 'google')).toBe('/accounts/3rdparty/?connected=google');

    const accounts = ZProviderAccountsResponse.parse((await browser.get(`${API}/account/providers`)).json());
    expect(accounts.data).toEqual([
      {
        uid: 'ana@gmail.test',
        display: 'ana@gmail.test',
        provider: { id: 'google', name: 'Google', flows: ['provider_redirect'], client_id: 'google-client' },
      },
    ]);

    const events = await day(browser);
    expect(events.problems).toEqual([]);
    expect(events.events.map((e) => [e.title, e.all_day, e.start])).toEqual([
      ['Holiday', true, today],
      ['Standup', false, `${today}T09:00:00+00:00`],
    ]);
    // In Berlin the standup is at 10:00 or 11:00, with the offset shown.
    const berlin = await day(browser, today, 'Europe/Berlin');
    expect(berlin.events.find((e) => e.title === 'Standup')?.start).toMatch(/T1[01]:00:00\+0[12]:00$/);

    const rows = await t.database.db.query<{ secret: string; display: string }>(
      'SELECT secret, display FROM calendar_connections WHERE user_id = $1',
      [userId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.secret).toMatch(/^v1\./);
    const grant = providers.createGrant('google');
    // Tokens look alike (same issuer and shape); none of the fake's token text is in the row.
    expect(rows[0]?.secret).not.toContain(grant.accessToken.slice(0, 12));
    expect(rows[0]?.secret).not.toContain('refresh');
    expect(JSON.stringify((await browser.get('/api/calendar/connections/')).json())).not.toMatch(/secret|token/i);
  });

  it('refuses a forged, a replayed, and another user\u2019s state', async () => {
    providers.setAccount('google', { sub: 'g-gus', email: 'gus@gmail.test', name: 'Gus' });
    const { browser } = await signedInUser(t);
    const back = await providers.approve(await startConnect(browser, 'google'));
    const forged = new URL(back);
    forged.searchParams.set('state', 'not-the-state');
    expect(await land(browser, forged.href)).toBe('/accounts/3rdparty/?error=unknown&error_process=connect');
    // The real state still works once (the forged attempt did not use it up)...
    expect(await land(browser, back)).toBe('/accounts/3rdparty/?connected=google');
    // ...and never twice.
    expect(await land(browser, back)).toBe('/accounts/3rdparty/?error=unknown&error_process=connect');

    // A consent started by one user cannot be finished in another user's session.
    const other = await signedInUser(t);
    const stolen = await providers.approve(await startConnect(browser, 'google'));
    expect(await land(other.browser, stolen)).toBe('/accounts/3rdparty/?error=unknown&error_process=connect');
    // Opened by someone else, it is not used up: its own user still finishes it.
    expect(await land(browser, stolen)).toBe('/accounts/3rdparty/?connected=google');
    expect((await other.browser.get(`${API}/account/providers`)).json().data).toEqual([]);
  });

  it('refuses a consent where the user unticked calendar access, and revokes what was granted', async () => {
    providers.setAccount('google', { sub: 'g-hal', email: 'hal@gmail.test', name: 'Hal' });
    providers.grantOnly('google', []);
    try {
      const { browser } = await signedInUser(t);
      const revokedBefore = providers.revoked.length;
      expect(await connect(browser, 'google')).toBe('/accounts/3rdparty/?error=denied&error_process=connect');
      expect((await browser.get(`${API}/account/providers`)).json().data).toEqual([]);
      expect(providers.revoked.length).toBe(revokedBefore + 1);
    } finally {
      providers.grantOnly('google', null);
    }
  });

  it('says cancelled when the user denies, and refuses process=login', async () => {
    const { browser } = await signedInUser(t);
    const denied = await providers.deny(await startConnect(browser, 'google'));
    expect(await land(browser, denied)).toBe('/accounts/3rdparty/?error=cancelled&error_process=connect');
    const login = await browser.request(
      'POST',
      `${API}/auth/provider/redirect`,
      `provider=google&process=login&callback_url=%2Fauth%2Flogin&csrfmiddlewaretoken=${browser.cookies.get('csrftoken')}`,
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect(login.headers.location).toBe('/auth/login?error=unknown&error_process=login');
  });

  it('answers the consent address from the spec\u2019s JSON connect call, and an unknown provider in allauth shape', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.post(`${API}/socialaccount/providers/connect`, { provider: 'microsoft' });
    expect(res.statusCode).toBe(200);
    expect(new URL(res.json().data.url).pathname).toBe(new URL(providers.endpoints.microsoft.authorizeUrl).pathname);
    const unknown = await browser.post(`${API}/socialaccount/providers/connect`, { provider: 'dropbox' });
    expect(unknown.json()).toEqual({
      status: 400,
      errors: [{ code: 'unknown_provider', message: 'Unknown provider.', param: 'provider' }],
    });
  });
});

describe('tokens', () => {
  it('refreshes an expiring token once however many reads wait on it, and stores the rotated refresh token', async () => {
    providers.setAccount('microsoft', { sub: 'm-bo', email: 'bo@outlook.test', name: 'Bo' });
    providers.addMicrosoftEvents(
      [
        {
          subject: 'Dentist',
          start: { dateTime: `${today}T14:00:00`, timeZone: 'UTC' },
          end: { dateTime: `${today}T15:00:00`, timeZone: 'UTC' },
          location: 'Main St 1',
        },
      ],
      'bo@outlook.test',
    );
    // A token that expires within Daybook's refresh margin: the first reads need a fresh one.
    providers.setAccessTokenTtl(60, 'microsoft');
    const { browser } = await signedInUser(t);
    expect(await connect(browser, 'microsoft')).toBe('/accounts/3rdparty/?connected=microsoft');
    providers.setAccessTokenTtl(3599, 'microsoft');
    const refreshes = () => providers.tokenRequests.filter((r) => r.grantType === 'refresh_token');
    const before = refreshes().length;

    // Reads that all find the token expiring, while the refresh is held at the provider.
    const release = providers.holdTokenRequests();
    const reads = Promise.all([day(browser), day(browser), day(browser), day(browser)]);
    await waitFor('a refresh to reach the provider', () => refreshes().length > before, SOON);
    release();
    for (const result of await reads) {
      expect(result.problems).toEqual([]);
      expect(result.events.map((e) => [e.title, e.location])).toEqual([['Dentist', 'Main St 1']]);
    }
    expect(refreshes().length - before).toBe(1);
    expect(providers.peakConcurrentTokenRequests).toBe(1);

    // Microsoft rotates refresh tokens: a refresh works only with the one stored by the last one.
    // The API refusing the token (as after a revocation it recovers from) makes Daybook refresh.
    for (let i = 0; i < 2; i++) {
      providers.failNextApiRequests('microsoft', 1, 401);
      expect((await day(browser)).problems).toEqual([]);
    }
    expect(refreshes().length - before).toBe(3);
    expect(refreshes().every((r) => r.status === 200)).toBe(true);
  });

  it('refreshes once when two processes on one database read an expiring token at once', async () => {
    providers.setAccount('microsoft', { sub: 'm-ivy', email: 'ivy@outlook.test', name: 'Ivy' });
    providers.setAccessTokenTtl(60, 'microsoft');
    const { browser, userId } = await signedInUser(t);
    expect(await connect(browser, 'microsoft')).toBe('/accounts/3rdparty/?connected=microsoft');
    providers.setAccessTokenTtl(3599, 'microsoft');
    // A second process: its own service (own memory) on the same database and SECRET_KEY.
    const other = createCalendarService({
      repo: createCalendarRepo(t.app.db.prisma, t.app.db.query),
      box: createSecretBox([TEST_SECRET], 'calendar connections'),
      clock: systemClock,
      log: t.app.log,
      publicUrl: PUBLIC,
      clients: t.config.calendar,
      endpoints: providers.endpoints,
      cacheMs: 0,
      safeFetch: createSafeFetch(t.config.fetch),
      icsReader: createIcsReader(),
    });
    const refreshes = () => providers.tokenRequests.filter((r) => r.grantType === 'refresh_token').length;
    const before = refreshes();
    const release = providers.holdTokenRequests();
    const reads = Promise.all([
      t.app.calendar.eventsForDay(userId, today, 'UTC'),
      other.eventsForDay(userId, today, 'UTC'),
    ]);
    await waitFor('a refresh to reach the provider', () => refreshes() > before, SOON);
    release();
    for (const result of await reads) expect(result.problems).toEqual([]);
    expect(refreshes() - before).toBe(1);
  });

  it('marks a connection whose access was withdrawn as needing reconnecting, and still answers the others', async () => {
    providers.setAccount('microsoft', { sub: 'm-cy', email: 'cy@outlook.test', name: 'Cy' });
    const { browser } = await signedInUser(t);
    await connect(browser, 'microsoft');
    await addIcs(browser);
    providers.setAccessTokenTtl(60, 'microsoft');
    providers.revokeAllGrants('microsoft');

    const result = await day(browser);
    expect(result.events.map((e) => [e.title, e.calendar])).toEqual([['Swimming lesson', 'Family']]);
    expect(result.problems).toEqual([
      expect.objectContaining({ provider: 'microsoft', calendar: 'cy@outlook.test', status: 'needs_reconnect' }),
    ]);
    const connections = (await browser.get('/api/calendar/connections/')).json();
    expect(connections.find((c: { provider: string }) => c.provider === 'microsoft').status).toBe('needs_reconnect');
    // No more token requests for it: it waits for the user to reconnect.
    const count = providers.tokenRequests.length;
    await day(browser);
    expect(providers.tokenRequests.length).toBe(count);
    // The page says so.
    expect((await browser.get('/accounts/3rdparty/')).body).toContain('Needs reconnecting');
    providers.setAccessTokenTtl(3599, 'microsoft');
  });

  it('reports a provider that is down without failing the day', async () => {
    providers.setAccount('google', { sub: 'g-di', email: 'di@gmail.test', name: 'Di' });
    const { browser } = await signedInUser(t);
    await connect(browser, 'google');
    providers.failNextApiRequests('google', 1, 503);
    const result = await day(browser);
    expect(result.events).toEqual([]);
    expect(result.problems).toEqual([
      expect.objectContaining({
        provider: 'google',
        status: 'unavailable',
        message: 'Daybook could not read this calendar just now.',
      }),
    ]);
  });
});

describe('disconnecting', () => {
  it('revokes the grant at Google and deletes the row; another user\u2019s account is unknown', async () => {
    providers.setAccount('google', { sub: 'g-ed', email: 'ed@gmail.test', name: 'Ed' });
    const { browser, userId } = await signedInUser(t);
    expect(await connect(browser, 'google')).toBe('/accounts/3rdparty/?connected=google');
    const other = await signedInUser(t);
    const theirs = await other.browser.delete(`${API}/account/providers`, {
      provider: 'google',
      account: 'ed@gmail.test',
    });
    expect(theirs.json()).toEqual({
      status: 400,
      errors: [{ code: 'account_not_found', message: 'Unknown account.' }],
    });

    // Another Daybook user connecting the same Google account is refused, and the grant they made is given back.
    const revokedByOther = providers.revoked.length;
    expect(await connect(other.browser, 'google')).toBe(
      '/accounts/3rdparty/?error=connected_other&error_process=connect',
    );
    expect(providers.revoked.length).toBe(revokedByOther + 1);

    const revokedBefore = providers.revoked.length;
    const res = await browser.delete(`${API}/account/providers`, { provider: 'google', account: 'ed@gmail.test' });
    expect(res.json()).toEqual({ status: 200, data: [] });
    expect(providers.revoked.slice(revokedBefore)).toEqual([
      expect.objectContaining({ provider: 'google', tokenType: 'refresh_token', sub: 'g-ed' }),
    ]);
    const rows = await t.database.db.query('SELECT id FROM calendar_connections WHERE user_id = $1', [userId]);
    expect(rows).toEqual([]);
  });

  it('adds one ICS calendar at a time per user', async () => {
    const { browser } = await signedInUser(t);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let received = 0;
    const slow = createServer(async (_req, res) => {
      received++;
      await held;
      res.writeHead(200, { 'content-type': 'text/calendar' }).end(ICS);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const form = (url: string) =>
      browser.request(
        'POST',
        '/accounts/3rdparty/ics/',
        new URLSearchParams({ url, csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '' }).toString(),
        { 'content-type': 'application/x-www-form-urlencoded' },
      );
    try {
      const first = form(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow.ics`);
      // While the first address is being read, a second add is turned away with a reason.
      await waitFor('the first address to be read', () => received === 1, SOON);
      const second = await form(icsUrl);
      expect(second.statusCode).toBe(400);
      expect(second.body).toContain('Another calendar of yours is being added.');
      release();
      expect((await first).statusCode).toBe(303);
      expect((await form(icsUrl)).statusCode).toBe(303);
    } finally {
      release();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('disconnects by the spec\u2019s POST /account/providers/disconnect with only the account', async () => {
    const { browser } = await signedInUser(t);
    await addIcs(browser);
    const [account] = (await browser.get(`${API}/account/providers`)).json().data;
    expect(account).toMatchObject({ display: 'Family', provider: { id: 'ics', name: 'ICS calendar', flows: [] } });
    // The uid names nothing of the address.
    expect(account.uid).not.toContain('127.0.0.1');
    const res = await browser.post(`${API}/account/providers/disconnect`, { account: account.uid });
    expect(res.json()).toEqual({ status: 200, data: [] });
  });
});

describe('events API', () => {
  it('validates the date and the zone, and needs a signed-in user', async () => {
    const { browser } = await signedInUser(t);
    for (const query of [
      '',
      '?date=2026-02-30',
      '?date=tomorrow',
      '?date=9999-12-31',
      '?date=1969-12-31',
      `?date=${today}&tz=Mars/Olympus`,
    ]) {
      const res = await browser.get(`/api/calendar/events/${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('validation_error');
    }
    const anonymous = await t.app.inject({ url: `/api/calendar/events/?date=${today}` });
    expect(anonymous.statusCode).toBe(401);
    const empty = await day(browser);
    expect(empty).toEqual({ date: today, time_zone: 'UTC', events: [], problems: [] });
    // However the zone is spelled, the answer names it one way.
    expect((await day(browser, today, 'europe/BERLIN')).time_zone).toBe('Europe/Berlin');
  });

  it('a calendar with an event it cannot read: the rest arrives, and the day says what is left out', async () => {
    const { browser } = await signedInUser(t);
    expect(await connectIcs(browser, icsHost.url('/exchange.ics'))).toBe(303);
    const read = await day(browser);
    expect(read.events.map((e) => [e.title, e.calendar])).toEqual([['Daily standup', 'Office']]);
    expect(read.problems).toEqual([
      expect.objectContaining({
        calendar: 'Office',
        status: 'partial',
        message: '1 event has a repeat rule Daybook cannot read, so it is left out.',
      }),
    ]);
  });

  it("reads the day in the user's own zone, with only the user's own calendars", async () => {
    const { browser, userId } = await signedInUser(t);
    await addIcs(browser);
    const other = await signedInUser(t);
    expect(await day(other.browser)).toEqual({ date: today, time_zone: 'UTC', events: [], problems: [] });
    await t.database.db.query('UPDATE users SET time_zone = $1 WHERE id = $2', ['america/new_york', userId]);
    const res = await browser.get(`/api/calendar/events/?date=${today}`);
    expect(res.statusCode).toBe(200);
    const own = ZCalendarDay.parse(res.json());
    expect(own.time_zone).toBe('America/New_York');
    expect(own.events.map((e) => [e.title, e.calendar])).toEqual([['Swimming lesson', 'Family']]);
    expect(own.problems).toEqual([]);
    // A zone in the query wins over the stored one (17:00 UTC is the next day in Tokyo).
    expect(await day(browser, today, 'Asia/Tokyo')).toEqual({
      date: today,
      time_zone: 'Asia/Tokyo',
      events: [],
      problems: [],
    });
  });
});

describe('the assistant', () => {
  it('answers from the calendar through the calendar_events tool', async () => {
    providers.setAccount('google', { sub: 'g-fi', email: 'fi@gmail.test', name: 'Fi' });
    providers.addGoogleEvents(
      'primary',
      [
        {
          summary: 'Piano recital',
          start: { dateTime: `${today}T18:00:00Z` },
          end: { dateTime: `${today}T19:00:00Z` },
        },
      ],
      'fi@gmail.test',
    );
    const { browser } = await signedInUser(t);
    await connect(browser, 'google');
    openai.onChat((req) => {
      const tool = req.messages.find((m) => m.role === 'tool');
      if (!tool) return { text: '', toolCalls: [{ name: 'calendar_events', arguments: '{}' }] };
      const read = JSON.parse(tool.content) as { events: Array<{ title: string }> };
      return { text: `Today you have: ${read.events.map((e) => e.title).join(', ')}.` };
    });
    const chat = await openChat(chatApp.wsBase, browser);
    try {
      chat.say("What's on my calendar today?");
      const answer = await chat.next((m) => m.message_type === 'markdown', 15_000);
      expect(answer).toMatchObject({ author_type: 'assistant', raw_text: 'Today you have: Piano recital.' });
    } finally {
      chat.ws.close();
    }
    const requests = openai.requests.filter((r) => r.stream);
    const withTool = requests.at(-1);
    expect(withTool?.messages.at(-2)).toMatchObject({ role: 'assistant' });
    expect(requests.at(-2)?.tools?.map((x) => x.function.name)).toContain('calendar_events');
  });
});

function nextDay(date: string) {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}
