// Daily messages in Chromium against the real server (issue 13): a user with a weather location, an
// ICS calendar and two interests gets the morning message in the open chat, follows it to its page
// and to /chat?dmid=, asks about it, finds it in the history, gets the email with working links,
// pauses from the menu and gets none the next day. The server runs tests/e2e/daily-server.ts, whose
// clock the test moves; the model, search, pages, weather, calendar and SMTP are local fakes.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalendarHost, startCalendarHost } from '../helpers/fake-calendar.ts';
import { fakeResearchEnv } from '../helpers/fake-env.ts';
import { type CompletionRequest, type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { type FakeSearch, fakeResults, startFakeSearch } from '../helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../helpers/fake-site.ts';
import { DEFAULT_PLACES, type FakeOpenMeteo, fakeDay, startFakeOpenMeteo } from '../helpers/fake-weather.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, signUpInBrowser, startApp } from './harness.ts';

const SHOTS = process.env.DAILY_SHOTS_DIR ?? '/tmp/daily-shots';
const EMAIL = 'ana.sousa@example.com';
const PASSWORD = 'bread rises while the city sleeps';
const ZONE = 'Europe/Lisbon';
/** The browser's own zone, which a new account takes: the test moves it to Lisbon in the settings. */
const BROWSER_ZONE = 'America/New_York';
const LISBON = DEFAULT_PLACES.find((p) => p.name === 'Lisbon');
const INTERESTS = [
  { key: 'sourdough', data: 'Sourdough baking', article: '/articles/sourdough-starter' },
  { key: 'heat pumps', data: 'Heat pumps for old houses', article: '/articles/heat-pumps' },
] as const;
const EVENTS = ['Bouldering session', 'Dinner with Rui'];
const DAILY_SYSTEM = "writing the user's daily message";
const QUESTION = 'tell me more about the second story';

/** A YYYY-MM-DD plus `days`. */
const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const localDate = (at: Date, timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone }).format(at);
/** The instant a zone's clock shows `date` at `time` (HH:MM). */
function zonedInstant(date: string, time: string, timeZone: string): Date {
  const guess = new Date(`${date}T${time}:00Z`);
  const name =
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(guess)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  const offsetMin = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  return new Date(guess.getTime() - offsetMin * 60_000);
}

// The message is due on the user's next local day, so a user who signed up today (after today's
// 07:00, or before it) is due then whatever the hour of the run.
const DAY = addDays(localDate(new Date(), ZONE), 1);
const NEXT_DAY = addDays(DAY, 1);
const compact = (date: string) => date.replaceAll('-', '');

let mailbox: TestSmtp;
let fake: FakeOpenAI;
let search: FakeSearch;
let site: FakeSite;
let weather: FakeOpenMeteo;
let ics: CalendarHost;
let app: RunningApp;
let browser: Browser;
let page: Page;
let signupLink = '';

const text = (req: CompletionRequest, role: string) =>
  req.messages
    .filter((m) => m.role === role)
    .map((m) => m.content)
    .join('\n');

/** The model writes the daily message from the facts it is given: the weather line, events and researches. */
function writeDailyMessage(req: CompletionRequest): string {
  const prompt = text(req, 'user');
  const out = ['Good morning! Here is what today holds.'];
  const weatherLine = /^Weather in (.+?): (.+)$/m.exec(prompt);
  if (weatherLine) out.push(`### Weather in ${weatherLine[1]}`, weatherLine[2] as string);
  const events = /Today's calendar:\n((?:- .+\n?)+)/.exec(prompt);
  if (events) out.push('### Your day', (events[1] as string).trim());
  const stories = [...prompt.matchAll(/<research link="([^"]+)" topic="([^"]+)">/g)];
  if (stories.length)
    out.push(
      '### Stories for you',
      stories
        .map((s, i) => `${i + 1}. **${s[2]}**: what the sources say this week. [Read the report](${s[1]})`)
        .join('\n'),
    );
  return out.join('\n\n');
}

/** Chat answers: about the daily message when the system prompt carries it, else an echo. */
function answerChat(req: CompletionRequest) {
  const system = text(req, 'system');
  if (system.includes(DAILY_SYSTEM)) return { text: writeDailyMessage(req), chunks: 4 };
  const message = /<daily_message>\n([\s\S]*?)\n<\/daily_message>/.exec(system)?.[1];
  const last = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  if (message && /second story/i.test(last)) {
    const second = /^2\. \*\*(.+?)\*\*/m.exec(message)?.[1] ?? 'no second story in the message';
    return { text: `The second story in this morning's message is "${second}": here is more on it.`, chunks: 3 };
  }
  return { text: `You said: ${last}`, chunks: 2 };
}

