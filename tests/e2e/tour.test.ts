// The demo tour in Chromium against the real built app: the guest tour from Home to Finish Tour,
// and a new user's tour after signup, skipped or played to Start Onboarding. The tour clock runs 50x faster.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe.ts';
import { expectLocator } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, startApp } from './harness.ts';

const STAGES = ['welcome', 'daily_insight', 'research', 'wrap_up'];
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 360, height: 780 };

let app: RunningApp;
let browser: Browser;
let signupLink = '';
const errors: string[] = [];

beforeAll(async () => {
  [app, browser] = await Promise.all([
    startApp({}, (run) => {
      signupLink = createInviteLink(run);
    }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: DESKTOP });
  // Test-only speed setting read by the tour (see useTour.ts).
  await context.addInitScript(() => Object.assign(window, { __DAYBOOK_TOUR_TIME_SCALE__: 0.02 }));
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('401')) errors.push(m.text());
  });
  return { context, page };
}

const sidebar = (page: Page) => page.getByRole('complementary', { name: 'Tour guide' });
const compactProgress = (page: Page) => page.locator('.tour-progress-compact');

/** Waits until the stage has played and its button (Continue, Finish Tour or Start Onboarding) is enabled. */
async function waitForButton(page: Page, name: string) {
  const button = page.getByRole('button', { name, exact: true });
  await page.locator('.tour-continue:enabled', { hasText: name }).waitFor({ timeout: 10_000 });
  return button;
}

/** Waits for entrance animations and the dimming to finish, so screenshots show the settled page. */
const settled = (page: Page) =>
  page.waitForFunction(() =>
    document
      .getAnimations()
      .every((a) => a.effect?.getComputedTiming().iterations === Number.POSITIVE_INFINITY || a.playState !== 'running'),
  );

const noOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

