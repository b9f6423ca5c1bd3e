// Web research in Chromium against the real server: /research in the chat, its card while it runs
// (after a reload too), chatting meanwhile, the cited report in the chat, its own page, the history
// list, and Cancel.
// Search is a local SearXNG-compatible server, pages come from a local site, the model is the fake.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResearchEnv } from '../helpers/fake-env.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { type FakeSearch, fakeResults, startFakeSearch } from '../helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../helpers/fake-site.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectToPass } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

let app: RunningApp;
let browser: Browser;
let fake: FakeOpenAI;
let search: FakeSearch;
let site: FakeSite;
let page: Page;
let phone: Page;
let signupLink = '';

const ARTICLES = ['/articles/e-bike-commuting', '/articles/battery-care', '/articles/bike-lanes'];
/** The page that keeps the research reading while the user chats on. */
const SLOW_PAGE = '/articles/bike-lanes';
/** Longer than the steps the research waits through; the test releases the page before that. */
const SLOW_MS = 100_000;
const QUERY = 'the best e-bikes for commuting';
const TITLE = 'The best e-bikes for commuting';

const lastUser = (messages: Array<{ role: string; content: string }>) =>
  [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';

beforeAll(async () => {
  [fake, search, site] = await Promise.all([startFakeOpenAI(), startFakeSearch(), startFakeSite()]);
  search.onSearch(() => fakeResults(site.origin, ARTICLES));
  fake.onChat((req) => ({ text: `Here is a quick answer to "${lastUser(req.messages)}".`, chunks: 3, delayMs: 20 }));
  fake.onJson((req) => {
    const tool = req.tools?.[0]?.function.name;
    if (tool === 'plan_research')
      return { text: JSON.stringify({ queries: ['e-bike commute tips', 'e-bike battery'] }) };
    if (tool === 'write_report') {
      // Cites the pages the server says it read, by their numbers and titles in the prompt.
      const prompt = req.messages.map((m) => m.content).join('\n');
      const pages = [...prompt.matchAll(/^\[(\d+)\] (.+)\nURL: (.+)$/gm)].map((m) => ({
        url: m[3] as string,
        title: m[2] as string,
      }));
      return {
        text: JSON.stringify({
          introduction: 'E-bikes suit commutes of eight to twenty kilometres each way [1].',
          body: [
            '### Choosing the bike',
            '',
            'A mid-drive motor climbs steep streets better, while a hub motor is simple and quiet [1].',
            '',
            '### Looking after the battery',
            '',
            'Keep the pack between 20 and 80 percent and store it indoors in winter [2].',
            '',
            '### Where to ride',
            '',
            'Protected lanes make everyday riding calmer and safer [3], and a quieter route often beats the fastest one [1, 3].',
          ].join('\n'),
          conclusion: 'Pick a comfortable bike with a good battery and plan a calm route [1].',
          sources: pages,
        }),
      };
    }
    return { text: '{"operations":[]}' };
  });
  [app, browser] = await Promise.all([
    startApp(
      {
        ...fakeResearchEnv(fake, search),
        // Longer than the slow page's stall, which must be read, not given up on.
        FETCH_TIMEOUT_MS: '120000',
      },
      (run) => {
        signupLink = createInviteLink(run);
      },
    ),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await signUpInBrowser(page, signupLink, 'ines@example.com', 'a long ride along the river');
  phone = await browser.newPage({ viewport: { width: 360, height: 780 } });
  await phone.context().addCookies(await page.context().cookies());
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await Promise.all([fake?.close(), search?.close(), site?.close()]);
});

async function openChat(on: Page) {
  await on.goto(`${app.baseUrl}/chat`);
  const box = on.getByRole('textbox', { name: 'Message', exact: true });
  await expectLocator(box).toBeEnabled({ timeout: 20_000 });
  return box;
}

async function send(on: Page, text: string) {
  const box = on.getByRole('textbox', { name: 'Message', exact: true });
  await box.fill(text);
  await box.press('Enter');
}

const noSideScroll = (on: Page) =>
  on.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

/** The hrefs of the links in a list of sources. */
const hrefs = (on: Page, selector: string) =>
  on.locator(`${selector} a`).evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href));

const reportMessage = (on: Page) => on.locator('.chat-row-assistant', { has: on.locator('.chat-report') });

let reportPath = '';

describe('web research', () => {
  it('runs from /research while the user keeps chatting, and the cited report arrives in the chat', {
    timeout: 180_000,
  }, async () => {
    // The slow page arrives when the test releases it (below), however long the steps before take.
    site.setDelay(SLOW_PAGE, SLOW_MS);
    await openChat(page);
    await send(page, `/research ${QUERY}`);
    await page
      .locator('.chat-row-assistant', { hasText: "I'm researching" })
      .locator('strong', { hasText: QUERY })
      .waitFor({ timeout: 20_000 });

    // Its card shows where it stands; the slow page holds it at "Reading", two pages of three read.
    const card = page.getByRole('region', { name: `Researching ${QUERY}` });
    await card.getByText('Reading pages: 2 of 3', { exact: true }).waitFor({ timeout: 30_000 });
    const searches = card.getByRole('list', { name: 'Searches' }).getByRole('listitem');
    await expectLocator(searches).toHaveText([QUERY, 'e-bike commute tips', 'e-bike battery']);
    await expectAccessible(page, 'research-running');
    await screenshot(page, 'research-running');
    // A reload, or another tab, shows the same card.
    await page.reload();
    await card.getByText('Reading pages: 2 of 3', { exact: true }).waitFor({ timeout: 20_000 });
    await openChat(phone);
    await phone
      .getByRole('region', { name: `Researching ${QUERY}` })
      .getByText('Reading pages: 2 of 3', { exact: true })
      .waitFor({ timeout: 20_000 });
    expect(await noSideScroll(phone)).toBe(true);
    await screenshot(phone, 'research-running');
    await openChat(page);

    // Chatting goes on meanwhile, and is answered before the report.
    await send(page, 'Should I ride in the rain?');
    await page.getByText('Here is a quick answer to "Should I ride in the rain?".').waitFor({ timeout: 20_000 });
    await expectLocator(page.locator('.chat-report')).toHaveCount(0);

    site.release(SLOW_PAGE);
    const report = reportMessage(page);
    await report.getByRole('heading', { name: TITLE }).waitFor({ timeout: 60_000 });
    // The report came after the answer to the message sent while it ran.
    const order = await page
      .locator('.chat-row')
      .evaluateAll((rows) => rows.map((r) => (r.querySelector('.chat-report') ? 'report' : (r.textContent ?? ''))));
    expect(order.findIndex((t) => t.includes('quick answer to "Should I ride'))).toBeLessThan(order.indexOf('report'));

    await report.getByText('E-bikes suit commutes of eight to twenty kilometres each way').waitFor();
    await report.getByRole('button', { name: 'See the full report' }).click();
    await report.getByRole('heading', { name: 'Looking after the battery' }).waitFor();
    await expectToPass(async () =>
      expect(await hrefs(page, '.chat-report-sources')).toEqual(ARTICLES.map((p) => site.url(p))),
    );
    await expectLocator(report.locator('.chat-report-sources a').first()).toHaveText(
      'A practical guide to e-bike commuting',
    );
    // [1] in the introduction links to source 1; [2] in the body to source 2.
    const cite1 = report.locator('.chat-report-intro a.md-cite', { hasText: '1' });
    await expectLocator(cite1).toHaveAttribute('href', site.url(ARTICLES[0] as string));
    await expectLocator(cite1).toHaveAttribute('target', '_blank');
    await expectLocator(report.locator('a.md-cite', { hasText: '2' }).first()).toHaveAttribute(
      'href',
      site.url(ARTICLES[1] as string),
    );
    expect(await noSideScroll(page)).toBe(true);
    // The report took the card's place.
    await expectLocator(card).toHaveCount(0);
    await report.getByRole('link', { name: 'Open report' }).scrollIntoViewIfNeeded();
    await expectAccessible(page, 'research-chat-report');
    await screenshot(page, 'research-chat-report');

    // The same report on a phone, from the history the server keeps.
    await openChat(phone);
    const small = reportMessage(phone);
    await small.getByRole('heading', { name: TITLE }).waitFor({ timeout: 20_000 });
    await small.getByRole('button', { name: 'See the full report' }).click();
    await small.getByRole('heading', { name: 'Sources' }).waitFor();
    await small.getByRole('link', { name: 'Open report' }).scrollIntoViewIfNeeded();
    expect(await noSideScroll(phone)).toBe(true);
    await expectAccessible(phone, 'research-chat-report');
    await screenshot(phone, 'research-chat-report');

    await report.getByRole('link', { name: 'Open report' }).click();
    await page.waitForURL((u) => /^\/resources\/research\/\d+$/.test(u.pathname));
    reportPath = new URL(page.url()).pathname;
  });

  it("the report's page shows the query, the report with linked citations and its sources", async () => {
    expect(reportPath).not.toBe('');
    for (const on of [page, phone]) {
      if (on === phone) await phone.goto(`${app.baseUrl}${reportPath}`);
      await on.getByRole('heading', { level: 1, name: 'Web Research Report' }).waitFor({ timeout: 20_000 });
      await on.locator('.research-query', { hasText: TITLE }).waitFor();
      await on.getByText('Based on 3 pages Daybook read.').waitFor();
      await on.getByRole('heading', { name: 'Choosing the bike' }).waitFor();
      await on.getByText('Protected lanes make everyday riding calmer and safer').waitFor();
      await on.getByRole('heading', { name: 'Conclusion' }).waitFor();
      await expectToPass(async () =>
        expect(await hrefs(on, '.report-sources')).toEqual(ARTICLES.map((p) => site.url(p))),
      );
      await expectLocator(on.locator('.report-intro a.md-cite')).toHaveAttribute(
        'href',
        site.url(ARTICLES[0] as string),
      );
      await on.getByRole('button', { name: 'Copy as markdown' }).waitFor();
      expect(await noSideScroll(on)).toBe(true);
      await expectAccessible(on, 'research-detail');
      await screenshot(on, 'research-detail');
    }
  });

  it('the report is in the history on /resources, and opens from there', async () => {
    for (const on of [page, phone]) {
      await on.goto(`${app.baseUrl}/chat`);
      await on.getByRole('button', { name: /^Account menu for / }).click();
      await on.getByRole('link', { name: 'History' }).click();
      await on.waitForURL((u) => u.pathname === '/resources');
      await on.getByRole('heading', { level: 1, name: 'Your Resources' }).waitFor();
      const item = on.getByRole('article', { name: TITLE });
      await item.waitFor({ timeout: 20_000 });
      await item.getByText('Web Research', { exact: true }).waitFor();
      await expectLocator(on.getByRole('article')).toHaveCount(1);
      expect(await noSideScroll(on)).toBe(true);
      await expectAccessible(on, 'research-resources');
      await screenshot(on, 'research-resources');
      await item.getByRole('link', { name: 'View Report' }).click();
      await on.waitForURL((u) => u.pathname === reportPath);
      await on.locator('.research-query', { hasText: TITLE }).waitFor({ timeout: 20_000 });
    }
  });

  it('Cancel stops a research: every tab says so, and its page and the history agree', {
    timeout: 120_000,
  }, async () => {
    site.setDelay(SLOW_PAGE, 60_000);
    try {
      await openChat(page);
      await openChat(phone);
      await send(page, '/research folding bikes on trains');
      const card = page.getByRole('region', { name: 'Researching folding bikes on trains' });
      await card.getByText('Reading pages: 2 of 3', { exact: true }).waitFor({ timeout: 30_000 });
      await card.getByRole('button', { name: 'Cancel' }).click();
      await card.waitFor({ state: 'detached', timeout: 20_000 });
      for (const on of [page, phone]) {
        const note = on.locator('.chat-research-note', {
          hasText: 'You cancelled the research on "folding bikes on trains".',
        });
        await note.waitFor({ timeout: 20_000 });
        await expectLocator(on.getByRole('region', { name: /folding bikes/ })).toHaveCount(0);
        await expectAccessible(on, 'research-cancelled');
        await screenshot(on, 'research-cancelled');
      }
      await page
        .locator('.chat-research-note', { hasText: 'folding bikes on trains' })
        .getByRole('link', { name: 'Details' })
        .click();
      await page.getByRole('heading', { name: 'This research was cancelled' }).waitFor({ timeout: 20_000 });
      await page.goto(`${app.baseUrl}/resources`);
      const item = page.getByRole('article', { name: 'Folding bikes on trains' });
      await item.getByText('Cancelled', { exact: true }).waitFor({ timeout: 20_000 });
    } finally {
      site.setDelay(SLOW_PAGE, 0);
    }
  });
});