function answerJson(req: CompletionRequest) {
  const tool = req.tools?.[0]?.function.name;
  const prompt = text(req, 'user');
  // The daily message's research topics, one per interest ("1. key: data").
  if (tool === 'news_topics')
    return {
      text: JSON.stringify({
        topics: [...prompt.matchAll(/^\d+\. [^:]+: (.+)$/gm)].map((m) => `Latest news on ${m[1]}`),
      }),
    };
  if (tool === 'plan_research') {
    const topic = prompt.replace(/^Latest news on /, '');
    return { text: JSON.stringify({ queries: [`${topic} tips`, `${topic} this week`] }) };
  }
  if (tool === 'write_report') {
    const query = /^Research request: (.+)$/m.exec(prompt)?.[1] ?? '';
    const sources = [...prompt.matchAll(/^\[(\d+)\] (.+)\nURL: (.+)$/gm)].map((m) => ({
      url: m[3] as string,
      title: m[2] as string,
    }));
    return {
      text: JSON.stringify({
        introduction: `This week in ${query.replace(/^Latest news on /, '').toLowerCase()}: the sources agree on the basics [1].`,
        body: ['### What changed', '', 'Small habits matter more than new equipment [1].'].join('\n'),
        conclusion: 'Start small and keep notes [1].',
        sources,
      }),
    };
  }
  return { text: '{"operations":[]}' };
}

/** A calendar whose two events are on the message's day. */
function startIcs() {
  const event = (uid: string, start: string, end: string, summary: string, location?: string) => [
    'BEGIN:VEVENT',
    `UID:${uid}@daybook.test`,
    'DTSTAMP:20260101T000000Z',
    `DTSTART:${compact(DAY)}T${start}00Z`,
    `DTEND:${compact(DAY)}T${end}00Z`,
    `SUMMARY:${summary}`,
    ...(location ? [`LOCATION:${location}`] : []),
    'END:VEVENT',
  ];
  const body = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Daybook e2e//EN',
    'X-WR-CALNAME:Ana at home',
    ...event('climb', '1730', '1930', EVENTS[0] as string, 'North Wall Gym'),
    ...event('dinner', '2000', '2200', EVENTS[1] as string),
    'END:VCALENDAR',
    '',
  ].join('\r\n');
  return startCalendarHost({ '/ana.ics': body });
}

beforeAll(async () => {
  [mailbox, fake, search, site, weather, ics] = await Promise.all([
    startSmtp(),
    startFakeOpenAI(),
    startFakeSearch(),
    startFakeSite(),
    startFakeOpenMeteo(),
    startIcs(),
  ]);
  fake.onChat(answerChat);
  fake.onJson(answerJson);
  search.onSearch((_provider, query) => {
    const interest = INTERESTS.find((i) => query.toLowerCase().includes(i.data.toLowerCase().split(' ')[0] as string));
    return interest ? fakeResults(site.origin, [interest.article]) : [];
  });
  [app, browser] = await Promise.all([
    startApp(
      {
        ...fakeResearchEnv(fake, search),
        WEATHER_PROVIDER: 'open-meteo',
        OPEN_METEO_FORECAST_URL: weather.forecastUrl,
        OPEN_METEO_GEOCODING_URL: weather.geocodingUrl,
        SMTP_URL: mailbox.url,
        MAIL_FROM: 'Daybook <hello@daybook.test>',
      },
      (run) => {
        signupLink = createInviteLink(run);
      },
      { entry: path.join(import.meta.dirname, 'daily-server.ts') },
    ),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 860 }, timezoneId: BROWSER_ZONE });
  await signUpInBrowser(page, signupLink, EMAIL, PASSWORD);
  // Only verified addresses get daily messages: follow the link the signup mailed.
  const confirm = await mailbox.waitFor(EMAIL, { subject: /Confirm your email/, timeoutMs: 30_000 });
  const link = confirm.text.match(/https?:\/\/\S+\/auth\/verify-email\/\S+/)?.[0];
  if (!link) throw new Error(`no verification link in: ${confirm.text}`);
  await page.goto(link);
  await page.getByText('Email Verified!').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await Promise.all([mailbox?.close(), fake?.close(), search?.close(), site?.close(), weather?.close(), ics?.close()]);
});