describe('the guest tour', () => {
  // Four stages at two widths, each checked with axe-core.
  it('runs from Home through all four stages to Finish Tour, on desktop and phone widths', {
    timeout: 150_000,
  }, async () => {
    const { context, page } = await newPage();
    await page.goto(`${app.baseUrl}/`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Take the Tour' }).click();
    await page.waitForURL((u) => u.pathname === '/guest-tour');
    await page.getByRole('heading', { level: 1, name: 'Guest Tour' }).waitFor();
    await expectLocator(page.getByRole('link', { name: 'Start Onboarding' })).toHaveCount(0);

    for (const [index, stage] of STAGES.entries()) {
      const last = index === STAGES.length - 1;
      await sidebar(page)
        .getByText(`Step ${index + 1} of 4`)
        .waitFor();
      const button = await waitForButton(page, last ? 'Finish Tour' : 'Continue');
      await settled(page);
      await expectAccessible(page, `guest tour ${stage}`);
      await screenshot(page, `tour-guest-${stage}`);
      if (stage === 'research') {
        // The sample report opens like a real one, with its sources.
        await page.getByRole('button', { name: 'See the full report' }).click();
        await page
          .getByRole('list', { name: 'Sources' })
          .getByRole('link', { name: /Wikipedia/ })
          .waitFor();
        await expectAccessible(page, 'guest tour research report');
        await screenshot(page, 'tour-guest-research-report');
      }

      if (last) {
        // On a short screen the sidebar scrolls to the new features: "Step 4 of 4" stays in sight on
        // top of them, and the last feature keeps some room below it.
        await page.setViewportSize({ width: DESKTOP.width, height: 560 });
        const layout = await sidebar(page).evaluate((aside) => {
          const items = aside.querySelectorAll('.tour-features li');
          const lastItem = items[items.length - 1] as HTMLElement;
          lastItem.scrollIntoView({ block: 'nearest' });
          const box = aside.getBoundingClientRect();
          const step = aside.querySelector('.tour-step') as HTMLElement;
          const stepBox = step.getBoundingClientRect();
          const onTop = document.elementFromPoint(stepBox.left + 30, stepBox.bottom - 8);
          return {
            scrolled: aside.scrollTop,
            stepInside: stepBox.top >= box.top - 1 && stepBox.bottom <= box.bottom,
            stepOnTop: onTop !== null && step.contains(onTop),
            roomBelow: box.bottom - lastItem.getBoundingClientRect().bottom,
          };
        });
        expect(layout).toMatchObject({ stepInside: true, stepOnTop: true });
        expect(layout.scrolled).toBeGreaterThan(0);
        expect(layout.roomBelow).toBeGreaterThanOrEqual(12);
        await screenshot(page, 'tour-guest-wrap_up-short');
        await page.setViewportSize(DESKTOP);
      }

      await page.setViewportSize(PHONE);
      await expectLocator(sidebar(page)).toBeHidden();
      await expectLocator(compactProgress(page)).toContainText(`Step ${index + 1} of 4`);
      expect(await noOverflow(page)).toBeLessThanOrEqual(PHONE.width);
      await settled(page);
      await expectAccessible(page, `guest tour ${stage}`);
      await screenshot(page, `tour-guest-${stage}`);
      await page.setViewportSize(DESKTOP);

      await button.click();
    }
    await page.waitForURL((u) => u.pathname === '/');
    await page.getByRole('heading', { level: 1, name: 'Welcome to Daybook' }).waitFor();
    await context.close();
  });

  it('hides the sidebar at 768 px and shows it at 1280 px', async () => {
    const { context, page } = await newPage();
    await page.setViewportSize({ width: 768, height: 900 });
    await page.goto(`${app.baseUrl}/guest-tour`);
    await page.getByRole('heading', { level: 1, name: 'Guest Tour' }).waitFor();
    await expectLocator(sidebar(page)).toBeHidden();
    await expectLocator(compactProgress(page)).toBeVisible();
    await page.setViewportSize({ width: 1280, height: 900 });
    await sidebar(page).getByText('Key Features').waitFor();
    await expectLocator(sidebar(page)).toBeVisible();
    await expectLocator(compactProgress(page)).toBeHidden();
    await context.close();
  });
});

describe('the new-user tour', () => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ({ context, page } = await newPage());
    await page.goto(signupLink);
    await page.getByLabel('Email').fill('maya@example.com');
    await page.getByLabel('Password', { exact: true }).fill('a quiet morning walk');
    await page.getByLabel('Confirm Password').fill('a quiet morning walk');
    await page.getByRole('button', { name: 'Sign Up' }).click();
  });

  afterAll(async () => {
    await context?.close();
    // No script errors on any tour page.
    expect(errors).toEqual([]);
  });

  it('starts after signup on /demo-tour, and Start Onboarding skips to /onboarding', async () => {
    await page.waitForURL((u) => u.pathname === '/demo-tour');
    await page.getByRole('heading', { level: 1, name: 'Demo Tour' }).waitFor();
    await waitForButton(page, 'Continue');
    await settled(page);
    await expectAccessible(page, 'new-user tour welcome');
    await screenshot(page, 'tour-new-user-welcome');
    await page.getByRole('link', { name: 'Start Onboarding' }).click();
    await page.waitForURL((u) => u.pathname === '/onboarding');
  });

  it('played to the end, the Start Onboarding button leads to /onboarding', async () => {
    await page.goto(`${app.baseUrl}/demo-tour`);
    await page.getByRole('heading', { level: 1, name: 'Demo Tour' }).waitFor();
    for (let step = 1; step < STAGES.length; step++) {
      await sidebar(page).getByText(`Step ${step} of 4`).waitFor();
      await expectLocator(page.getByRole('link', { name: 'Start Onboarding' })).toBeVisible();
      await waitForButton(page, 'Continue');
      // Continue has focus once it turns on: Enter moves on.
      await page.keyboard.press('Enter');
    }
    await sidebar(page).getByText('Step 4 of 4').waitFor();
    await expectLocator(page.getByRole('link', { name: 'Start Onboarding' })).toHaveCount(0);
    const finish = await waitForButton(page, 'Start Onboarding');
    await settled(page);
    await expectAccessible(page, 'new-user tour wrap_up');
    await screenshot(page, 'tour-new-user-wrap_up');
    await finish.click();
    await page.waitForURL((u) => u.pathname === '/onboarding');
  });

  it('"Skip for now" on the onboarding ends it and opens the chat, which greets the user', async () => {
    const skip = page.getByRole('button', { name: 'Skip for now' });
    await skip.waitFor();
    await page.getByRole('heading', { level: 1, name: 'Getting to know you' }).waitFor();
    await settled(page);
    await expectAccessible(page, 'onboarding with Skip for now');
    await screenshot(page, 'onboarding-skip');
    await page.setViewportSize(PHONE);
    await expectLocator(skip).toBeVisible();
    expect(await noOverflow(page)).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(page, 'onboarding with Skip for now');
    await screenshot(page, 'onboarding-skip');
    await page.setViewportSize(DESKTOP);

    await skip.click();
    await page.waitForURL((u) => u.pathname === '/chat');
    await page.getByText('Welcome to your chat!').waitFor({ timeout: 15_000 });
    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me.onboarded).toBe(true);
    // The interview can be reread; it is over, so there is nothing to skip.
    await page.goto(`${app.baseUrl}/onboarding`);
    await page.getByText("You've finished onboarding.").waitFor();
    await expectLocator(skip).toHaveCount(0);
  });
});
