import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeCalendarProviders,
  type FakeProviderId,
  startFakeCalendarProviders,
} from '../../../../../../tests/helpers/fake-calendar.ts';
import { type CalendarApi, type DayWindow, ProviderApiError, type SourceEvent } from '../calendar.types.ts';
import { createGoogleCalendarApi } from './google.ts';
import { createMicrosoftCalendarApi } from './microsoft.ts';

let fake: FakeCalendarProviders;
let seq = 0;

beforeAll(async () => {
  fake = await startFakeCalendarProviders();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  fake.setPageSize(null);
});

// 24 November 2026 in Berlin (UTC+1) and in Los Angeles (UTC-8).
const BERLIN: DayWindow = {
  date: '2026-11-24',
  timeZone: 'Europe/Berlin',
  start: new Date('2026-11-23T23:00:00Z'),
  end: new Date('2026-11-24T23:00:00Z'),
};
const LOS_ANGELES: DayWindow = {
  date: '2026-11-24',
  timeZone: 'America/Los_Angeles',
  start: new Date('2026-11-24T08:00:00Z'),
  end: new Date('2026-11-25T08:00:00Z'),
};

/** A fresh account signed in at `provider`, so each test has its own calendars, and a token for it. */
function signIn(provider: FakeProviderId, scopes?: string[], email?: string) {
  const n = ++seq;
  const account = { sub: `sub-${provider}-${n}`, email: email ?? `person${n}@example.com`, name: `Person ${n}` };
  fake.setAccount(provider, account);
  return { account, ...fake.createGrant(provider, scopes ? { scopes } : {}) };
}

const google = (fetchImpl?: typeof fetch) =>
  createGoogleCalendarApi({ apiUrl: fake.endpoints.google.apiUrl, timeoutMs: 5000, fetch: fetchImpl });
const microsoft = (fetchImpl?: typeof fetch) =>
  createMicrosoftCalendarApi({ apiUrl: fake.endpoints.microsoft.apiUrl, timeoutMs: 5000, fetch: fetchImpl });

/** The rejection of `promise`, which must be a ProviderApiError. */
async function refusal(promise: Promise<unknown>): Promise<ProviderApiError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderApiError);
  return err as ProviderApiError;
}

const titles = (events: SourceEvent[]) => events.map((e) => e.title).sort();
const byTitle = (events: SourceEvent[], title: string) => {
  const event = events.find((e) => e.title === title);
  if (!event) throw new Error(`no event titled ${title} in ${titles(events).join(', ')}`);
  return event;
};
const apiPaths = (provider: FakeProviderId, from: number, part: string) =>
  fake.apiRequests.slice(from).filter((r) => r.provider === provider && r.url.includes(part));