/** Moves the server's clock to `time` on `date` in Lisbon; the server runs one schedule tick at once. */
async function setClock(date: string, time: string): Promise<{ claimed: number }> {
  const res = await fetch(`${app.baseUrl}/__e2e/clock/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ at: zonedInstant(date, time, ZONE).toISOString() }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { claimed: number };
}

async function dailyRows() {
  const res = await fetch(`${app.baseUrl}/__e2e/daily-messages/`);
  return (await res.json()) as Array<{ id: number; local_date: string; status: string; delivered: boolean }>;
}

const noSideScroll = (on: Page) =>
  on.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

/** Full-page screenshots at 1280 and 360 px into SHOTS; the narrow one must not scroll sideways. */
async function shots(name: string, focus?: () => Locator) {
  await mkdir(SHOTS, { recursive: true });
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: width === 360 ? 780 : 860 });
    await focus?.().scrollIntoViewIfNeeded();
    // A full-page picture of a scrolled window draws the sticky bar mid-page: the window goes back to the top.
    await expectAccessible(page, name);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true, animations: 'disabled' });
    if (width === 360) expect(await noSideScroll(page)).toBe(true);
  }
  await page.setViewportSize({ width: 1280, height: 860 });
}

async function openChat(at = '/chat') {
  await page.goto(`${app.baseUrl}${at}`);
  const box = page.getByRole('textbox', { name: 'Message', exact: true });
  await expectLocator(box).toBeEnabled({ timeout: 20_000 });
  return box;
}

const dailyRow = () =>
  page.locator('.chat-row-assistant', { has: page.getByRole('link', { name: /^Your daily message for / }) });

let dailyId = 0;
/** What the model was told about the weather, and wrote into the message. */
let weatherLine = '';

describe('daily messages', () => {
  it('the settings take a location and time zone; a calendar and two interests are added', async () => {
    await page.goto(`${app.baseUrl}/profile`);
    const section = page.getByRole('region', { name: 'Daily message' });
    const zone = section.getByRole('combobox', { name: 'Time zone' });
    // A new account takes the browser's zone; the user moves it to Lisbon.
    await expectLocator(zone).toHaveValue(BROWSER_ZONE, { timeout: 20_000 });
    // The zone is saved on its own request, which the checks below need finished.
    const zoneSaved = page.waitForResponse(
      (r) =>
        r.url().endsWith('/api/users/me/') &&
        r.request().method() === 'PATCH' &&
        (r.request().postData() ?? '').includes('time_zone'),
    );
    await zone.fill(ZONE);
    await zone.press('Enter');
    await section.getByRole('button', { name: `Use this device's time zone (${BROWSER_ZONE})` }).waitFor();
    const place = section.getByRole('textbox', { name: 'Location for the weather' });
    await place.fill('Lisbon');
    await section.getByRole('button', { name: 'Save', exact: true }).click();
    await section.locator('.daily-place', { hasText: 'Lisbon' }).waitFor();
    expect((await zoneSaved).status()).toBe(200);
    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me).toMatchObject({
      time_zone: ZONE,
      daily_message_time: '07:00',
      daily_message_email: true,
      is_daily_message_paused: false,
      email_verified: true,
    });
    expect(me.location).toMatchObject({ latitude: LISBON?.latitude, longitude: LISBON?.longitude });
    await shots('profile-daily-settings');

    await page.goto(`${app.baseUrl}/accounts/3rdparty/`);
    await page.getByLabel('Calendar address').fill(ics.url('/ana.ics'));
    await page.getByLabel('Calendar address').press('Enter');
    await page.waitForURL((u) => u.searchParams.get('added') === '1');

    await page.goto(`${app.baseUrl}/memories`);
    await page.getByRole('heading', { name: 'Your Memories' }).waitFor();
    const dialog = page.getByRole('dialog');
    for (const interest of INTERESTS) {
      await page.getByRole('button', { name: 'Add New Memory' }).click();
      await dialog.getByLabel('Key').fill(interest.key);
      await dialog.getByLabel('Data').fill(interest.data);
      await dialog.getByLabel('Type').selectOption('interest');
      await dialog.getByRole('button', { name: 'Add Memory' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByRole('cell', { name: interest.key, exact: true }).waitFor();
    }
  });

  it('at 07:01 in Lisbon the message arrives in the open chat, with the weather, the events and two stories', {
    timeout: 180_000,
  }, async () => {
    await openChat();
    // Not due yet: 06:59 on the day claims nothing.
    expect(await setClock(DAY, '06:59')).toEqual(expect.objectContaining({ claimed: 0 }));
    const ready = page.getByRole('list', { name: 'Assistant activity' }).getByText('Your daily message is ready');
    const notified = ready.waitFor({ timeout: 150_000 });
    // The schedule's own tick may claim it first: the rows below say it was claimed once.
    await setClock(DAY, '07:01');
    const row = dailyRow();
    // The researches run first; the message waits for them, then is written and posted.
    await row.waitFor({ timeout: 150_000 });
    await notified;

    const rows = await dailyRows();
    expect(rows).toEqual([expect.objectContaining({ local_date: DAY, status: 'ready', delivered: true })]);
    dailyId = rows[0]?.id ?? 0;

    // The model was given the forecast for Lisbon on that day, and the day's events.
    const request = fake.requests.find((r) => text(r, 'system').includes(DAILY_SYSTEM));
    const prompt = request ? text(request, 'user') : '';
    weatherLine = /^Weather in .+?: (.+)$/m.exec(prompt)?.[1] ?? '';
    const forecast = fakeDay(LISBON?.latitude ?? 0, LISBON?.longitude ?? 0, DAY);
    expect(weatherLine).toContain(`Sunrise ${forecast.sunrise.slice(11)}, sunset ${forecast.sunset.slice(11)}.`);
    for (const title of EVENTS) expect(prompt).toContain(title);

    await row.getByRole('heading', { name: /Weather in Lisbon/ }).waitFor();
    await row.getByText(weatherLine).waitFor();
    for (const title of EVENTS) await row.getByText(title, { exact: false }).waitFor();
    const stories = row.getByRole('link', { name: 'Read the report' });
    await expectLocator(stories).toHaveCount(2);
    for (const [i, interest] of INTERESTS.entries()) {
      await row.locator('li', { hasText: `Latest news on ${interest.data}` }).waitFor();
      await expectLocator(stories.nth(i)).toHaveAttribute('href', /^\/resources\/research\/\d+$/);
    }
    // A message this long comes collapsed (spec: over about 12 lines); its last lines show once opened.
    await row.getByRole('button', { name: 'Read more...' }).click();
    await row.getByRole('button', { name: 'Collapse' }).waitFor();
    // The weather's attribution ends every message that has the weather.
    await row.getByRole('link', { name: /Open-Meteo/ }).waitFor();
    await shots('chat-daily-message', () => row);
  });

  it('opens on its own page with the Web Research, and "Ask about it in the chat" highlights it there', async () => {
    await dailyRow()
      .getByRole('link', { name: /^Your daily message for / })
      .click();
    await page.waitForURL((u) => u.pathname === `/resources/daily-message/${dailyId}`);
    await page.getByRole('heading', { level: 1, name: 'Daily Message' }).waitFor({ timeout: 20_000 });
    const message = page.getByRole('article', { name: 'Daily message' });
    await message.getByText(weatherLine).waitFor();
    const research = page.getByRole('region', { name: 'Web Research' });
    for (const interest of INTERESTS)
      await research.getByRole('heading', { level: 3, name: `Latest news on ${interest.data}` }).waitFor();
    await research.getByText('This week in sourdough baking').waitFor();
    await shots('daily-message-detail');

    await page.getByRole('link', { name: 'Ask about it in the chat' }).click();
    await page.waitForURL((u) => u.pathname === '/chat' && u.searchParams.get('dmid') === String(dailyId));
    const highlighted = page.locator('.chat-row.is-highlighted');
    await highlighted.getByText(weatherLine).waitFor({ timeout: 20_000 });
    await expectLocator(highlighted).toHaveCount(1);
    await expectLocator(page.getByText('Daily message not found')).toHaveCount(0);
  });

  it('a question asked from there is answered with the message in context', async () => {
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await expectLocator(box).toBeEnabled({ timeout: 20_000 });
    await box.fill(QUESTION);
    await box.press('Enter');
    const second = `Latest news on ${INTERESTS[1].data}`;
    await page
      .locator('.chat-row-assistant', { hasText: `The second story in this morning's message is "${second}"` })
      .waitFor({ timeout: 30_000 });
    const asked = fake.requests.filter((r) => r.messages.some((m) => m.role === 'user' && m.content === QUESTION));
    expect(asked.length).toBeGreaterThan(0);
    expect(text(asked[0] as CompletionRequest, 'system')).toContain(weatherLine);
    await shots('chat-dmid-answer', () => page.locator('.chat-row').last());
  });

  it('is in the history on /resources, and View Message opens its page', async () => {
    await page.getByRole('button', { name: /^Account menu for / }).click();
    await page.getByRole('link', { name: 'History' }).click();
    await page.waitForURL((u) => u.pathname === '/resources');
    await page.getByRole('heading', { level: 1, name: 'Your Resources' }).waitFor();
    const item = page.getByRole('article').filter({ hasText: 'Daily Message' });
    await item.waitFor({ timeout: 20_000 });
    // Its researches are part of the message, not items of their own.
    await expectLocator(page.getByRole('article')).toHaveCount(1);
    await shots('resources-daily-message');
    await item.getByRole('link', { name: 'View Message' }).click();
    await page.waitForURL((u) => u.pathname === `/resources/daily-message/${dailyId}`);
    await page.getByRole('region', { name: 'Web Research' }).waitFor({ timeout: 20_000 });
  });

  it('the email arrived with List-Unsubscribe, and its message, chat and pause links work', async () => {
    const mail = await mailbox.waitFor(EMAIL, { subject: /^Your daily message for /, timeoutMs: 30_000 });
    expect(mail.text).toContain(weatherLine);
    const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
    const chatUrl = links.find((l) => l === `${app.baseUrl}/chat?dmid=${dailyId}`);
    const messageUrl = links.find((l) => l === `${app.baseUrl}/resources/daily-message/${dailyId}`);
    const pauseUrl = links.find((l) => l.startsWith(`${app.baseUrl}/daily-messages/pause/?token=`));
    expect({ chatUrl, messageUrl, pauseUrl }).toEqual({
      chatUrl: expect.any(String),
      messageUrl: expect.any(String),
      pauseUrl: expect.any(String),
    });
    expect(mail.headers['list-unsubscribe']).toBe(`<${pauseUrl}>`);
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(mail.html).toContain(`href="${messageUrl}"`);
    // The message's relative report links are made absolute on the public address.
    const reports = [...mail.html.matchAll(/href="([^"]*\/resources\/research\/\d+)"/g)].map((m) => m[1]);
    expect(reports).toHaveLength(2);
    for (const report of reports) expect(report?.startsWith(`${app.baseUrl}/resources/research/`)).toBe(true);

    // The pause link only asks on GET (mail scanners follow links); a forged token is refused.
    const ask = await fetch(pauseUrl as string);
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('Pause daily messages?');
    const forged = await fetch(`${app.baseUrl}/daily-messages/pause/?token=forged`);
    expect(forged.status).toBe(400);

    // The message link is the app, which shows the message to its signed-in owner.
    const shell = await fetch(messageUrl as string);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-type')).toMatch(/^text\/html/);
    await page.goto(messageUrl as string);
    await page.getByRole('article', { name: 'Daily message' }).getByText(weatherLine).waitFor({ timeout: 20_000 });
    await page.goto(chatUrl as string);
    await page.locator('.chat-row.is-highlighted').getByText(weatherLine).waitFor({ timeout: 20_000 });

    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me.is_daily_message_paused).toBe(false);

    // How the mail looks, drawn by the browser as a mail client would: on a blank page, where the
    // app's Content-Security-Policy does not block the mail's inline styles.
    await page.goto('about:blank');
    await page.setContent(mail.html, { waitUntil: 'load' });
    await shots('daily-email');
  });

  it('paused from the menu, the next day brings no message', async () => {
    await openChat();
    await page.getByRole('button', { name: /^Account menu for / }).click();
    const toggle = page.getByRole('switch', { name: 'Pause daily messages' });
    await expectLocator(toggle).toBeEnabled({ timeout: 20_000 });
    await expectLocator(toggle).toHaveAttribute('aria-checked', 'false');
    // Listen before clicking: the save can answer before a listener added afterwards would exist.
    const saved = page.waitForResponse((r) => r.url().endsWith('/api/users/me/') && r.request().method() === 'PATCH');
    await toggle.click();
    expect((await saved).status()).toBe(200);
    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me).toMatchObject({ is_daily_message_paused: true });
    await expectLocator(toggle).toHaveAttribute('aria-checked', 'true');
    await page.keyboard.press('Escape');

    // The next morning's tick claims nobody: no message is written, posted or mailed.
    expect((await setClock(NEXT_DAY, '07:01')).claimed).toBe(0);
    expect((await dailyRows()).map((r) => r.local_date)).toEqual([DAY]);
    await expectLocator(dailyRow()).toHaveCount(1);
    expect(mailbox.messages.filter((m) => /^Your daily message for /.test(m.subject))).toHaveLength(1);
  });
});
