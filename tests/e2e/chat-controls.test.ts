// The chat's controls in Chromium with the real server and an OpenAI-compatible fake model: Stop while
// an answer is written, Copy (answer and code block), Regenerate, Retry after a failure (also after a
// reload), and a second tab that joins while an answer is written.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

const STORY = Array.from(
  { length: 24 },
  (_, i) => `Sentence ${i + 1} of the story goes on a little, so that it takes a while to arrive.`,
).join(' ');
const CODE_ANSWER = 'Start it like this:\n\n```sh\nnpm ci\nnpm start\n```\n\nThen open **localhost:3000**.';

let app: RunningApp;
let browser: Browser;
let fake: FakeOpenAI;
let context: BrowserContext;
let page: Page;
let signupLink = '';

const lastUser = (messages: Array<{ role: string; content: string }>) =>
  [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.onJson(() => ({ text: '{"operations":[]}' }));
  [app, browser] = await Promise.all([
    startApp({ LLM_BASE_URL: fake.baseUrl, LLM_MODEL: 'fake-model', LLM_MAX_RETRIES: '0' }, (run) => {
      signupLink = createInviteLink(run);
    }),
    launchBrowser(),
  ]);
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
  page = await context.newPage();
  await signUpInBrowser(page, signupLink, 'ada@example.com', 'copy that, over');
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await fake?.close();
});

function answerScript(req: { messages: Array<{ role: string; content: string }> }) {
  const text = lastUser(req.messages);
  // The stories that get stopped hold after their first sentences until they are: a slow machine
  // cannot reach Stop after the whole story has arrived.
  if (/^(tell me a story|another story)/i.test(text)) return { text: STORY, chunks: 48, stallAfterChunks: 6 };
  if (/story/i.test(text)) return { text: STORY, chunks: 48, delayMs: 250 };
  if (/start/i.test(text)) return { text: CODE_ANSWER, chunks: 3, delayMs: 20 };
  return { text: `An answer to "${text}".`, chunks: 2, delayMs: 20 };
}

async function openChat(on: Page) {
  await on.goto(`${app.baseUrl}/chat`);
  const box = on.getByRole('textbox', { name: 'Message', exact: true });
  await expectLocator(box).toBeEnabled({ timeout: 15_000 });
  return box;
}

async function send(on: Page, text: string) {
  const box = on.getByRole('textbox', { name: 'Message', exact: true });
  await box.fill(text);
  await box.press('Enter');
}

const answers = (on: Page) =>
  on.getByRole('log', { name: 'Messages' }).getByRole('article', { name: 'Assistant said' });

it('stops an answer while it is written: Stop beside Send, the text so far kept and marked Stopped', async () => {
  fake.onChat(answerScript);
  await openChat(page);
  await send(page, 'Tell me a story');
  const stop = page.getByRole('button', { name: 'Stop', exact: true });
  await stop.waitFor({ timeout: 15_000 });
  await page.getByText('Sentence 2 of the story').waitFor({ timeout: 15_000 });
  await screenshot(page, 'chat-controls-streaming');
  await expectAccessible(page, 'chat while an answer streams (Stop)');
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 360, height: 780 });
  await openChat(phone);
  await phone.getByRole('button', { name: 'Stop', exact: true }).waitFor({ timeout: 15_000 });
  await screenshot(phone, 'chat-controls-streaming');
  await expectAccessible(phone, 'chat on a phone while an answer streams (Stop)');
  expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

  await stop.click();
  const stopped = answers(page).last();
  await stopped.getByText('Stopped', { exact: true }).waitFor({ timeout: 15_000 });
  await stop.waitFor({ state: 'detached' });
  await expectLocator(stopped.locator('.markdown')).toHaveText(/^\s*Sentence 1 of the story/);
  const text = ((await stopped.locator('.markdown').textContent()) ?? '').trim();
  expect(text.length).toBeLessThan(STORY.length);
  // The other tab has the same stopped answer, and so has a reload.
  await answers(phone).last().getByText('Stopped', { exact: true }).waitFor({ timeout: 15_000 });
  await phone.reload();
  await answers(phone).last().getByText('Stopped', { exact: true }).waitFor({ timeout: 15_000 });
  await expectLocator(answers(phone).last().locator('.markdown')).toHaveText(text, { trim: true });
  await phone.close();
  await expectLocator(page.locator('.is-streaming')).toHaveCount(0);
});

it('stops with Escape from the message box', async () => {
  fake.onChat(answerScript);
  const box = await openChat(page);
  const before = await answers(page).count();
  await send(page, 'Another story, please');
  await page.getByRole('button', { name: 'Stop', exact: true }).waitFor({ timeout: 15_000 });
  // This answer's first words, not the earlier story's.
  const answer = answers(page).nth(before);
  await answer.getByText('Sentence 1 of the story').waitFor({ timeout: 15_000 });
  await box.press('Escape');
  await answer.getByText('Stopped', { exact: true }).waitFor({ timeout: 15_000 });
  await expectLocator(page.getByRole('button', { name: 'Stop', exact: true })).toHaveCount(0);
});