describe('Google Calendar', () => {
  it('names the account by its primary calendar, which is its address', async () => {
    const { account, accessToken } = signIn('google');
    expect(await google().account(accessToken)).toEqual({ uid: account.email, display: account.email });
  });

  it('reads every page of the primary and the shown calendars, and not the hidden ones', async () => {
    const { accessToken } = signIn('google');
    fake.addGoogleCalendar({ id: 'team@group.calendar.google.com', summary: 'Team', selected: true });
    fake.addGoogleCalendar({ id: 'holidays@group.v.calendar.google.com', summary: 'Holidays' });
    const at = (hour: number) => ({
      start: { dateTime: `2026-11-24T${String(hour).padStart(2, '0')}:00:00+01:00` },
      end: { dateTime: `2026-11-24T${String(hour).padStart(2, '0')}:30:00+01:00` },
    });
    fake.addGoogleEvents(
      'primary',
      [8, 9, 10, 11, 12].map((h) => ({ summary: `Mine ${h}`, ...at(h) })),
    );
    fake.addGoogleEvents(
      'team@group.calendar.google.com',
      [13, 14, 15].map((h) => ({ summary: `Team ${h}`, ...at(h) })),
    );
    fake.addGoogleEvents('holidays@group.v.calendar.google.com', [{ summary: 'Not shown', ...at(16) }]);
    fake.setPageSize(2);
    const before = fake.apiRequests.length;

    const events = await google().events(accessToken, BERLIN);

    expect(titles(events)).toEqual(
      ['Mine 8', 'Mine 9', 'Mine 10', 'Mine 11', 'Mine 12', 'Team 13', 'Team 14', 'Team 15'].sort(),
    );
    expect(byTitle(events, 'Mine 8')).toMatchObject({
      allDay: false,
      start: new Date('2026-11-24T07:00:00Z'),
      end: new Date('2026-11-24T07:30:00Z'),
    });
    // Three pages of the primary calendar, two of the team's; none of the hidden one.
    expect(apiPaths('google', before, '/events?')).toHaveLength(5);
    expect(apiPaths('google', before, 'holidays')).toHaveLength(0);
    const query = new URL(apiPaths('google', before, '/events?')[0]?.url ?? '', fake.url).searchParams;
    expect(Object.fromEntries(query)).toMatchObject({
      singleEvents: 'true',
      orderBy: 'startTime',
      timeMin: '2026-11-23T23:00:00.000Z',
      timeMax: '2026-11-24T23:00:00.000Z',
      timeZone: 'Europe/Berlin',
    });
  });

  it('gives all-day events as dates and timed events in other zones as instants, only within the day', async () => {
    const { accessToken } = signIn('google');
    fake.addGoogleEvents('primary', [
      { summary: 'Holiday', start: { date: '2026-11-24' }, end: { date: '2026-11-25' } },
      { summary: 'Trip', start: { date: '2026-11-22' }, end: { date: '2026-11-26' } },
      {
        summary: 'Call with Tokyo',
        location: '  Room 4  ',
        start: { dateTime: '2026-11-25T02:00:00', timeZone: 'Asia/Tokyo' },
        end: { dateTime: '2026-11-25T03:00:00', timeZone: 'Asia/Tokyo' },
      },
      {
        summary: 'Late in New York',
        start: { dateTime: '2026-11-24T23:30:00-05:00' },
        end: { dateTime: '2026-11-25T00:30:00-05:00' },
      },
      { summary: 'Yesterday', start: { date: '2026-11-23' }, end: { date: '2026-11-24' } },
      {
        summary: 'Ended at midnight',
        start: { dateTime: '2026-11-23T22:00:00Z' },
        end: { dateTime: '2026-11-23T23:00:00Z' },
      },
    ]);

    const events = await google().events(accessToken, BERLIN);

    expect(titles(events)).toEqual(['Call with Tokyo', 'Holiday', 'Trip']);
    expect(byTitle(events, 'Holiday')).toMatchObject({ allDay: true, startDate: '2026-11-24', endDate: '2026-11-25' });
    expect(byTitle(events, 'Trip')).toMatchObject({ allDay: true, startDate: '2026-11-22', endDate: '2026-11-26' });
    expect(byTitle(events, 'Call with Tokyo')).toMatchObject({
      allDay: false,
      start: new Date('2026-11-24T17:00:00Z'),
      end: new Date('2026-11-24T18:00:00Z'),
      location: 'Room 4',
    });
    // The same calendar seen from Los Angeles: the New York evening is on the 24th there.
    expect(titles(await google().events(accessToken, LOS_ANGELES))).toEqual([
      'Call with Tokyo',
      'Holiday',
      'Late in New York',
      'Trip',
    ]);
  });

  it('skips cancelled events even when the API lists them, and keeps only web links', async () => {
    const { accessToken } = signIn('google');
    const day = { start: { dateTime: '2026-11-24T10:00:00Z' }, end: { dateTime: '2026-11-24T11:00:00Z' } };
    fake.addGoogleEvents('primary', [
      { id: 'kept', summary: 'Kept', htmlLink: 'https://calendar.google.com/event?eid=kept', ...day },
      { id: 'gone', summary: 'Cancelled', status: 'cancelled', ...day },
      { id: 'odd', summary: 'Odd link', htmlLink: 'javascript:alert(1)', ...day },
      { id: 'untitled', ...day },
    ]);
    // showDeleted makes the API list cancelled events too, as incremental reads do.
    const withDeleted: typeof fetch = (input, init) => {
      const url = new URL(String(input));
      if (url.pathname.endsWith('/events')) url.searchParams.set('showDeleted', 'true');
      return fetch(url, init);
    };

    const events = await google(withDeleted).events(accessToken, BERLIN);

    expect(events.map((e) => e.id).sort()).toEqual(['kept', 'odd', 'untitled']);
    expect(byTitle(events, 'Kept').url).toBe('https://calendar.google.com/event?eid=kept');
    expect(byTitle(events, 'Odd link').url).toBeNull();
    expect(byTitle(events, '(No title)').location).toBeNull();
  });

  it('shows a meeting on two of the calendars once', async () => {
    const { accessToken } = signIn('google');
    fake.addGoogleCalendar({ id: 'shared@group.calendar.google.com', summary: 'Shared', selected: true });
    const meeting = {
      id: 'standup20261124',
      summary: 'Stand-up',
      start: { dateTime: '2026-11-24T09:00:00Z' },
      end: { dateTime: '2026-11-24T09:15:00Z' },
    };
    fake.addGoogleEvents('primary', [meeting]);
    fake.addGoogleEvents('shared@group.calendar.google.com', [meeting]);

    expect(titles(await google().events(accessToken, BERLIN))).toEqual(['Stand-up']);
  });

  it('reads at most ten calendars, the primary one among them', async () => {
    const { accessToken } = signIn('google');
    for (let i = 1; i <= 12; i++) {
      const id = `c${i}@group.calendar.google.com`;
      fake.addGoogleCalendar({ id, summary: `Calendar ${i}`, selected: true });
      fake.addGoogleEvents(id, [
        { summary: `In ${i}`, start: { dateTime: '2026-11-24T09:00:00Z' }, end: { dateTime: '2026-11-24T10:00:00Z' } },
      ]);
    }
    fake.addGoogleEvents('primary', [
      { summary: 'Primary', start: { dateTime: '2026-11-24T09:00:00Z' }, end: { dateTime: '2026-11-24T10:00:00Z' } },
    ]);

    const events = await google().events(accessToken, BERLIN);

    expect(events).toHaveLength(10);
    expect(titles(events)).toContain('Primary');
  });

  it('calls a refused token unauthorized', async () => {
    signIn('google');
    const err = await refusal(google().events('ya29.not-a-token', BERLIN));
    expect(err.kind).toBe('unauthorized');
    expect(err.status).toBe(401);

    const { accessToken } = signIn('google');
    fake.revokeAllGrants('google');
    expect((await refusal(google().account(accessToken))).kind).toBe('unauthorized');
  });

  it('calls a server error, a missing scope and a non-JSON answer unavailable, naming no token or address', async () => {
    const { account, accessToken } = signIn('google');
    fake.failNextApiRequests('google', 1, 500);
    const err = await refusal(google().events(accessToken, BERLIN));
    expect(err).toMatchObject({ kind: 'unavailable', status: 500, message: 'Google Calendar is unavailable (500).' });

    const narrow = signIn('google', ['https://www.googleapis.com/auth/calendar.events.readonly']);
    expect(await refusal(google().events(narrow.accessToken, BERLIN))).toMatchObject({
      kind: 'unavailable',
      status: 403,
    });

    const notJson: typeof fetch = async () => new Response('<html>oops</html>', { status: 200 });
    const garbled = await refusal(google(notJson).account(accessToken));
    expect(garbled.kind).toBe('unavailable');
    for (const e of [err, garbled]) {
      expect(e.message).not.toContain(accessToken);
      expect(e.message).not.toContain(account.email);
    }
  });
});

