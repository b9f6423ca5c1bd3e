import path from 'node:path';
import { ZCalendarDay } from '@daybook/contracts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CalendarHost,
  type FakeCalendarProviders,
  startCalendarHost,
  startFakeCalendarProviders,
} from '../helpers/fake-calendar.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectPage } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

const PAGE = '/accounts/3rdparty/';
const EMAIL = 'noor.haddad@example.com';
const PASSWORD = 'a calendar full of good days';
const GOOGLE = { clientId: 'daybook-e2e.apps.googleusercontent.com', clientSecret: 'GOCSPX-e2e-secret' };
const GOOGLE_ACCOUNT = 'alex.rivera@gmail.com';
/** The ICS calendar's own name (X-WR-CALNAME), used when the form's name is left empty. */
const ICS_NAME = 'Climbing Club';

// Today in UTC, the zone the events API is asked for; the day is fixed once, so a run across
// midnight still asks for the day it seeded.
const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const compact = (date: string) => date.replaceAll('-', '');

let fake: FakeCalendarProviders;
let icsHost: CalendarHost;
let app: RunningApp;
let browser: Browser;
let page: Page;
let signupLink = '';

/** An ICS host: /club.ics holds an evening session today and one tomorrow. */
async function startIcsHost() {
  const body = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Daybook e2e//EN',
    `X-WR-CALNAME:${ICS_NAME}`,
    'BEGIN:VEVENT',
    'UID:bouldering-today@daybook.test',
    'DTSTAMP:20260101T000000Z',
    `DTSTART:${compact(today)}T180000Z`,
    `DTEND:${compact(today)}T200000Z`,
    'SUMMARY:Bouldering session',
    'LOCATION:North Wall Gym',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:bouldering-tomorrow@daybook.test',
    'DTSTAMP:20260101T000000Z',
    `DTSTART:${compact(tomorrow)}T180000Z`,
    `DTEND:${compact(tomorrow)}T200000Z`,
    'SUMMARY:Route setting',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
  return startCalendarHost({ '/club.ics': body });
}

