// Dates in the chat, in Chromium against the real server: messages stored on different days (set in
// the database) are separated by Today, Yesterday and dated days in the browser's time zone, one
// separator per day also when an older page ends mid-day, and each time stamp carries its full date.

import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabaseUrl } from '../helpers/test-db.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectToPass } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

/** The browser's zone and "now": Wednesday 18 November 2026, 3 PM in Los Angeles (UTC-8). */
const ZONE = 'America/Los_Angeles';
const NOW = new Date('2026-11-18T15:00:00-08:00');
const EMAIL = 'dora@example.com';

let database: Awaited<ReturnType<typeof createDatabaseUrl>>;
let app: RunningApp;
let browser: Browser;
let page: Page;
let signupLink = '';

/** The seeded conversation, oldest first: [stored at, text]; human and assistant take turns. */
const MONDAY = Array.from({ length: 50 }, (_, i): [string, string] => [
  new Date(Date.parse('2026-11-16T09:00:00-08:00') + i * 60_000).toISOString(),
  `Monday note ${i + 1}`,
]);
const CONVERSATION: Array<[string, string]> = [
  ['2025-11-17T10:00:00-08:00', 'A year ago: first hello'],
  ['2025-11-17T10:01:00-08:00', 'A year ago: first answer'],
  ['2025-11-17T10:02:00-08:00', 'A year ago: second question'],
  ['2025-11-17T10:03:00-08:00', 'A year ago: second answer'],
  ...MONDAY,
  ['2026-11-17T20:00:00-08:00', 'Tuesday evening question'],
  // 02:30 UTC on the 18th, but still the 17th in Los Angeles.
  ['2026-11-18T02:30:00Z', 'Tuesday late answer'],
  ['2026-11-18T09:05:00-08:00', 'Wednesday morning question'],
  ['2026-11-18T14:58:00-08:00', 'Wednesday afternoon answer'],
];

async function seed() {
  const client = new pg.Client({ connectionString: database?.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: number }>('SELECT id FROM users WHERE email = $1', [EMAIL]);
    const userId = rows[0]?.id;
    if (userId === undefined) throw new Error('the signed-up user is not in the database');
    for (const [i, [at, text]] of CONVERSATION.entries()) {
      const human = i % 2 === 0;
      await client.query(
        `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, created_at)
         VALUES ($1, 'chat', $2, $3, $4, $5)`,
        [userId, human ? 'human' : 'assistant', human ? 'message' : 'markdown', text, new Date(at)],
      );
    }
  } finally {
    await client.end();
  }
}

const log = () => page.getByRole('log', { name: 'Messages' });
const separators = () => log().getByRole('heading', { level: 2 });

// The messages are written straight into PostgreSQL (CI always has it; without it there is no URL to write to).
const onPostgres = inject('testDb').kind === 'postgres';

