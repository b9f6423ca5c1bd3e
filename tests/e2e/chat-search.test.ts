// Searching the chat in Chromium against the real server: a conversation longer than the socket's
// first history page, searched from the chat header's dialog, paged with Load more, and an old
// result opened in the chat, scrolled to and highlighted; by mouse and by keyboard, 1280 and 360 px;
// and a research report (run with a local search server and site) found by its text and opened.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fakeResearchEnv } from '../helpers/fake-env.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { type FakeSearch, fakeResults, startFakeSearch } from '../helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../helpers/fake-site.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectToPass } from './expect.ts';
import {
  createInviteLink,
  launchBrowser,
  type RunningApp,
  SCREENSHOT_DIR,
  signUpInBrowser,
  startApp,
} from './harness.ts';

let app: RunningApp;
let browser: Browser;
let fake: FakeOpenAI;
let search: FakeSearch;
let site: FakeSite;
let page: Page;
let signupLink = '';

/** Turns of the seeded conversation: 2 messages each, more than the 50 the socket sends first. */
const TURNS = 30;
const note = (i: number) =>
  i === 0 ? 'Harbour log 0: coffee at the Café Berlenga by the lighthouse' : `Harbour log ${i}: the tide was calm`;

const lastUser = (messages: Array<{ role: string; content: string }>) =>
  [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';

beforeAll(async () => {
  [fake, search, site] = await Promise.all([startFakeOpenAI(), startFakeSearch(), startFakeSite()]);
  search.onSearch(() => fakeResults(site.origin, ['/articles/e-bike-commuting']));
  fake.onChat((req) => ({ text: `Noted: ${lastUser(req.messages).split(':')[0]?.replace('Harbour', 'entry')}.` }));
  fake.onJson((req) => {
    const tool = req.tools?.[0]?.function.name;
    if (tool === 'plan_research') return { text: JSON.stringify({ queries: ['ferry timetables'] }) };
    if (tool !== 'write_report') return { text: '{"operations":[]}' };
    const prompt = req.messages.map((m) => m.content).join('\n');
    const pages = [...prompt.matchAll(/^\[(\d+)\] (.+)\nURL: (.+)$/gm)].map((m) => ({
      url: m[3] ?? '',
      title: m[2] ?? '',
    }));
    return {
      text: JSON.stringify({
        introduction: 'The river ferries make **forty crossings** a day from Cais do Sodré [1].',
        body: '### Timetables\n\nBoats leave every twenty minutes at rush hour [1].',
        conclusion: 'Check the timetable before you go [1].',
        sources: pages,
      }),
    };
  });
  [app, browser] = await Promise.all([
    startApp(
      {
        ...fakeResearchEnv(fake, search),
      },
      (run) => {
        signupLink = createInviteLink(run);
      },
    ),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await signUpInBrowser(page, signupLink, 'mara@example.com', 'tides and harbours');
  await seedConversation(page);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await Promise.all([fake?.close(), search?.close(), site?.close()]);
});

/**
 * The conversation, sent over the chat socket as the browser's user: each message once the answer
 * to the one before has arrived, kept under the socket's 20 frames per 10 s.
 */
async function seedConversation(on: Page) {
  const cookie = (await on.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const ws = new WebSocket(`${app.baseUrl.replace('http', 'ws')}/ws/chat/`, {
    headers: { cookie, origin: app.baseUrl },
  });
  const answers: number[] = [];
  let notify = () => {};
  ws.on('message', (data) => {
    const event = JSON.parse(data.toString()) as { message_type: string; reply_to?: number };
    if (event.message_type === 'markdown' && event.reply_to) {
      answers.push(event.reply_to);
      notify();
    }
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const sentAt: number[] = [];
  try {
    for (let i = 0; i < TURNS; i++) {
      const recent = sentAt.filter((t) => t > Date.now() - 10_000);
      if (recent.length >= 18) await new Promise((r) => setTimeout(r, (recent[0] ?? 0) + 10_200 - Date.now()));
      const answered = new Promise<void>((resolve) => {
        notify = () => answers.length > i && resolve();
      });
      sentAt.push(Date.now());
      ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: note(i) }));
      await answered;
    }
  } finally {
    ws.close();
  }
}

/** The screen as seen (the dialog floats over the chat, so a full-page picture says less). */
async function screenshot(on: Page, name: string) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const width = on.viewportSize()?.width ?? 0;
  await on.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${width}.png`), animations: 'disabled' });
}

async function openChat(on: Page) {
  await on.goto(`${app.baseUrl}/chat`);
  const box = on.getByRole('textbox', { name: 'Message', exact: true });
  await expectLocator(box).toBeEnabled({ timeout: 15_000 });
  await on.getByText(note(TURNS - 1), { exact: true }).waitFor();
}

/** Whether the element is within the visible part of the message list. */
const inView = (on: Page, selector: string) =>
  on.locator(selector).evaluate((el) => {
    const list = document.querySelector('.chat-scroll')?.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    return Boolean(list && r.top >= list.top - 1 && r.bottom <= list.bottom + 1);
  });

describe('chat search', () => {
  it('finds messages, loads more, and opens an old one highlighted in the chat', async () => {
    await openChat(page);
    // The oldest note is not among the messages the chat loaded first.
    await expectLocator(page.locator('.chat-row', { hasText: 'Harbour log 0:' })).toHaveCount(0);

    const trigger = page.getByRole('button', { name: 'Search chat' });
    await trigger.click();
    const dialog = page.getByRole('dialog', { name: 'Search chat' });
    const field = dialog.getByRole('searchbox', { name: 'Search messages' });
    await expectLocator(field).toBeFocused();
    await screenshot(page, 'chat-search-open');
    await field.fill('HARBOUR');
    const results = dialog.getByRole('list', { name: 'Results' }).getByRole('link');
    await expectLocator(results).toHaveCount(20);
    // Newest first, each with its author, date and the match marked.
    await expectLocator(results.first()).toContainText(note(TURNS - 1));
    await expectLocator(results.first().locator('mark')).toHaveText(['Harbour']);
    await expectLocator(results.first().getByText('You', { exact: true })).toHaveCount(1);
    await expectLocator(results.first().locator('time')).toHaveAttribute('datetime', /^\d{4}-\d\d-\d\dT/);
    await page.getByText('20 results, more available.').waitFor({ state: 'attached' });
    await screenshot(page, 'chat-search');
    await expectAccessible(page, 'chat search results');

    await dialog.getByRole('button', { name: 'Load more' }).click();
    await expectLocator(results).toHaveCount(TURNS);
    await expectLocator(dialog.getByRole('button', { name: 'Load more' })).toHaveCount(0);
    // Focus moved to the first result of the new page.
    await expectLocator(results.nth(20)).toBeFocused();
    await screenshot(page, 'chat-search-more');
    const oldest = results.last();
    await expectLocator(oldest).toContainText('Harbour log 0:');
    const href = (await oldest.getAttribute('href')) ?? '';
    const id = Number(new URLSearchParams(href.split('?')[1]).get('message'));
    expect(id).toBeGreaterThan(0);

    await oldest.click();
    await expectLocator(dialog).toHaveCount(0);
    const target = `#message-${id}`;
    await page.locator(`${target}.chat-row.is-highlighted`).waitFor();
    await expectToPass(async () => expect(await inView(page, target)).toBe(true));
    await expectLocator(page.locator('.chat-row.is-highlighted')).toContainText('Harbour log 0:');
    await expectLocator(trigger).toBeFocused();
    // Shown, the message leaves the address: a reload opens the chat at its newest message.
    await page.waitForURL((u) => u.pathname === '/chat' && u.search === '');
    await screenshot(page, 'chat-search-found');
    await page.reload();
    await page.locator('.chat-row').last().waitFor();
    await expectLocator(page.locator('.chat-row.is-highlighted')).toHaveCount(0);
    const newest = await page.locator('.chat-row').last().getAttribute('id');
    await expectToPass(async () => expect(await inView(page, `#${newest}`)).toBe(true));
  });

  it('is usable by keyboard alone, and ignores case and accents', async () => {
    await openChat(page);
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await box.focus();
    await page.keyboard.press('Control+k');
    const dialog = page.getByRole('dialog', { name: 'Search chat' });
    await dialog.waitFor();
    const field = dialog.getByRole('searchbox', { name: 'Search messages' });
    await expectLocator(field).toBeFocused();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expectLocator(box).toBeFocused();

    const trigger = page.getByRole('button', { name: 'Search chat' });
    await trigger.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.type('cafe berlenga');
    const results = dialog.getByRole('list', { name: 'Results' }).getByRole('link');
    await expectLocator(results).toHaveCount(1);
    await expectLocator(results.first().locator('mark')).toHaveText(['Café Berlenga']);
    await page.keyboard.press('ArrowDown');
    await expectLocator(results.first()).toBeFocused();
    await page.keyboard.press('Enter');
    await page.locator('.chat-row.is-highlighted', { hasText: 'Café Berlenga' }).waitFor();
    await expectLocator(trigger).toBeFocused();

    // Nothing found says so; Escape closes and focus returns to the button.
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.type('zeppelin');
    await dialog.getByText('No messages match “zeppelin”.').waitFor();
    await screenshot(page, 'chat-search-empty');
    await expectAccessible(page, 'chat search without results');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expectLocator(trigger).toBeFocused();
  });

  it('fits a phone screen', async () => {
    const phone = await browser.newPage({ viewport: { width: 360, height: 780 } });
    await phone.context().addCookies(await page.context().cookies());
    await openChat(phone);
    await screenshot(phone, 'chat-search-button');
    await phone.getByRole('button', { name: 'Search chat' }).click();
    const dialog = phone.getByRole('dialog', { name: 'Search chat' });
    await dialog.getByRole('searchbox').fill('tide');
    const results = dialog.getByRole('list', { name: 'Results' }).getByRole('link');
    await expectLocator(results).toHaveCount(20);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const box = await dialog.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 360).toBe(true);
    await screenshot(phone, 'chat-search');
    await expectAccessible(phone, 'chat search on a phone');
    await phone.close();
  });
  it('finds a research report by its text, labelled, and opens it in the chat', { timeout: 120_000 }, async () => {
    await openChat(page);
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('/research ferry timetables');
    await box.press('Enter');
    const report = page.locator('.chat-row', { has: page.locator('.chat-report') });
    await report.getByRole('heading', { name: 'Ferry timetables' }).waitFor({ timeout: 60_000 });

    const trigger = page.getByRole('button', { name: 'Search chat' });
    await trigger.click();
    const dialog = page.getByRole('dialog', { name: 'Search chat' });
    await dialog.getByRole('searchbox', { name: 'Search messages' }).fill('forty crossings');
    const results = dialog.getByRole('list', { name: 'Results' }).getByRole('link');
    await expectLocator(results).toHaveCount(1);
    const found = results.first();
    await expectLocator(found.getByText('Research report', { exact: true })).toBeVisible();
    await expectLocator(found.locator('.chat-search-snippet')).toHaveText(
      'The river ferries make forty crossings a day from Cais do Sodré [1].',
    );
    await expectLocator(found.locator('mark')).toHaveText(['forty crossings']);
    // The keys of the JSON it is stored as are not its text.
    await dialog.getByRole('searchbox').fill('introduction');
    await dialog.getByText('No messages match “introduction”.').waitFor();
    await dialog.getByRole('searchbox').fill('forty crossings');
    await expectLocator(results).toHaveCount(1);
    await screenshot(page, 'chat-search-report');
    await expectAccessible(page, 'chat search with a research report');

    const href = (await results.first().getAttribute('href')) ?? '';
    const id = new URLSearchParams(href.split('?')[1]).get('message');
    await results.first().click();
    await page.locator(`#message-${id}.chat-row.is-highlighted .chat-report`).waitFor();
    await expectLocator(trigger).toBeFocused();
  });
});