beforeAll(async () => {
  [fake, icsHost] = await Promise.all([startFakeCalendarProviders(), startIcsHost()]);
  fake.addGoogleEvents('primary', [
    {
      summary: 'Dentist',
      location: 'Harbour Street 4',
      start: { dateTime: `${today}T09:30:00Z` },
      end: { dateTime: `${today}T10:15:00Z` },
    },
    { summary: "Mum's birthday", start: { date: today }, end: { date: tomorrow } },
    {
      summary: 'Flight to Lisbon',
      start: { dateTime: `${tomorrow}T07:00:00Z` },
      end: { dateTime: `${tomorrow}T09:00:00Z` },
    },
  ]);
  [app, browser] = await Promise.all([
    startApp(
      {
        GOOGLE_CLIENT_ID: GOOGLE.clientId,
        GOOGLE_CLIENT_SECRET: GOOGLE.clientSecret,
        E2E_CALENDAR_ENDPOINTS: JSON.stringify({ google: fake.endpoints.google }),
        // The safe fetcher refuses local addresses unless allowed; the ICS host is on 127.0.0.1.
        FETCH_ALLOW: '127.0.0.1',
      },
      (run) => {
        signupLink = createInviteLink(run);
      },
      { entry: path.join(import.meta.dirname, 'calendar-server.ts') },
    ),
    launchBrowser(),
  ]);
  // The redirect URI holds the app's port, known only once it runs; the fake checks it at consent.
  fake.registerClient('google', { ...GOOGLE, redirectUris: [`${app.baseUrl}/accounts/google/login/callback/`] });
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await signUpInBrowser(page, signupLink, EMAIL, PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await Promise.all([fake?.close(), icsHost?.close()]);
});

const noSideScroll = (on: Page) =>
  on.evaluate(() => (document.scrollingElement?.scrollWidth ?? Number.POSITIVE_INFINITY) <= window.innerWidth);

/** Screenshots at 1280 and 360 px, checking the narrow one scrolls only downwards. */
async function screenshotsBothWidths(name: string) {
  await expectAccessible(page, name);
  await screenshot(page, name);
  await page.setViewportSize({ width: 360, height: 780 });
  try {
    await expectAccessible(page, name);
    await screenshot(page, name);
    expect(await noSideScroll(page)).toBe(true);
  } finally {
    await page.setViewportSize({ width: 1280, height: 860 });
  }
}

const connectedList = () => page.getByRole('region', { name: 'Connected calendars' });
const notice = () => page.locator('.banner');

/** The day's events and problems, fetched with the signed-in browser's cookies. */
async function todaysEvents() {
  const res = await page.request.get(`${app.baseUrl}/api/calendar/events/?date=${today}&tz=UTC`);
  expect(res.status()).toBe(200);
  // Parsed with the contract the web app uses, so a response that drifts from it fails here.
  return ZCalendarDay.parse(await res.json());
}

async function connectGoogle(decision: 'Allow' | 'Deny') {
  await page.getByRole('button', { name: 'Connect Google' }).click();
  await page.waitForURL((u) => u.origin === fake.url);
  await page.getByRole('heading', { name: 'Daybook wants to read your calendars' }).waitFor();
  await page.getByRole('button', { name: decision }).click();
  await page.waitForURL((u) => u.origin === app.baseUrl && u.pathname === PAGE);
}

describe('calendar connections', () => {
  it('opens from the account menu, with nothing connected yet', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: /Account menu/ }).click();
    await nav.getByRole('link', { name: 'Calendar Connections' }).click();
    await page.waitForURL((u) => u.pathname === PAGE);
    await page.getByRole('heading', { level: 1, name: 'Calendar Connections' }).waitFor();
    await connectedList().getByText(`No calendars are connected to ${EMAIL}.`).waitFor();
    await expectLocator(notice()).toHaveCount(0);
    await screenshotsBothWidths('calendar-connections-empty');
  });

  it('says the connection was cancelled when the user denies at Google, and connects nothing', async () => {
    await connectGoogle('Deny');
    const alert = page.getByRole('alert');
    // Compared without the markup's line breaks around it.
    await expectLocator(alert).toHaveText('You cancelled the connection.', { trim: true });
    await connectedList().getByText(`No calendars are connected to ${EMAIL}.`).waitFor();
    await expectAccessible(page, 'calendar-connections-denied');
    await screenshot(page, 'calendar-connections-denied');
    const res = await page.request.get(`${app.baseUrl}/api/calendar/connections/`);
    expect(await res.json()).toEqual([]);
  });

  it('connects Google through the consent page, and the API gives today’s Google events', async () => {
    await connectGoogle('Allow');
    await expectPage(page).toHaveURL((u) => u.searchParams.get('connected') === 'google');
    await expectLocator(page.getByRole('status')).toHaveText('Your Google calendar is connected.', { trim: true });
    const item = connectedList().getByRole('listitem').filter({ hasText: GOOGLE_ACCOUNT });
    await expectLocator(item.getByText('Google', { exact: true })).toHaveCount(1);
    await expectLocator(item.getByText('Connected', { exact: true })).toHaveCount(1);

    const day = await todaysEvents();
    expect(day).toMatchObject({ date: today, time_zone: 'UTC', problems: [] });
    // All-day first; tomorrow's flight is not today's.
    expect(day.events.map((e) => [e.title, e.start, e.end, e.all_day, e.calendar])).toEqual([
      ["Mum's birthday", today, tomorrow, true, GOOGLE_ACCOUNT],
      ['Dentist', `${today}T09:30:00+00:00`, `${today}T10:15:00+00:00`, false, GOOGLE_ACCOUNT],
    ]);
    expect(day.events[1]?.location).toBe('Harbour Street 4');
  });

  it('adds an ICS address with the keyboard, listed under the calendar’s own name', async () => {
    const field = page.getByLabel('Calendar address');
    // The page was just loaded (the redirect back from Google): Tab from its top reaches the field.
    for (let i = 0; i < 40 && !(await field.evaluate((el) => el === document.activeElement)); i++) {
      await page.keyboard.press('Tab');
    }
    await expectLocator(field).toBeFocused();
    await page.keyboard.type(icsHost.url('/club.ics'));
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === PAGE && u.searchParams.get('added') === '1');
    await expectLocator(page.getByRole('status')).toHaveText('The calendar was added.', { trim: true });
    const item = connectedList().getByRole('listitem').filter({ hasText: ICS_NAME });
    await expectLocator(item.getByRole('heading', { name: ICS_NAME })).toHaveCount(1);
    await expectLocator(item.getByText('ICS calendar', { exact: true })).toHaveCount(1);
    await expectLocator(item.getByText('Connected', { exact: true })).toHaveCount(1);
    await expectLocator(connectedList().getByRole('listitem')).toHaveCount(2);
    // The secret address is never shown again (the page has both calendars listed by now).
    expect(await page.content()).not.toContain(icsHost.url('/club.ics'));

    const day = await todaysEvents();
    expect(day.problems).toEqual([]);
    expect(day.events.map((e) => [e.title, e.start, e.calendar])).toEqual([
      ["Mum's birthday", today, GOOGLE_ACCOUNT],
      ['Dentist', `${today}T09:30:00+00:00`, GOOGLE_ACCOUNT],
      ['Bouldering session', `${today}T18:00:00+00:00`, ICS_NAME],
    ]);
    expect(day.events[2]).toMatchObject({ end: `${today}T20:00:00+00:00`, location: 'North Wall Gym' });
    await screenshotsBothWidths('calendar-connections-both');
  });

  it('removes both through their confirmation pages, and Google’s grant is revoked', async () => {
    expect(fake.revoked).toEqual([]);

    await connectedList()
      .getByRole('link', { name: `Remove ${GOOGLE_ACCOUNT}` })
      .click();
    await page.getByRole('heading', { level: 1, name: `Remove ${GOOGLE_ACCOUNT}?` }).waitFor();
    await page.getByText('Daybook also asks Google to revoke the access you gave it.').waitFor();
    await screenshotsBothWidths('calendar-connections-remove');
    await page.getByRole('button', { name: 'Remove calendar' }).click();
    await page.waitForURL((u) => u.pathname === PAGE && u.searchParams.get('removed') === '1');
    await expectLocator(page.getByRole('status')).toHaveText('The calendar was removed.', { trim: true });
    await expectLocator(connectedList().getByRole('listitem')).toHaveCount(1);

    await connectedList()
      .getByRole('link', { name: `Remove ${ICS_NAME}` })
      .click();
    await page.getByRole('heading', { level: 1, name: `Remove ${ICS_NAME}?` }).waitFor();
    await page.getByRole('button', { name: 'Remove calendar' }).click();
    await page.waitForURL((u) => u.pathname === PAGE && u.searchParams.get('removed') === '1');
    await expectLocator(page.getByRole('status')).toHaveText('The calendar was removed.', { trim: true });
    await connectedList().getByText(`No calendars are connected to ${EMAIL}.`).waitFor();
    await screenshotsBothWidths('calendar-connections-removed');

    expect(fake.revoked).toEqual([
      expect.objectContaining({ provider: 'google', clientId: GOOGLE.clientId, tokenType: 'refresh_token' }),
    ]);
    const day = await todaysEvents();
    expect(day).toMatchObject({ events: [], problems: [] });
  });
});
