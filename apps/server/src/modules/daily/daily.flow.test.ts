// Daily messages end to end through the real app: the generation job with the fake model, the fake
// Open-Meteo, an ICS calendar host, short researches against a local search engine and site, a real
// SMTP server that can refuse, the HTTP API, the pause link, and chat sockets.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DAILY_MESSAGES, ZDailyMessage, ZResourceList, ZSendNowResponse } from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CompletionRequest, FakeOpenAI, Script } from '../../../../../tests/helpers/fake-openai.ts';
import { type FakeSearch, fakeResults, startFakeSearch } from '../../../../../tests/helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../../../../../tests/helpers/fake-site.ts';
import { type FakeOpenMeteo, startFakeOpenMeteo } from '../../../../../tests/helpers/fake-weather.ts';
import type { Query } from '../../db/database.ts';
import { connectIcs, signedInUser } from '../../test/factories.ts';
import type { Browser, TestApp } from '../../test/test-app.ts';
import { type ChatApp, connect, startChatApp, type } from '../chat/chat.test-client.ts';
import { dayWords, PART_FAILED, zoneNow } from './daily.service.ts';
import {
  backdate,
  claim,
  dailyChatMessages,
  messageRow,
  retireOthers,
  startRefusingSmtp,
  testClock,
  until,
} from './daily.test-helpers.ts';

const ARTICLES = ['/articles/e-bike-commuting', '/articles/battery-care', '/articles/bike-lanes'];
const MODEL_TEXT = '### Good morning\n\nA calm **day** ahead: nothing urgent. Enjoy it!';
const ATTRIBUTION = '_[Weather data by Open-Meteo.com](https://open-meteo.com/)_';
const DAILY_SUBJECT = /^Your daily message for /;

const clock = testClock();
let chatApp: ChatApp;
let t: TestApp;
let fake: FakeOpenAI;
let query: Query;
let weather: FakeOpenMeteo;
let search: FakeSearch;
let site: FakeSite;
let smtp: Awaited<ReturnType<typeof startRefusingSmtp>>;
let icsServer: Server;
let icsUrl: string;
let icsStatus = 200;
/** How the model answers the daily message's writer; the chat's other calls keep their own answers. */
let writer: (req: CompletionRequest) => Script;
const today = () => zoneNow('UTC', new Date()).localDate;
const signal = () => new AbortController().signal;

const ics = (date: string) => `BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Test//EN\r
X-WR-CALNAME:Work\r
BEGIN:VEVENT\r
UID:dentist-1\r
DTSTAMP:20260101T000000Z\r
DTSTART:${date.replaceAll('-', '')}T150000Z\r
DTEND:${date.replaceAll('-', '')}T160000Z\r
SUMMARY:Dentist appointment\r
END:VEVENT\r
END:VCALENDAR\r
`;

/** The model's news topic for each interest it is given ("1. key: data"): the data, plus "news". */
const topicsOf = (req: CompletionRequest) =>
  [...(req.messages.at(-1)?.content ?? '').matchAll(/^\d+\. [^:]+: (.+)$/gm)].map((m) => `${m[1]} news`);

const isDailyWriter = (req: CompletionRequest) =>
  req.messages[0]?.content.startsWith("You are Daybook, a personal assistant, writing the user's daily message") ??
  false;
const dailyPrompts = () => fake.requests.filter(isDailyWriter);

