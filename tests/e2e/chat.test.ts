// Chatting in Chromium with the real server and an OpenAI-compatible fake model: a streamed answer,
// learning that shows up on the Memories page, a server restart mid-conversation, and onboarding.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectPage, expectToPass } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

let app: RunningApp;
let browser: Browser;
let fake: FakeOpenAI;
let page: Page;
/** The same user on a phone-sized screen, following the same conversation. */
let phone: Page;
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
      signupLink = createInviteLink(run);
    }),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await signUpInBrowser(page, signupLink, 'leo@example.com', 'sunny side of life');
  phone = await browser.newPage({ viewport: { width: 360, height: 780 } });
  await phone.context().addCookies(await page.context().cookies());
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

async function openChat(on: Page, path = '/chat') {
  await on.goto(`${app.baseUrl}${path}`);
  const box = on.getByRole('textbox', { name: 'Message', exact: true });
  await expectLocator(box).toBeEnabled({ timeout: 15_000 });
  return box;
}

/** Left and right edges of the first element matching `selector`. */
const edges = (on: Page, selector: string) =>
  on
    .locator(selector)
    .first()
    .evaluate((el) => {
      const r = el.getBoundingClientRect();
      return [Math.round(r.left), Math.round(r.right)] as const;
    });

/** The newest message's time stamp is inside the visible part of the message list. */
const newestTimeInView = (on: Page) =>
  on.evaluate(() => {
    const list = document.querySelector('.chat-scroll')?.getBoundingClientRect();
    const metas = document.querySelectorAll('.chat-scroll .chat-meta');
    const last = metas[metas.length - 1]?.getBoundingClientRect();
    return Boolean(list && last && last.top >= list.top && last.bottom <= list.bottom + 0.5);
  });