describe('Microsoft Graph', () => {
  it('names the account by the default calendar owner, without GET /me', async () => {
    const { accessToken } = signIn('microsoft', undefined, 'Sam.Lee@Contoso.com');
    const before = fake.apiRequests.length;
    expect(await microsoft().account(accessToken)).toEqual({
      uid: 'sam.lee@contoso.com',
      display: 'Sam.Lee@Contoso.com',
    });
    expect(fake.apiRequests.slice(before).map((r) => new URL(r.url, fake.url).pathname)).toEqual([
      '/microsoft/v1.0/me/calendar',
    ]);
  });

  it('follows every nextLink page, asking for UTC each time', async () => {
    const { accessToken } = signIn('microsoft');
    fake.addMicrosoftEvents(
      [8, 9, 10, 11, 12].map((h) => ({
        subject: `Meeting ${h}`,
        start: { dateTime: `2026-11-24T${String(h).padStart(2, '0')}:00:00`, timeZone: 'W. Europe Standard Time' },
        end: { dateTime: `2026-11-24T${String(h).padStart(2, '0')}:45:00`, timeZone: 'W. Europe Standard Time' },
      })),
    );
    fake.setPageSize(2);
    const before = fake.apiRequests.length;

    const events = await microsoft().events(accessToken, BERLIN);

    expect(titles(events)).toEqual(['Meeting 10', 'Meeting 11', 'Meeting 12', 'Meeting 8', 'Meeting 9']);
    expect(byTitle(events, 'Meeting 8')).toMatchObject({
      allDay: false,
      start: new Date('2026-11-24T07:00:00Z'),
      end: new Date('2026-11-24T07:45:00Z'),
    });
    const pages = apiPaths('microsoft', before, '/me/calendarView');
    expect(pages).toHaveLength(3);
    for (const page of pages) expect(page.prefer).toBe('outlook.timezone="UTC"');
  });

  it('gives all-day events as dates whatever zone they were made in, and skips cancelled ones', async () => {
    const { accessToken } = signIn('microsoft');
    fake.addMicrosoftEvents([
      {
        subject: 'Thanksgiving',
        isAllDay: true,
        start: { dateTime: '2026-11-26T00:00:00', timeZone: 'Pacific Standard Time' },
        end: { dateTime: '2026-11-27T00:00:00', timeZone: 'Pacific Standard Time' },
      },
      {
        subject: 'Conference',
        isAllDay: true,
        location: 'Lisbon',
        start: { dateTime: '2026-11-25T00:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-11-28T00:00:00', timeZone: 'UTC' },
      },
      {
        subject: 'Tokyo sync',
        start: { dateTime: '2026-11-27T09:00:00', timeZone: 'Asia/Tokyo' },
        end: { dateTime: '2026-11-27T10:00:00', timeZone: 'Asia/Tokyo' },
      },
      {
        subject: 'Called off',
        isCancelled: true,
        start: { dateTime: '2026-11-26T10:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-11-26T11:00:00', timeZone: 'UTC' },
      },
    ]);
    const window: DayWindow = {
      date: '2026-11-26',
      timeZone: 'America/Los_Angeles',
      start: new Date('2026-11-26T08:00:00Z'),
      end: new Date('2026-11-27T08:00:00Z'),
    };

    const events = await microsoft().events(accessToken, window);

    expect(titles(events)).toEqual(['Conference', 'Thanksgiving', 'Tokyo sync']);
    expect(byTitle(events, 'Thanksgiving')).toMatchObject({
      allDay: true,
      startDate: '2026-11-26',
      endDate: '2026-11-27',
    });
    expect(byTitle(events, 'Conference')).toMatchObject({
      allDay: true,
      startDate: '2026-11-25',
      endDate: '2026-11-28',
      location: 'Lisbon',
    });
    expect(byTitle(events, 'Tokyo sync')).toMatchObject({
      start: new Date('2026-11-27T00:00:00Z'),
      end: new Date('2026-11-27T01:00:00Z'),
    });
    expect(byTitle(events, 'Tokyo sync').url).toMatch(/^https:\/\/outlook\.live\.com\//);
  });

  it('does not follow a nextLink to another host, which would carry the token there', async () => {
    const { accessToken } = signIn('microsoft');
    fake.addMicrosoftEvents(
      [1, 2, 3].map((i) => ({
        subject: `Event ${i}`,
        start: { dateTime: `2026-11-24T1${i}:00:00`, timeZone: 'UTC' },
        end: { dateTime: `2026-11-24T1${i}:30:00`, timeZone: 'UTC' },
      })),
    );
    fake.setPageSize(1);
    const requested: string[] = [];
    // Rewrites the nextLink's origin, as a compromised or misbehaving endpoint could.
    const elsewhere: typeof fetch = async (input, init) => {
      requested.push(new URL(String(input)).origin);
      const res = await fetch(input, init);
      const body = (await res.json()) as Record<string, unknown>;
      const next = body['@odata.nextLink'];
      if (typeof next === 'string') body['@odata.nextLink'] = next.replace(fake.url, 'http://graph.example.net');
      return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
    };

    const err = await refusal(microsoft(elsewhere).events(accessToken, BERLIN));

    expect(err.kind).toBe('unavailable');
    expect(requested).toEqual([fake.url]);
  });

  it('calls a refused token unauthorized and a server error unavailable', async () => {
    const { accessToken } = signIn('microsoft');
    const err = await refusal(microsoft().events('eyJ0eXAiOiJKV1QifQ.e30.x', BERLIN));
    expect(err).toMatchObject({ kind: 'unauthorized', status: 401 });

    fake.failNextApiRequests('microsoft', 1, 500);
    expect(await refusal(microsoft().events(accessToken, BERLIN))).toMatchObject({
      kind: 'unavailable',
      status: 500,
      message: 'Microsoft Outlook is unavailable (500).',
    });
    fake.failNextApiRequests('microsoft', 1, 429);
    expect(await refusal(microsoft().account(accessToken))).toMatchObject({ kind: 'unavailable', status: 429 });
  });
});

describe('both clients', () => {
  let silent: Server;
  let silentUrl: string;
  beforeAll(async () => {
    // Accepts requests and never answers them.
    silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });

  const clients: [string, (apiUrl: string, timeoutMs: number) => CalendarApi][] = [
    ['Google Calendar', (apiUrl, timeoutMs) => createGoogleCalendarApi({ apiUrl, timeoutMs })],
    ['Microsoft Outlook', (apiUrl, timeoutMs) => createMicrosoftCalendarApi({ apiUrl, timeoutMs })],
  ];

  it.each(clients)('%s: a provider that does not answer in time is unavailable', async (label, create) => {
    const err = await refusal(create(silentUrl, 200).events('token', BERLIN));
    expect(err).toMatchObject({ kind: 'unavailable', message: `${label} did not answer within 200 ms.` });
  });

  it.each(clients)('%s: one that cannot be reached is unavailable', async (label, create) => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const err = await refusal(create(url, 5000).account('token'));
    expect(err).toMatchObject({ kind: 'unavailable', message: `Could not reach ${label} (ECONNREFUSED).` });
  });

  it.each(clients)('%s: the caller cancelling is passed on, not reported as a failure', async (_label, create) => {
    const controller = new AbortController();
    const reason = new Error('the page was closed');
    const pending = create(silentUrl, 5000).events('token', BERLIN, controller.signal);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});