it('copies an answer as markdown and a code block as its code', async () => {
  fake.onChat(answerScript);
  await openChat(page);
  await send(page, 'How do I start Daybook?');
  const answer = answers(page).last();
  await answer.getByText('localhost:3000').waitFor({ timeout: 15_000 });
  await answer.getByRole('button', { name: 'Copy', exact: true }).click();
  await answer.getByRole('button', { name: 'Copied', exact: true }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(CODE_ANSWER);
  await answer.getByRole('button', { name: 'Copy code' }).click();
  // The button says Copied once the clipboard has the code.
  await answer.locator('.md-pre').getByRole('button', { name: 'Copied', exact: true }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('npm ci\nnpm start');
  await screenshot(page, 'chat-controls-copied');
  await expectAccessible(page, 'chat after Copy');
});

it('regenerates the latest answer: a new answer to the same question, the earlier one kept', async () => {
  fake.onChat(answerScript);
  await openChat(page);
  await send(page, 'Name a colour');
  await page.getByText('An answer to "Name a colour".').waitFor({ timeout: 15_000 });
  const before = await answers(page).count();
  // Only the latest answer offers it.
  await expectLocator(page.getByRole('button', { name: 'Regenerate' })).toHaveCount(1);
  fake.onChat(() => ({ text: 'Teal, this time.', chunks: 3, delayMs: 30 }));
  const regenerate = answers(page).last().getByRole('button', { name: 'Regenerate' });
  await regenerate.focus();
  await page.keyboard.press('Enter');
  await page.getByText('Teal, this time.').waitFor({ timeout: 15_000 });
  await expectLocator(answers(page)).toHaveCount(before + 1);
  await page.getByText('An answer to "Name a colour".').waitFor();
  await expectLocator(page.getByRole('log').getByText('Name a colour', { exact: true })).toHaveCount(1);
  // Each says which answer it is once the new one has finished (its last words arrive before the end
  // of the answer does); focus stayed in the chat (the message box), not on the page.
  await answers(page).last().getByText('Answer 2 of 2').waitFor({ timeout: 15_000 });
  await answers(page)
    .filter({ hasText: 'An answer to "Name a colour".' })
    .getByText('Answer 1 of 2')
    .waitFor({ timeout: 15_000 });
  await expectLocator(page.getByRole('textbox', { name: 'Message', exact: true })).toBeFocused();
  await expectLocator(page.getByRole('button', { name: 'Regenerate' })).toHaveCount(1);
  await screenshot(page, 'chat-controls-answered');
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 360, height: 780 });
  await openChat(phone);
  // On a touch-sized screen the actions are always shown.
  await answers(phone).last().getByRole('button', { name: 'Regenerate' }).waitFor({ timeout: 15_000 });
  expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  await screenshot(phone, 'chat-controls-answered');
  await expectAccessible(phone, 'chat on a phone with Copy and Regenerate');
  await phone.close();
});

it('retries after the assistant was unavailable, also after a reload', async () => {
  fake.onChat(() => ({ status: 500, body: '{"error":{"message":"overloaded"}}' }));
  await openChat(page);
  await send(page, 'Plan my Sunday');
  const retry = page.getByRole('button', { name: /^Retry/ });
  await retry.waitFor({ timeout: 15_000 });
  await page.reload();
  await retry.waitFor({ timeout: 15_000 });
  await screenshot(page, 'chat-controls-retry');
  await expectAccessible(page, 'chat with Retry');
  fake.onChat(answerScript);
  await retry.click();
  await page.getByText('An answer to "Plan my Sunday".').waitFor({ timeout: 15_000 });
  // The question is answered again, not asked twice.
  await expectLocator(page.getByRole('log').getByText('Plan my Sunday', { exact: true })).toHaveCount(1);
});

it('a tab opened while an answer is written shows it from its first word, then the rest', async () => {
  fake.onChat(answerScript);
  await openChat(page);
  const before = await answers(page).count();
  await send(page, 'One more story');
  await answers(page).nth(before).getByText('Sentence 3 of the story').waitFor({ timeout: 15_000 });
  const tab = await context.newPage();
  await tab.setViewportSize({ width: 360, height: 780 });
  await tab.goto(`${app.baseUrl}/chat`);
  const live = tab.locator('.chat-bubble.is-streaming');
  await live.waitFor({ timeout: 15_000 });
  await expectLocator(live).toHaveText(/^\s*Sentence 1 of the story/);
  await screenshot(tab, 'chat-controls-joined');
  // The final answer takes the live one's place: one answer, the whole story.
  await expectLocator(answers(tab).last().locator('.markdown')).toHaveText(STORY, { trim: true, timeout: 30_000 });
  await expectLocator(tab.locator('.is-streaming')).toHaveCount(0);
  // As many story answers as the tab that asked has, once it has finished writing too.
  await expectLocator(page.locator('.is-streaming')).toHaveCount(0);
  const stories = await answers(page).filter({ hasText: 'Sentence 1 of the story' }).count();
  await expectLocator(answers(tab).filter({ hasText: 'Sentence 1 of the story' })).toHaveCount(stories);
  await tab.close();
});