describe('chat', () => {
  it('greets a new user in an empty chat, reminds them to verify, and starts in the message box', async () => {
    for (const on of [page, phone]) {
      await openChat(on);
      await on.getByText('Your chat with Daybook').waitFor();
      await expectLocator(on.getByRole('link', { name: 'Memories page' })).toHaveAttribute('href', '/memories');
      // Signup signed the user in, but the next sign-in needs the mailed link.
      await on.getByText('Please verify your email address. We sent a link to leo@example.com').waitFor();
      // The chat still fits the screen below the nav bar and the reminder.
      expect(await on.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(
        on.viewportSize()?.height ?? 0,
      );
      expect(await on.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        on.viewportSize()?.width ?? 0,
      );
      await expectAccessible(on, 'chat (empty)');
      await screenshot(on, 'chat-empty');
    }
    // A mouse and keyboard start in the message box.
    const box = page.getByRole('textbox', { name: 'Message', exact: true });
    await expectLocator(box).toBeFocused();
    // "Skip to message box" shows only while it has focus, and leads there.
    const skip = page.getByRole('link', { name: 'Skip to message box' });
    expect(await skip.evaluate((el) => el.getBoundingClientRect().width)).toBeLessThanOrEqual(1);
    await skip.focus();
    expect(await skip.evaluate((el) => el.getBoundingClientRect().width)).toBeGreaterThan(50);
    await screenshot(page, 'chat-skip-link');
    await skip.press('Enter');
    await expectLocator(box).toBeFocused();
  });

  it('sends a message and shows the streamed answer', async () => {
    await openChat(page);
    await send('How should I spend my Sunday?');
    await page.getByText('How should I spend my Sunday?', { exact: true }).waitFor();
    await page.getByText('Here is what I think about').waitFor();
    await page.locator('strong', { hasText: 'plan' }).waitFor();
    await expectAccessible(page, 'chat with an answer');
    await screenshot(page, 'chat');
    // The composer lines up with the message column: bubbles, header text and composer share both edges.
    const [left, right] = await edges(page, '.chat-header-inner .chat-title');
    expect((await edges(page, '.chat-row-assistant .chat-bubble'))[0]).toBe(left);
    expect((await edges(page, '.chat-input'))[0]).toBe(left);
    expect((await edges(page, '.chat-row-human .chat-bubble'))[1]).toBe((await edges(page, '.chat-send'))[1]);
    expect((await edges(page, '.chat-status'))[1]).toBe((await edges(page, '.chat-send'))[1]);
    expect(right).toBeGreaterThan(left);
  });

  it('learns "I live in Lisbon and go climbing every Saturday" and the facts appear on /memories', async () => {
    // Shorter screens, so the list scrolls and the notification stack has to share the room.
    await page.setViewportSize({ width: 1280, height: 620 });
    await openChat(phone);
    await send('I live in Lisbon and go climbing every Saturday');
    for (const on of [page, phone]) {
      await on.getByText(/Remembered: Lives in Lisbon; Goes climbing every Saturday/).waitFor();
      await on.getByText('Enjoy the climbing').waitFor();
      // The stack sits under the list and the list keeps its newest time stamp in view.
      await expectToPass(async () => expect(await newestTimeInView(on)).toBe(true));
      await expectAccessible(on, 'chat with a task notification');
      await screenshot(on, 'chat-remembered');
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${app.baseUrl}/memories`);
    await page.getByRole('cell', { name: 'home city', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'climbing', exact: true }).waitFor();
    await expectToPass(async () =>
      expect(await page.getByRole('link', { name: /learned from chat/i }).count()).toBeGreaterThan(0),
    );
  });

  // A restart on a busy machine, and two pages checked with axe-core during the outage.
  it('reconnects after the server restarts and continues the conversation', { timeout: 120_000 }, async () => {
    const box = await openChat(page);
    await openChat(phone);
    // Every text the first banner shows from now on, recorded by the page itself as it changes.
    await page.evaluate(() => {
      const shown: string[] = [];
      const record = () => {
        const text = document.querySelector('.chat-banners .banner')?.textContent;
        if (text && shown.at(-1) !== text) shown.push(text);
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
      Object.assign(window, { __bannersShown: shown });
    });
    const restarted = app.restart();
    // One banner for the whole outage: "disconnected", counting down or reconnecting, never the error one.
    for (const on of [page, phone]) {
      await on.getByText(/You are disconnected\./).waitFor({ timeout: 10_000 });
      await expectAccessible(on, 'chat disconnected');
      await screenshot(on, 'chat-disconnected');
    }
    await restarted;
    // The history came back from the database, and the socket is open again.
    await expectLocator(box).toBeEnabled({ timeout: 30_000 });
    const shown = await page.evaluate(() => (window as unknown as { __bannersShown: string[] }).__bannersShown);
    const seen = new Set(shown.map((text) => text.replace(/\d+ s\./, 'n s.').replace('Trying again shortly.', '')));
    expect(seen.size).toBeGreaterThan(0);
    expect([...seen].filter((text) => !text.startsWith('You are disconnected.'))).toEqual([]);
    await expectLocator(page.getByText('WebSocket connection error')).toHaveCount(0);
    await send('Still there after the restart?');
    await page.getByText('Here is what I think about "Still there after the restart?"').waitFor({ timeout: 15_000 });
    await expectLocator(page.getByText('I live in Lisbon and go climbing every Saturday')).toHaveCount(1);
  });
});

describe('a message sent as the connection drops', () => {
  it('is sent again after the reconnect and answered once', async () => {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await tab.context().addCookies(await page.context().cookies());
    let connections = 0;
    // Between the page and the server: the first connection loses the next message and then drops.
    await tab.routeWebSocket(/\/ws\/chat\//, (ws) => {
      const server = ws.connectToServer();
      const first = ++connections === 1;
      ws.onMessage((frame) => {
        if (first && String(frame).includes('Lost in transit')) {
          void ws.close({ code: 4000, reason: 'network trouble' });
          return;
        }
        server.send(frame);
      });
      server.onMessage((frame) => ws.send(frame));
    });
    await openChat(tab);
    const box = tab.getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('Lost in transit, then delivered');
    await box.press('Enter');
    await tab.getByText('Here is what I think about "Lost in transit, then delivered"').waitFor({ timeout: 20_000 });
    expect(connections).toBe(2);
    await expectLocator(
      tab.locator('.chat-row-human', { hasText: 'Lost in transit' }).getByText('sending...'),
    ).toHaveCount(0);
    await tab.close();
    // Stored once: a page straight from the server shows the message and its answer once each.
    await openChat(page);
    await page.getByText('Here is what I think about "Lost in transit, then delivered"').waitFor();
    await expectLocator(page.locator('.chat-row-human', { hasText: 'Lost in transit, then delivered' })).toHaveCount(1);
    await expectLocator(page.getByText('Here is what I think about "Lost in transit, then delivered"')).toHaveCount(1);
  });
});

describe('a connection that goes quiet, and a browser that goes offline', () => {
  it('says so within seconds; a message sent into it waits, then goes out once', { timeout: 60_000 }, async () => {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await tab.context().addCookies(await page.context().cookies());
    let connections = 0;
    let quiet = false;
    // Between the page and the server: once the message is sent, the first connection carries
    // nothing either way and never closes, as a dead network does.
    await tab.routeWebSocket(/\/ws\/chat\//, (ws) => {
      const server = ws.connectToServer();
      const first = ++connections === 1;
      ws.onMessage((frame) => {
        if (first && String(frame).includes('Into the void')) quiet = true;
        if (!(first && quiet)) server.send(frame);
      });
      server.onMessage((frame) => {
        if (!(first && quiet)) ws.send(frame);
      });
    });
    await openChat(tab);
    const box = tab.getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('Into the void, then delivered');
    await box.press('Enter');
    const mine = tab.locator('.chat-row-human', { hasText: 'Into the void, then delivered' });
    // Found dead within seconds: the message waits for the connection, with no typing dots.
    await mine.getByText('waiting for connection...').waitFor({ timeout: 8_000 });
    await expectLocator(tab.getByRole('status', { name: 'Assistant is typing' })).toHaveCount(0);
    await tab.getByText('Here is what I think about "Into the void, then delivered"').waitFor({ timeout: 20_000 });
    expect(connections).toBe(2);
    await expectLocator(mine).toHaveCount(1);

    // Offline: the badge and a note say so at once; back online, it reconnects by itself.
    await tab.context().setOffline(true);
    await tab.locator('.chat-status', { hasText: 'Offline' }).waitFor({ timeout: 5_000 });
    await tab.getByText('You are offline.', { exact: false }).waitFor();
    await expectLocator(box).toBeDisabled();
    await expectAccessible(tab, 'chat offline');
    await screenshot(tab, 'chat-offline');
    await tab.context().setOffline(false);
    await tab.locator('.chat-status', { hasText: 'Connected' }).waitFor({ timeout: 10_000 });
    await expectLocator(box).toBeEnabled({ timeout: 10_000 });
    await tab.close();
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
    await expectLocator(box).toBeEnabled({ timeout: 15_000 });
    fake.onJson((req) =>
      lastUser(req.messages).endsWith('Leo')
        ? {
            text: JSON.stringify({
              operations: [{ action: 'ADD', id: null, key: 'name', data: 'Is called Leo', memory_type: 'person' }],
            }),
          }
        : { text: '{"operations":[]}' },
    );
    await send('Leo');
    await page.getByText('Where do you live, and in which time zone?').waitFor();
    await expectAccessible(page, 'onboarding');
    await screenshot(page, 'onboarding');
    await openChat(phone, '/onboarding');
    await expectAccessible(phone, 'onboarding');
    await send('Lisbon, Europe/Lisbon');
    // The closing message stays readable under a notice, then the chat opens by itself.
    await Promise.all(
      [page, phone].map(async (on) => {
        await on.getByText("You're all set! Taking you to your chat...").waitFor({ timeout: 15_000 });
        await on.getByText('Thank you! You are all set.').waitFor();
        await expectPage(on).toHaveURL(/\/onboarding$/);
        await on.getByRole('button', { name: 'Go to chat now' }).waitFor();
        await expectAccessible(on, 'onboarding finished');
        await screenshot(on, 'onboarding-done');
      }),
    );
    await page.waitForURL((u) => u.pathname === '/chat', { timeout: 15_000 });
    await phone.waitForURL((u) => u.pathname === '/chat', { timeout: 15_000 });

    // What the interview taught Daybook links back to the answer it came from; the interview can be
    // reread, and new messages belong in the chat.
    await page.goto(`${app.baseUrl}/memories`);
    await page.getByRole('cell', { name: 'name', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Learned during onboarding' }).click();
    await page.waitForURL((u) => u.pathname === '/onboarding');
    await page.locator('.chat-row.is-highlighted', { hasText: 'Leo' }).waitFor();
    await page.getByText("You've finished onboarding.").waitFor();
    await expectLocator(page.getByRole('textbox', { name: 'Message', exact: true })).toHaveCount(0);
    await expectAccessible(page, 'onboarding reread');
    await screenshot(page, 'onboarding-reread');
    await page.getByRole('link', { name: 'Go to chat' }).click();
    await page.waitForURL((u) => u.pathname === '/chat');
  });
});

it('the chat works on a phone', async () => {
  await phone.goto(`${app.baseUrl}/chat`);
  await phone.getByText('Enjoy the climbing').waitFor({ timeout: 15_000 });
  expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  // The reminder can be put away for the rest of the session.
  await phone.getByRole('region', { name: 'Email verification' }).getByRole('button', { name: 'Dismiss' }).click();
  await phone.reload();
  await phone.getByText('Enjoy the climbing').waitFor({ timeout: 15_000 });
  await expectLocator(phone.getByRole('region', { name: 'Email verification' })).toHaveCount(0);
  await expectAccessible(phone, 'chat on a phone');
  await screenshot(phone, 'chat');

  // One long paragraph: under 12 lines on a desktop bubble, far more on a phone, where it folds.
  const paragraph = Array.from({ length: 11 }, (_, i) => `Sentence ${i + 1} of a long answer about the weekend.`).join(
    ' ',
  );
  fake.onChat(() => ({ text: paragraph, chunks: 8, delayMs: 20 }));
  const box = phone.getByRole('textbox', { name: 'Message', exact: true });
  await box.fill('Tell me everything about the weekend');
  await box.press('Enter');
  const answer = phone.locator('.chat-row-assistant', { hasText: 'Sentence 11 of a long answer' });
  // Streamed in front of the user, it stays open and can be folded once complete.
  await answer.getByRole('button', { name: 'Collapse' }).waitFor({ timeout: 15_000 });
  // Once the conversation moves on it folds, as every long answer is after a reload.
  fake.onChat(() => ({ text: 'Glad to help.' }));
  await box.fill('Thanks');
  await box.press('Enter');
  await answer.getByRole('button', { name: 'Read more...' }).waitFor({ timeout: 15_000 });
  await phone.getByText('Glad to help.').waitFor({ timeout: 15_000 });
  await phone.reload();
  await answer.getByRole('button', { name: 'Read more...' }).waitFor({ timeout: 15_000 });
  await expectAccessible(phone, 'chat with a folded answer');
  await screenshot(phone, 'chat-long-answer');

  // A table wider than the bubble keeps readable columns and scrolls sideways, as a code block does.
  const table = [
    '| Option | Where | When | What it costs |',
    '| --- | --- | --- | --- |',
    '| Climbing gym | Northside boulder hall | Saturday morning | 18 euros a session |',
    '| Coastal walk | From the harbour to the lighthouse | Sunday afternoon | Free |',
  ].join('\n');
  fake.onChat(() => ({ text: `Here are the options:\n\n${table}` }));
  await box.fill('Compare the options');
  await box.press('Enter');
  const wrapper = phone.locator('.chat-row-assistant .md-table', { hasText: 'Coastal walk' });
  await wrapper.waitFor({ timeout: 15_000 });
  const layout = await wrapper.evaluate((el) => ({
    scrolls: el.scrollWidth > el.clientWidth + 1,
    narrowest: Math.min(...Array.from(el.querySelectorAll('th'), (th) => th.getBoundingClientRect().width)),
  }));
  expect(layout.scrolls).toBe(true);
  expect(layout.narrowest).toBeGreaterThanOrEqual(96);
  expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  await expectAccessible(phone, 'chat with a wide table on a phone');
  await screenshot(phone, 'chat-table');
  const wide = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await wide.context().addCookies(await phone.context().cookies());
  await wide.goto(`${app.baseUrl}/chat`);
  await wide.locator('.chat-row-assistant', { hasText: 'Sentence 11 of a long answer' }).waitFor({ timeout: 15_000 });
  await expectLocator(
    wide.locator('.chat-row-assistant', { hasText: 'Sentence 11' }).getByRole('button', { name: /Read more|Collapse/ }),
  ).toHaveCount(0);
  await wide.close();
  await phone.close();
});

it('a message sent while an answer streams waits its turn, and a failed answer can be asked again', async () => {
  await openChat(page);
  fake.onChat((req) =>
    /slow/.test(lastUser(req.messages))
      ? { text: 'A slow, careful answer arriving piece by piece.', chunks: 8, delayMs: 300 }
      : { text: `Quick answer to "${lastUser(req.messages)}".`, chunks: 2, delayMs: 20 },
  );
  await send('A slow question first');
  await page.getByText('A slow, careful').waitFor({ timeout: 15_000 });
  await send('And a second one');
  const second = page.locator('.chat-row-human', { hasText: 'And a second one' });
  await second.getByText('waiting for the answers before it...').waitFor({ timeout: 15_000 });
  await expectAccessible(page, 'chat with a queued message');
  await screenshot(page, 'chat-queued');
  await page.getByText('Quick answer to "And a second one".').waitFor({ timeout: 15_000 });
  await expectLocator(second.getByText('waiting for the answers before it...')).toHaveCount(0);

  fake.onChat(() => ({ status: 500, body: '{"error":{"message":"overloaded"}}' }));
  await send('Plan my Sunday');
  // The note right under this question (an earlier test's failure, if any, keeps its own Retry).
  const noteOf = (on: Page) => on.locator('.chat-row-human:has-text("Plan my Sunday") + .chat-system');
  const ask = noteOf(page).getByRole('button', { name: 'Retry' });
  await ask.waitFor({ timeout: 15_000 });
  await expectAccessible(page, 'chat with Retry');
  await screenshot(page, 'chat-retry');
  const narrow = await browser.newPage({ viewport: { width: 360, height: 780 } });
  await narrow.context().addCookies(await page.context().cookies());
  await narrow.goto(`${app.baseUrl}/chat`);
  await noteOf(narrow).getByRole('button', { name: 'Retry' }).waitFor({ timeout: 15_000 });
  expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  await screenshot(narrow, 'chat-retry');
  await narrow.close();

  fake.onChat((req) => ({ text: `Quick answer to "${lastUser(req.messages)}".`, chunks: 2, delayMs: 20 }));
  await ask.click();
  await page.getByText('Quick answer to "Plan my Sunday".').waitFor({ timeout: 15_000 });
});

it('signing out in another tab takes the chat to sign in instead of reconnecting', async () => {
  // Each step has its own limit, so a slow or stuck one is named rather than the whole test timing out.
  const limit = { timeout: 20_000 };
  const step = async <T>(name: string, work: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`step "${name}" did not finish in 25 s`)), 25_000);
    });
    try {
      return await Promise.race([work, stuck]);
    } finally {
      clearTimeout(timer);
    }
  };
  await step('open the chat', page.goto(`${app.baseUrl}/chat`, limit));
  await step(
    'wait for the message box',
    page.getByRole('textbox', { name: 'Message', exact: true }).and(page.locator(':enabled')).waitFor(limit),
  );
  // Another tab of the same browser: the same session cookie.
  const tab = await step('open a context', browser.newContext({ viewport: { width: 1280, height: 860 } }));
  await step(
    'copy the cookies',
    page
      .context()
      .cookies()
      .then((cookies) => tab.addCookies(cookies)),
  );
  const other = await step('open a page', tab.newPage());
  await step('open memories', other.goto(`${app.baseUrl}/memories`, limit));
  await step('open the menu', other.getByRole('button', { name: /^Account menu for / }).click(limit));
  await step('sign out', other.getByRole('button', { name: 'Sign Out' }).click(limit));
  // The server closes the chat's socket with its session; the chat checks and goes to sign in.
  await step(
    'chat goes to sign in',
    page.waitForURL((u) => u.pathname === '/auth/login', limit),
  );
  await expectPage(page).toHaveURL((u) => u.searchParams.get('next') === '/chat');
  await step('close the context', tab.close());
}, 150_000);