describe.skipIf(!onPostgres)('dates in the chat', () => {
  beforeAll(async () => {
    database = await createDatabaseUrl();
    [app, browser] = await Promise.all([
      startApp({ DATABASE_URL: database?.url ?? '' }, (run) => {
        signupLink = createInviteLink(run);
      }),
      launchBrowser(),
    ]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: ZONE });
    page = await context.newPage();
    await signUpInBrowser(page, signupLink, EMAIL, 'days and dates');
    await seed();
    // The browser's clock stands still at NOW (timers keep running), so the labels do not depend on the day the test runs.
    await page.clock.setFixedTime(NOW);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await database?.drop();
  });

  it('separates the days, keeps one separator across pages, and gives each time its full date', async () => {
    await page.goto(`${app.baseUrl}/chat`);
    await log().getByText('Wednesday afternoon answer').waitFor();
    // The first page (the newest 50) starts on Monday.
    await expectLocator(separators()).toHaveText(['Mon 16 November', 'Yesterday', 'Today']);
    const yesterday = page.locator('.chat-day', { has: page.getByRole('heading', { name: 'Yesterday' }) });
    await expectLocator(yesterday.locator('.chat-bubble')).toHaveText([
      'Tuesday evening question',
      'Tuesday late answer',
    ]);

    // The time stamp: "2:58 PM" shown, the full date as its title and in what screen readers hear.
    const answer = log().getByRole('article', { name: 'Assistant said' }).filter({ hasText: 'Wednesday afternoon' });
    const time = answer.locator('time');
    await expectLocator(time).toHaveAttribute('title', 'Wednesday 18 November 2026 at 2:58 PM');
    await expectLocator(time).toHaveAttribute('datetime', '2026-11-18T22:58:00.000Z');
    await expectToPass(async () => {
      const tree = await answer.ariaSnapshot();
      expect(tree).toContain('Wednesday 18 November 2026 at 2:58 PM');
      expect(tree).not.toContain('- text: 2:58 PM');
    });
    // Seen: the short time only (the full date's text is clipped to nothing).
    const fullText = time.getByText('Wednesday 18 November 2026 at 2:58 PM');
    expect((await fullText.boundingBox())?.width ?? 0).toBeLessThanOrEqual(1);
    expect((await time.getByText('2:58 PM', { exact: true }).boundingBox())?.width ?? 0).toBeGreaterThan(20);
    // Selected and copied, the conversation reads as it is seen: "2:58 PM", not the hidden full date glued to it.
    const copied = await answer.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const selection = window.getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
      const text = selection?.toString() ?? '';
      selection?.removeAllRanges();
      return text;
    });
    expect(copied).toContain('Wednesday afternoon answer');
    expect(copied).toContain('2:58 PM');
    expect(copied).not.toContain('November');
    await time.hover();
    await screenshot(page, 'chat-dates');
    await expectAccessible(page, 'chat with day separators');

    // Scrolling to the top loads the older page: Monday's messages join Monday, under one separator.
    await log().evaluate((el) => {
      el.scrollTop = 0;
    });
    await expectLocator(separators()).toHaveText(['Mon 17 November 2025', 'Mon 16 November', 'Yesterday', 'Today']);
    const monday = page.locator('.chat-day', { has: page.getByRole('heading', { name: 'Mon 16 November' }) });
    await expectLocator(monday.locator('.chat-bubble')).toHaveCount(50);
    await expectLocator(monday.locator('.chat-bubble').first()).toHaveText('Monday note 1');

    // Scrolled into Monday, its label stays at the top of the list.
    await page.getByText('Monday note 30', { exact: true }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const label = monday.getByRole('heading', { name: 'Mon 16 November' });
    const [labelBox, listBox] = await Promise.all([label.boundingBox(), log().boundingBox()]);
    expect(Math.round((labelBox?.y ?? 0) - (listBox?.y ?? 0))).toBeLessThanOrEqual(12);
    await expectLocator(label).toBeVisible();
    // It is a band as wide as the messages' column, opaque across it: messages scroll under it as
    // under a header, and none shows through beside the date or under it.
    const dayBox = await monday.boundingBox();
    expect(Math.abs((labelBox?.width ?? 0) - (dayBox?.width ?? 0))).toBeLessThanOrEqual(1);
    const band = labelBox ?? { x: 0, y: 0, width: 0, height: 0 };
    const onBand = await page.evaluate(
      ({ x, y, width, height }) =>
        [x + 2, x + width / 4, x + width / 2, x + width - 2].map(
          (px) => document.elementFromPoint(px, y + height / 2)?.closest('.chat-day-label') != null,
        ),
      band,
    );
    expect(onBand).toEqual([true, true, true, true]);
    const note = await page.getByText('Monday note 30', { exact: true }).boundingBox();
    expect(note?.y ?? 0).toBeGreaterThanOrEqual(band.y + band.height - 1);
    await screenshot(page, 'chat-dates-sticky');
  });

  it('fits a phone', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(`${app.baseUrl}/chat`);
    await log().getByText('Wednesday afternoon answer').waitFor();
    await expectLocator(separators()).toHaveText(['Mon 16 November', 'Yesterday', 'Today']);
    const today = log().getByRole('heading', { name: 'Today' });
    const box = await today.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 360).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    // No hover on a touch screen: a tap on a time shows its full date, another tap the time again.
    const time = log()
      .getByRole('article', { name: 'Assistant said' })
      .filter({ hasText: 'Wednesday afternoon' })
      .locator('time');
    const shown = time.locator('span[aria-hidden="true"]');
    await expectLocator(shown).toHaveText('2:58 PM');
    await time.click();
    await expectLocator(shown).toHaveText('Wednesday 18 November 2026 at 2:58 PM');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await screenshot(page, 'chat-dates-tapped');
    await time.click();
    await expectLocator(shown).toHaveText('2:58 PM');
    await screenshot(page, 'chat-dates');
    await expectAccessible(page, 'chat with day separators on a phone');
  });
});
