// Chatting in Chromium with the real server and an OpenAI-compatible fake model: a streamed answer,
// learning that shows up on the Memories page, a server restart mid-conversation, and onboarding.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { launchBrowser, type RunningApp, screenshot, startApp } from './harness.ts';

let app: RunningApp;
let browser: Browser;
let fake: FakeOpenAI;
let page: Page;
let signupLink = '';

const lastUser = (messages: Array<{ role: string; content: string }>) =>
  [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.onChat((req) => {
    const text = lastUser(req.messages);
    if (/Lisbon/.test(text))
      return { text: 'Lisbon is lovely. **Enjoy the climbing** this Saturday!', chunks: 6, delayMs: 40 };
    return {
      text: `Here is what I think about "${text}":\n\n- first, *rest*\n- then, **plan**`,
      chunks: 5,
      delayMs: 40,
    };
  });
  fake.onJson((req) =>
    /Lisbon/.test(lastUser(req.messages))
      ? {
          text: JSON.stringify({
            operations: [
              {
                action: 'ADD',
                id: null,
                key: 'home city',
                data: 'Lives in Lisbon',
                memory_type: 'location',
                frequency_description: null,
              },
              {
                action: 'ADD',
                id: null,
                key: 'climbing',
                data: 'Goes climbing every Saturday',
                memory_type: 'activity',
                frequency_description: 'every Saturday',
              },
            ],
          }),
        }
      : { text: '{"operations":[]}' },
  );
  [app, browser] = await Promise.all([
    startApp({ LLM_BASE_URL: fake.baseUrl, LLM_MODEL: 'fake-model', LLM_MAX_RETRIES: '0' }, (run) => {
      signupLink = /Signup link \(shown once\): (\S+)/.exec(run('invite.ts', 'create'))?.[1] ?? '';
    }),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await page.goto(signupLink);
  await page.getByLabel('Email').fill('leo@example.com');
  await page.getByLabel('Password', { exact: true }).fill('sunny side of life');
  await page.getByLabel('Confirm Password').fill('sunny side of life');
  await page.getByRole('button', { name: 'Sign Up' }).click();
  await page.waitForURL((u) => u.pathname === '/demo-tour');
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await fake?.close();
});

async function send(text: string) {
  const box = page.getByRole('textbox', { name: 'Message', exact: true });
  await box.fill(text);
  await box.press('Enter');
}

describe('chat', () => {
  it('sends a message and shows the streamed answer', async () => {
    await page.goto(`${app.baseUrl}/chat`);
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await expect.poll(() => box.isEnabled(), { timeout: 15_000 }).toBe(true);
    await send('How should I spend my Sunday?');
    await page.getByText('How should I spend my Sunday?').waitFor();
    await page.getByText('Here is what I think about').waitFor();
    await page.locator('strong', { hasText: 'plan' }).waitFor();
    await screenshot(page, 'chat');
  });

  it('learns "I live in Lisbon and go climbing every Saturday" and the facts appear on /memories', async () => {
    await send('I live in Lisbon and go climbing every Saturday');
    await page.getByText(/Remembered: Lives in Lisbon; Goes climbing every Saturday/).waitFor();
    await page.getByText('Enjoy the climbing').waitFor();
    await screenshot(page, 'chat-remembered');
    await page.goto(`${app.baseUrl}/memories`);
    await page.getByRole('cell', { name: 'home city', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'climbing', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: /learned from chat/i }).count()).toBeGreaterThan(0);
  });

  it('reconnects after the server restarts and continues the conversation', async () => {
    await page.goto(`${app.baseUrl}/chat`);
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await expect.poll(() => box.isEnabled(), { timeout: 15_000 }).toBe(true);
    await app.restart();
    // The history came back from the database, and the socket is open again.
    await expect.poll(() => box.isEnabled(), { timeout: 30_000 }).toBe(true);
    await send('Still there after the restart?');
    await page.getByText('Here is what I think about "Still there after the restart?"').waitFor({ timeout: 15_000 });
    expect(await page.getByText('I live in Lisbon and go climbing every Saturday').count()).toBe(1);
  });
});

describe('onboarding', () => {
  it('interviews the new user and ends on /chat', async () => {
    fake.onChat((req) => {
      const text = lastUser(req.messages);
      return /Europe/.test(text)
        ? { text: 'Thank you! You are all set.\n[[ONBOARDING_COMPLETE]]', chunks: 3 }
        : { text: 'Nice to meet you! Where do you live, and in which time zone?', chunks: 3 };
    });
    await page.goto(`${app.baseUrl}/onboarding`);
    await page.getByText('What should I call you?').waitFor({ timeout: 15_000 });
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await expect.poll(() => box.isEnabled(), { timeout: 15_000 }).toBe(true);
    await send('Leo');
    await page.getByText('Where do you live, and in which time zone?').waitFor();
    await screenshot(page, 'onboarding');
    await send('Lisbon, Europe/Lisbon');
    await page.waitForURL((u) => u.pathname === '/chat', { timeout: 15_000 });
  });
});

it('the chat works on a phone', async () => {
  const phone = await browser.newPage({ viewport: { width: 360, height: 780 } });
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(`${app.baseUrl}/chat`);
  await phone.getByText('Enjoy the climbing').waitFor({ timeout: 15_000 });
  expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  await screenshot(phone, 'chat');
  await phone.close();
});