beforeAll(async () => {
  [weather, search, site, smtp] = await Promise.all([
    startFakeOpenMeteo(),
    startFakeSearch(),
    startFakeSite(),
    startRefusingSmtp(),
  ]);
  icsServer = createServer((req, res) => {
    if (icsStatus !== 200) {
      res.writeHead(icsStatus, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    const date = new URL(req.url ?? '/', 'http://x').searchParams.get('date') ?? today();
    res.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' }).end(ics(date));
  });
  await new Promise<void>((resolve) => icsServer.listen(0, '127.0.0.1', resolve));
  icsUrl = `http://127.0.0.1:${(icsServer.address() as AddressInfo).port}/work.ics`;
  chatApp = await startChatApp(
    {
      SMTP_URL: smtp.url,
      WEATHER_PROVIDER: 'open-meteo',
      OPEN_METEO_FORECAST_URL: weather.forecastUrl,
      OPEN_METEO_GEOCODING_URL: weather.geocodingUrl,
      SEARXNG_URL: search.searxngUrl,
      SEARCH_PROVIDERS: 'searxng',
      FETCH_ALLOW: '127.0.0.1',
      // The local fake site's pages, on a machine busy with the rest of the suite: a page read late
      // there (3 s was once too short) is not a page the research should skip.
      FETCH_TIMEOUT_MS: '15000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    },
    { clock, calendar: { cacheMs: 0 } },
  );
  ({ t, fake } = chatApp);
  // Account mail (the verification links) and the daily mail both go to the server that can refuse.
  t.smtp = smtp;
  query = t.app.db.query;
});
afterAll(async () => {
  await chatApp?.close();
  await Promise.all([weather?.close(), search?.close(), site?.close(), smtp?.close()]);
  await new Promise<void>((resolve) => (icsServer ? icsServer.close(() => resolve()) : resolve()));
});
beforeEach(() => {
  clock.set(new Date());
  icsStatus = 200;
  smtp.refuseDaily(0);
  weather.setFailure('forecast', null);
  weather.setFailure('geocoding', null);
  search.onSearch(() => fakeResults(site.origin, ARTICLES));
  writer = () => ({ text: MODEL_TEXT, chunks: 3 });
  fake.onChat((req) =>
    isDailyWriter(req) ? writer(req) : { text: `You said: ${req.messages.at(-1)?.content}`, chunks: 2 },
  );
  fake.onJson((req) => {
    const tool = req.tools?.[0]?.function.name;
    if (tool === 'news_topics') return { text: JSON.stringify({ topics: topicsOf(req) }) };
    if (tool === 'plan_research') return { text: JSON.stringify({ queries: ['e-bike news'] }) };
    if (tool === 'write_report') {
      const prompt = req.messages.map((m) => m.content).join('\n');
      const urls = [...prompt.matchAll(/^URL: (.+)$/gm)].map((m) => m[1] as string);
      return {
        text: JSON.stringify({
          introduction: 'E-bikes keep getting lighter [1].',
          body: urls.map((_, i) => `- Point ${i + 1} [${i + 1}]`).join('\n'),
          conclusion: 'Batteries last longer this year [1].',
          sources: urls.map((url, i) => ({ url, title: `Source ${i + 1}` })),
        }),
      };
    }
    return { text: '{"operations":[]}' };
  });
});

/** A verified user whose weather is for Lisbon (geocoded by the fake Open-Meteo). */
async function dailyUser(opts: { location?: boolean; calendar?: boolean } = {}) {
  const u = await signedInUser(t);
  if (opts.location !== false) {
    const res = await u.browser.patch('/api/users/me/', { location: 'Lisbon' });
    expect(res.statusCode).toBe(200);
  }
  if (opts.calendar) await addIcs(u.browser);
  return u;
}

/** The connections page's ICS form, posted. */
async function addIcs(browser: Browser, url = icsUrl) {
  expect(await connectIcs(browser, url)).toBe(303);
}

const dailyMails = (email: string) => smtp.messages.filter((m) => m.to === email && DAILY_SUBJECT.test(m.subject));

/** Claims today's message for the user and runs its generation job's work once. */
async function generateToday(userId: number): Promise<number> {
  const id = await claim(query, userId, today());
  await t.app.daily.generate(id, signal());
  return id;
}

describe('writing and delivering a message', () => {
  it("uses the model's text, adds the weather's attribution, posts it once and mails it once", async () => {
    const { userId, email } = await dailyUser({ calendar: true });
    const id = await generateToday(userId);
    const row = await messageRow(query, id);
    expect(row.status).toBe('ready');
    expect(row.messageText).toBe(`${MODEL_TEXT}\n\n${ATTRIBUTION}`);
    expect(row.notes).toEqual({});
    // The model was given the weather and the day's events as facts.
    const prompt = dailyPrompts().at(-1)?.messages[1]?.content ?? '';
    expect(prompt).toContain(`Date: `);
    expect(prompt).toMatch(/Weather in Lisbon, Portugal: /);
    expect(prompt).toContain('Dentist appointment');
    const chat = await dailyChatMessages(query, userId);
    expect(chat).toEqual([
      {
        id: row.chatMessageId,
        rawText: `**[Your daily message for ${dayWords(row.localDate)}](/resources/daily-message/${id})**\n\n${row.messageText}`,
      },
    ]);
    const mail = await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    expect(mail.text).toContain('A calm day ahead');
    expect(mail.links).toContain(`http://daybook.test/resources/daily-message/${id}`);
    expect((await messageRow(query, id)).emailedAt).not.toBeNull();

    // Run again after it finished (a retried job): nothing is written, posted or mailed again.
    const asked = fake.requests.length;
    await t.app.daily.generate(id, signal());
    expect(fake.requests.length).toBe(asked);
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    expect(dailyMails(email)).toHaveLength(1);
  });

  it('a model that fails: the template arrives, with the weather and the calendar', async () => {
    writer = () => ({ status: 500 });
    const { userId } = await dailyUser({ calendar: true });
    const id = await generateToday(userId);
    const text = (await messageRow(query, id)).messageText ?? '';
    expect(text).toMatch(/^Good morning! Here is your \w+day,? \d+ \w+\./);
    expect(text).toContain('### Weather in Lisbon, Portugal');
    expect(text).toContain("### Today's calendar\n\n- 15:00–16:00: Dentist appointment");
    expect(text.endsWith(ATTRIBUTION)).toBe(true);
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
  });

  it('weather down: the rest is delivered with a short note', async () => {
    weather.setFailure('forecast', { status: 500 });
    const { userId } = await dailyUser({ calendar: true });
    // With the model: it is told what failed.
    const id = await generateToday(userId);
    const row = await messageRow(query, id);
    expect(row.notes).toEqual({ weather: PART_FAILED.weather });
    expect(row.messageText).toBe(MODEL_TEXT);
    const prompt = dailyPrompts().at(-1)?.messages[1]?.content ?? '';
    expect(prompt).toContain(`Parts that failed (say so in one short line each):\n${PART_FAILED.weather}`);
    expect(prompt).toContain('Dentist appointment');
    expect(prompt).not.toContain('Weather in');

    // Without it (the model fails too): the template carries the note.
    writer = () => ({ status: 503 });
    const other = await dailyUser({ calendar: true });
    const text = (await messageRow(query, await generateToday(other.userId))).messageText ?? '';
    expect(text).toContain(`_${PART_FAILED.weather}_`);
    expect(text).toContain('Dentist appointment');
    expect(text).not.toContain('### Weather');
    expect(text).not.toContain('open-meteo.com');
    expect(await dailyChatMessages(query, other.userId)).toHaveLength(1);
  });

  it('a calendar that answers 500 is named in the message; the weather still arrives', async () => {
    writer = () => ({ status: 500 });
    const { userId } = await dailyUser({ calendar: true });
    icsStatus = 500;
    const text = (await messageRow(query, await generateToday(userId))).messageText ?? '';
    // Not "nothing on your calendar": it could not be read.
    expect(text).toContain('### Today\'s calendar\n\nYour calendar "Work" could not be read this morning.');
    expect(text).not.toContain('Nothing on your calendar');
    const prompt = dailyPrompts().at(-1)?.messages[1]?.content ?? '';
    expect(prompt).toContain("Today's calendar:\n(not read)");
    expect(prompt).toContain(
      'Calendar problems (mention them with their link):\nYour calendar "Work" could not be read',
    );
    expect(text).toContain('### Weather in Lisbon, Portugal');
    expect(text).not.toContain('Dentist');
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
  });

  it('a connected calendar with nothing today says so', async () => {
    writer = () => ({ status: 500 });
    const { userId, browser } = await dailyUser({ location: false });
    await addIcs(browser, `${icsUrl}?date=2026-01-05`);
    const text = (await messageRow(query, await generateToday(userId))).messageText ?? '';
    expect(text).toContain("### Today's calendar\n\nNothing on your calendar today.");
    expect(dailyPrompts().at(-1)?.messages[1]?.content).toContain("Today's calendar:\n(nothing today)");
  });

  it('the calendar failing altogether: the rest is delivered with the short note', async () => {
    writer = () => ({ status: 500 });
    const { userId } = await dailyUser({ calendar: true });
    const spy = vi.spyOn(t.app.calendar, 'eventsForDay').mockRejectedValueOnce(new Error('calendar store down'));
    try {
      const id = await generateToday(userId);
      const row = await messageRow(query, id);
      expect(row.notes).toEqual({ calendar: PART_FAILED.calendar });
      expect(row.messageText).toContain(`_${PART_FAILED.calendar}_`);
      expect(row.messageText).toContain('### Weather in Lisbon, Portugal');
      expect(row.messageText).not.toContain("Today's calendar");
    } finally {
      spy.mockRestore();
    }
  });

  it('SMTP refusing the mail after the post: the retry mails once and posts nothing more', async () => {
    const { userId, email } = await dailyUser();
    const id = await claim(query, userId, today());
    smtp.refuseDaily(1);
    await expect(t.app.daily.generate(id, signal())).rejects.toThrow();
    expect(smtp.refused).toBeGreaterThan(0);
    let row = await messageRow(query, id);
    expect(row.chatMessageId).not.toBeNull();
    expect(row.emailClaimedAt).toBeNull();
    expect(row.emailedAt).toBeNull();
    expect(dailyMails(email)).toHaveLength(0);

    // The job's retry.
    await t.app.daily.generate(id, signal());
    await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    row = await messageRow(query, id);
    expect(row.emailedAt).not.toBeNull();
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);

    // And once more, after everything was done.
    await t.app.daily.generate(id, signal());
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    expect(dailyMails(email)).toHaveLength(1);
    expect(await messageRow(query, id)).toMatchObject({ chatMessageId: row.chatMessageId, emailedAt: row.emailedAt });
  });

  it('two runs of one message at once post it once and mail it once', async () => {
    const { userId, email } = await dailyUser();
    const id = await claim(query, userId, today());
    await Promise.all([t.app.daily.generate(id, signal()), t.app.daily.generate(id, signal())]);
    await Promise.all([t.app.daily.generate(id, signal()), t.app.daily.generate(id, signal())]);
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    expect(dailyMails(email)).toHaveLength(1);
    const row = await messageRow(query, id);
    expect(row.status).toBe('ready');
    expect(row.messageText?.startsWith(MODEL_TEXT)).toBe(true);
  });

  it('a message whose worker died mid-run is taken over within three minutes, and delivered once', async () => {
    const { userId, email } = await dailyUser();
    const id = await claim(query, userId, today());
    // A worker began it (its run is recorded) and died: no job left, no heartbeat.
    await query(`UPDATE daily_messages SET attempts = 1, run_at = $2 WHERE id = $1`, [id, clock.now().toISOString()]);
    // Two minutes on, the minute's sweep sends it again.
    clock.set(new Date(clock.now().getTime() + 120_000));
    await t.app.daily.sweep();
    await until('the taken-over message in the chat', async () => (await messageRow(query, id)).chatMessageId);
    await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    expect(dailyMails(email)).toHaveLength(1);
  });

  // A message claimed before the user paused (one waiting up to 10 minutes for its researches, or a
  // mail being retried) must not be posted or mailed once they have.
  it('a user who paused after the claim gets nothing from that scheduled message', async () => {
    const { userId, email } = await dailyUser({ location: false });
    const id = await claim(query, userId, today());
    await query(`UPDATE users SET is_daily_message_paused = true WHERE id = $1`, [userId]);
    await t.app.daily.generate(id, signal());
    expect(await dailyChatMessages(query, userId)).toHaveLength(0);
    expect(dailyMails(email)).toHaveLength(0);
  });

  it("the template tells times in the user's zone, 12-hour and °F for a place in the US", async () => {
    writer = () => ({ status: 500 });
    const { userId, browser } = await dailyUser({ location: false });
    const patched = await browser.patch('/api/users/me/', { location: 'Austin', time_zone: 'America/Chicago' });
    expect(patched.statusCode).toBe(200);
    // 15:00–16:00 UTC on 20 November is 9:00–10:00 in Chicago (UTC-6).
    await addIcs(browser, `${icsUrl}?date=2026-11-20`);
    const id = await claim(query, userId, '2026-11-20');
    await t.app.daily.generate(id, signal());
    const text = (await messageRow(query, id)).messageText ?? '';
    expect(text).toContain('Here is your Friday');
    expect(text).toContain('- 9:00 AM–10:00 AM: Dentist appointment');
    expect(text).toContain('### Weather in Austin, Texas, United States');
    expect(text).toMatch(/\d+–\d+ °F/);
  });

  // A memory whose key merely contains "name" (a pet's, a company's) must not become the user's.
  it("the greeting uses the user's name, not another memory's name", async () => {
    writer = () => ({ status: 500 });
    const { userId, browser } = await dailyUser({ location: false });
    for (const memory of [
      { key: 'Name', data: 'Alex' },
      { key: "Dog's name", data: 'Rex' },
    ])
      expect((await browser.post('/api/memories/', memory)).statusCode).toBe(201);
    const id = await generateToday(userId);
    expect((await messageRow(query, id)).messageText).toMatch(/^Good morning, Alex!/);
  });

  it('no mail when the user turned the email copy off', async () => {
    const { userId, email, browser } = await dailyUser({ location: false });
    expect((await browser.patch('/api/users/me/', { daily_message_email: false })).statusCode).toBe(200);
    const id = await generateToday(userId);
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    const row = await messageRow(query, id);
    expect(row.emailClaimedAt).toBeNull();
    expect(dailyMails(email)).toHaveLength(0);
  });
});

describe('research in the daily message', () => {
  async function interests(browser: Browser, topics: string[]) {
    for (const [i, topic] of topics.entries()) {
      const res = await browser.post('/api/memories/', {
        key: `Interest ${i + 1}`,
        data: topic,
        memory_type: 'interest',
      });
      expect(res.statusCode).toBe(201);
    }
  }

  const researchesOf = (dailyMessageId: number) =>
    query<{ id: number; query: string; origin: string; status: string }>(
      `SELECT id, query, origin, status FROM researches WHERE daily_message_id = $1 ORDER BY id`,
      [dailyMessageId],
    );

  it('waits for short researches on two interests, links their reports, and keeps them out of the history', async () => {
    const { userId, browser } = await dailyUser();
    await interests(browser, ['e-bike commuting', 'battery care']);
    // The model links the first report itself (whichever run writes it); the second's link is added, once.
    const own = (link: string) => `${MODEL_TEXT} [More on e-bikes](${link})`;
    writer = (req) => ({
      text: own(/<research link="([^"]+)"/.exec(req.messages[1]?.content ?? '')?.[1] ?? ''),
      chunks: 2,
    });
    const id = await claim(query, userId, today());
    // The job's first run asks for the researches and looks again later instead of writing.
    await t.app.daily.generate(id, signal());
    const asked = await researchesOf(id);
    expect(asked.map((r) => [r.query, r.origin])).toEqual([
      ['e-bike commuting news', 'daily'],
      ['battery care news', 'daily'],
    ]);
    let row = await messageRow(query, id);
    expect(row.researchRequestedAt).not.toBeNull();
    expect(row.messageText).toBeNull();
    expect(await dailyChatMessages(query, userId)).toHaveLength(0);
    const again = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'daily-message' AND (data->>'id')::int = $1
       AND state = 'created' AND start_after >= created_on + interval '15 seconds'`,
      [id],
    );
    expect(again[0]?.n).toBe(1);

    await until(
      'the researches to finish',
      async () => (await researchesOf(id)).every((r) => r.status === 'done'),
      30_000,
    );
    const [first, second] = asked;
    // The job's next run (due in 20 s; run here rather than waited for).
    await t.app.daily.generate(id, signal());
    row = await messageRow(query, id);
    expect(row.messageText).toBe(
      `${own(`/resources/research/${first?.id}`)}\n\n- [Battery care news](/resources/research/${second?.id})\n\n${ATTRIBUTION}`,
    );
    const prompt = dailyPrompts().at(-1)?.messages[1]?.content ?? '';
    expect(prompt).toContain(`<research link="/resources/research/${first?.id}" topic="e-bike commuting news">`);
    expect(prompt).toContain('E-bikes keep getting lighter.');
    // The research's own chat delivery is skipped: the daily message is the one post.
    const posts = await query<{ n: number }>(`SELECT count(*)::int AS n FROM chat_messages WHERE user_id = $1`, [
      userId,
    ]);
    expect(posts[0]?.n).toBe(1);

    const detail = ZDailyMessage.parse((await browser.get(`/api/daily-messages/${id}/`)).json());
    expect(detail).toMatchObject({ id, delivery_date: today(), message_text: row.messageText });
    expect(detail.research_reports.map((r) => [r.id, r.status, r.query])).toEqual([
      [first?.id, 'done', 'e-bike commuting news'],
      [second?.id, 'done', 'battery care news'],
    ]);
    expect(detail.research_reports[0]?.report).toBeTruthy();
    const list = ZResourceList.parse((await browser.get('/api/resources/')).json());
    expect(list.map((r) => [r.resource_type, r.id])).toEqual([['daily_message', id]]);
  });

  it('a model that echoes the fact tags: the chat, the page and the email show one text, without them', async () => {
    const { userId, browser, email } = await dailyUser({ location: false });
    writer = () => ({
      text: '### Stories\n\n<research link="/resources/research/9" topic="e-bikes">E-bikes are lighter.</research>\n\nHave a good day.',
      chunks: 3,
    });
    const id = await generateToday(userId);
    const stored = (await messageRow(query, id)).messageText ?? '';
    expect(stored).toBe('### Stories\n\nE-bikes are lighter.\n\nHave a good day.');
    const detail = ZDailyMessage.parse((await browser.get(`/api/daily-messages/${id}/`)).json());
    expect(detail.message_text).toBe(stored);
    const [chat] = await dailyChatMessages(query, userId);
    expect(chat?.rawText.endsWith(stored)).toBe(true);
    const mail = await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    expect(mail.text).toContain('E-bikes are lighter.');
    expect(`${mail.text}${mail.html}`).not.toMatch(/<\/?research|&lt;\/?research/);
  });

  it('asks the search provider about a topic the model makes of an interest, never the memory itself', async () => {
    search.onSearch(() => fakeResults(site.origin, ARTICLES));
    const { browser, userId } = await dailyUser({ location: false });
    const res = await browser.post('/api/memories/', {
      key: 'cycling with Emma',
      data: 'Likes cycling with her daughter Emma along the Tagus in Lisbon on Sundays',
      memory_type: 'interest',
    });
    expect(res.statusCode).toBe(201);
    const asked: string[] = [];
    fake.onJson((req) => {
      const tool = req.tools?.[0]?.function.name;
      if (tool === 'news_topics') {
        asked.push(req.messages.map((m) => m.content).join('\n'));
        return { text: JSON.stringify({ topics: ['urban cycling news'] }) };
      }
      if (tool === 'plan_research') return { text: JSON.stringify({ queries: ['city bike lanes this week'] }) };
      return { text: '{"operations":[]}' };
    });
    const before = search.requests.length;
    const id = await claim(query, userId, today());
    await t.app.daily.generate(id, signal());
    await until('the research to search', () => search.requests.length > before);
    await until(
      'the research to end',
      async () => (await researchesOf(id)).every((r) => r.status === 'done' || r.status === 'failed'),
      30_000,
    );
    const searched = search.requests.slice(before).map((r) => r.query);
    expect(searched.length).toBeGreaterThan(0);
    for (const q of searched) expect(q).not.toMatch(/Emma|daughter|Tagus|Lisbon|Sundays|her /i);
    expect(searched).toContain('urban cycling news');
    // The model was told the topics go to a public search engine, without names or places.
    expect(asked[0]).toMatch(/public search engine/);
    expect(asked[0]).toMatch(/Leave out every name/);
  });

  it('rotates the topics from one day to the next when there are more than three', async () => {
    // The researches fail at once (nothing found): only which topics were asked matters here.
    search.onSearch(() => []);
    const { userId, browser } = await dailyUser({ location: false });
    await interests(browser, ['alpha topic', 'beta topic', 'gamma topic', 'delta topic']);
    const day1 = await claim(query, userId, '2026-05-01');
    await t.app.daily.generate(day1, signal());
    const day2 = await claim(query, userId, '2026-05-02');
    await t.app.daily.generate(day2, signal());
    const topics = async (id: number) => (await researchesOf(id)).map((r) => r.query.replace(/ news$/, ''));
    expect(await topics(day1)).toEqual(['alpha topic', 'beta topic', 'gamma topic']);
    expect(await topics(day2)).toEqual(['delta topic', 'alpha topic', 'beta topic']);
  });
});

describe('the HTTP API', () => {
  it('GET /api/daily-messages/{id}/: the owner only', async () => {
    const owner = await dailyUser({ location: false });
    const other = await dailyUser({ location: false });
    const id = await generateToday(owner.userId);
    const mine = await owner.browser.get(`/api/daily-messages/${id}/`);
    expect(mine.statusCode).toBe(200);
    const body = ZDailyMessage.parse(mine.json());
    expect(body).toMatchObject({ id, delivery_date: today(), research_reports: [] });
    expect(body.chat_message_id).toEqual((await messageRow(query, id)).chatMessageId);
    expect(body.delivered).toEqual(expect.any(String));
    for (const [browser, path] of [
      [other.browser, `/api/daily-messages/${id}/`],
      [owner.browser, '/api/daily-messages/abc/'],
      [owner.browser, '/api/daily-messages/0/'],
      [owner.browser, '/api/daily-messages/99999999999/'],
      [owner.browser, `/api/daily-messages/${id + 100000}/`],
    ] as const) {
      const res = await browser.get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toMatchObject({ error: DAILY_MESSAGES.notFound });
    }
    const anonymous = await t.app.inject({ method: 'GET', url: `/api/daily-messages/${id}/` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('GET /api/resources/ lists the delivered message under its date with a preview without markdown', async () => {
    const { userId, browser } = await dailyUser({ location: false });
    const id = await claim(query, userId, '2026-04-02');
    await t.app.daily.generate(id, signal());
    const list = ZResourceList.parse((await browser.get('/api/resources/')).json());
    expect(list).toEqual([
      expect.objectContaining({
        resource_type: 'daily_message',
        id,
        title: '2026-04-02',
        status: null,
        preview: 'Good morning: A calm day ahead: nothing urgent. Enjoy it!',
      }),
    ]);
  });

  it('POST /api/daily-messages/send-now/: queued, then delivered, at most three times a day', async () => {
    const { userId, browser, email } = await dailyUser({ location: false });
    const first = await browser.post('/api/daily-messages/send-now/');
    expect(first.statusCode).toBe(202);
    const queued = ZSendNowResponse.parse(first.json());
    expect(queued).toEqual({ status: 'queued', id: queued.id, delivery_date: today() });
    // The job writes and posts it.
    await until('the message to be delivered', async () => (await messageRow(query, queued.id)).chatMessageId);
    await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    for (let i = 0; i < 2; i++) {
      const res = await browser.post('/api/daily-messages/send-now/');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'delivered', id: queued.id, delivery_date: today() });
    }
    const fourth = await browser.post('/api/daily-messages/send-now/');
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json()).toMatchObject({ error: DAILY_MESSAGES.sendNowLimit });
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    expect(dailyMails(email)).toHaveLength(1);
    const anonymous = await t.app.inject({ method: 'POST', url: '/api/daily-messages/send-now/' });
    expect([401, 403]).toContain(anonymous.statusCode);
  });

  // After the job gave up on today's message (status failed), "send now" must write it again, not
  // answer 202 and queue a job that returns at once on the failed row.
  it('send-now after today’s message failed writes it again', async () => {
    const { userId, browser } = await dailyUser({ location: false });
    const id = await claim(query, userId, today());
    await t.app.daily.failed(id, 'the job gave up');
    const res = await browser.post('/api/daily-messages/send-now/');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'queued', id });
    await until(
      'the failed message to be delivered after send-now',
      async () => (await messageRow(query, id)).chatMessageId,
      3000,
    );
  });

  it('PATCH /api/users/me/ location: geocoded and stored; an unknown place is a field error; weather down is 503', async () => {
    const { userId, browser } = await dailyUser({ location: false });
    const res = await browser.patch('/api/users/me/', { location: 'Lisbon' });
    expect(res.statusCode).toBe(200);
    expect(res.json().location).toEqual({
      name: 'Lisbon, Portugal',
      country_code: 'PT',
      latitude: 38.71667,
      longitude: -9.13333,
    });
    const [stored] = await query<Record<string, unknown>>(
      `SELECT location_name, location_country, latitude, longitude FROM users WHERE id = $1`,
      [userId],
    );
    expect(stored).toEqual({
      location_name: 'Lisbon, Portugal',
      location_country: 'PT',
      latitude: 38.71667,
      longitude: -9.13333,
    });

    const unknown = await browser.patch('/api/users/me/', { location: 'Nowhereville Atlantis' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ field_errors: { location: [DAILY_MESSAGES.locationNotFound] } });

    weather.setFailure('geocoding', { status: 500 });
    const down = await browser.patch('/api/users/me/', { location: 'Berlin' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ field_errors: { location: [DAILY_MESSAGES.weatherUnavailable] } });
    // Neither failure changed what was stored.
    expect((await browser.get('/api/users/me/')).json().location.name).toBe('Lisbon, Portugal');
  });

  it("the email's pause link: GET asks, the one-click POST pauses without cookies or CSRF, a forged token is refused", async () => {
    const { userId, email } = await dailyUser({ location: false });
    await generateToday(userId);
    const mail = await smtp.waitFor(email, { subject: DAILY_SUBJECT });
    const link = mail.links.find((l) => l.includes('/daily-messages/pause/'));
    if (!link) throw new Error(`no pause link in ${mail.text}`);
    const url = new URL(link);
    expect(url.origin).toBe('http://daybook.test');
    // Mail clients offer the same link as their one-click unsubscribe (RFC 8058).
    expect(mail.headers['list-unsubscribe']).toBe(`<${link}>`);
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    const path = url.pathname + url.search;
    const paused = async () =>
      (await query<{ p: boolean }>(`SELECT is_daily_message_paused AS p FROM users WHERE id = $1`, [userId]))[0]?.p;

    const ask = await t.app.inject({ method: 'GET', url: path });
    expect(ask.statusCode).toBe(200);
    expect(ask.body).toContain('Pause daily messages?');
    expect(ask.body).toContain('<form method="post"');
    expect(await paused()).toBe(false);

    const forgedPath = path.replace(/token=([^&]+)/, (_m, token: string) => `token=${token.slice(0, -2)}00`);
    expect(forgedPath).not.toBe(path);
    for (const method of ['GET', 'POST'] as const) {
      const forged = await t.app.inject({
        method,
        url: forgedPath,
        ...(method === 'POST'
          ? { payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } }
          : {}),
      });
      expect(forged.statusCode, method).toBe(400);
    }
    const otherUser = path.replace(/token=\d+-/, `token=${userId + 1}-`);
    expect((await t.app.inject({ method: 'GET', url: otherUser })).statusCode).toBe(400);
    expect(await paused()).toBe(false);

    const oneClick = await t.app.inject({
      method: 'POST',
      url: path,
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(oneClick.statusCode).toBe(200);
    expect(oneClick.body).toContain('Daily messages paused');
    expect(await paused()).toBe(true);
  });
});

describe('the chat', () => {
  it('open sockets hear that the message is ready and receive it', async () => {
    const { userId, browser } = await dailyUser({ location: false });
    const tab = await connect(chatApp.wsBase, browser);
    await tab.next(type('history'));
    // Due now (00:00 has passed everywhere today), by the schedule's tick and its job.
    expect((await browser.patch('/api/users/me/', { daily_message_time: '00:00' })).statusCode).toBe(200);
    await backdate(query, [userId]);
    await retireOthers(query, [userId]);
    expect(await t.app.daily.tick()).toBe(1);
    const ready = await tab.next(
      (e) => e.message_type === 'task_notification_final' && 'raw_text' in e && e.raw_text === DAILY_MESSAGES.ready,
      15_000,
    );
    expect(ready).toMatchObject({ author_type: 'system' });
    const message = await tab.next(type('markdown'), 15_000);
    expect(message).toMatchObject({ author_type: 'assistant' });
    expect('raw_text' in message && message.raw_text).toContain(MODEL_TEXT);
    expect('raw_text' in message && message.raw_text).toMatch(
      /^\*\*\[Your daily message for [^\]]+\]\(\/resources\/daily-message\/\d+\)\*\*\n\n/,
    );
    // Only once.
    expect(await t.app.daily.tick()).toBe(0);
    expect(await dailyChatMessages(query, userId)).toHaveLength(1);
    tab.ws.close();
  });

  it('a socket opened with ?dmid= has the message in the prompt; another user’s id is ignored', async () => {
    const owner = await dailyUser({ location: false });
    const other = await dailyUser({ location: false });
    writer = () => ({ text: 'Story one: the **zebra crossing** on Elm Street reopens.', chunks: 2 });
    const id = await generateToday(owner.userId);
    const text = (await messageRow(query, id)).messageText ?? '';
    expect(text).toContain('zebra crossing');

    const answered = async (browser: Browser, path: string) => {
      const tab = await connect(chatApp.wsBase, browser, path);
      await tab.next(type('history'));
      tab.say('Tell me more about the first story');
      await tab.next((e) => e.message_type === 'markdown' && e.author_type === 'assistant', 10_000);
      const request = fake.requests.findLast((r) => r.stream && !isDailyWriter(r));
      tab.ws.close();
      // The opened message is in the turn's note, just before the question.
      return (request?.messages ?? [])
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n');
    };
    const withIt = await answered(owner.browser, `/ws/chat/?dmid=${id}`);
    expect(withIt).toContain(`<daily_message>\n${text}\n</daily_message>`);
    const notTheirs = await answered(other.browser, `/ws/chat/?dmid=${id}`);
    expect(notTheirs).not.toContain('<daily_message>');
    expect(notTheirs).not.toContain('zebra crossing');
    const noDmid = await answered(owner.browser, '/ws/chat/');
    expect(noDmid).not.toContain('<daily_message>');
  });
});

describe('settings from the onboarding', () => {
  it('takes the city, time zone and delivery time the model finds in the memories', async () => {
    const { userId, browser } = await dailyUser({ location: false });
    for (const memory of [
      { key: 'Home city', data: 'Lives in Berlin', memory_type: 'location' },
      { key: 'Time zone', data: 'Central European time' },
      { key: 'Daily message time', data: 'Wants the morning message at 6:45' },
    ]) {
      expect((await browser.post('/api/memories/', memory)).statusCode).toBe(201);
    }
    fake.onJson((req) =>
      req.tools?.[0]?.function.name === 'daily_settings'
        ? { text: JSON.stringify({ city: 'Berlin', time_zone: 'Europe/Berlin', delivery_time: '6:45' }) }
        : { text: '{"operations":[]}' },
    );
    await t.app.daily.settingsFromOnboarding(userId);
    const settingsCall = fake.requests.findLast((r) => r.tools?.[0]?.function.name === 'daily_settings');
    expect(settingsCall?.messages[1]?.content).toContain('- Home city: Lives in Berlin');
    const me = (await browser.get('/api/users/me/')).json();
    expect(me).toMatchObject({
      time_zone: 'Europe/Berlin',
      daily_message_time: '06:45',
      location: { name: 'Berlin, Germany', country_code: 'DE', latitude: 52.52437, longitude: 13.41053 },
    });
  });

  it('with the model failing, a location memory is geocoded and gives the time zone', async () => {
    const { userId, browser } = await dailyUser({ location: false });
    expect(
      (await browser.post('/api/memories/', { key: 'Where they live', data: 'Lisbon', memory_type: 'location' }))
        .statusCode,
    ).toBe(201);
    fake.onJson((req) =>
      req.tools?.[0]?.function.name === 'daily_settings' ? { status: 500 } : { text: '{"operations":[]}' },
    );
    await t.app.daily.settingsFromOnboarding(userId);
    expect((await browser.get('/api/users/me/')).json()).toMatchObject({
      time_zone: 'Europe/Lisbon',
      daily_message_time: '07:00',
      location: { name: 'Lisbon, Portugal', country_code: 'PT' },
    });
  });
});
