// The web app shell in a real browser against the real, built app.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectPage } from './expect.ts';
import { launchBrowser, type RunningApp, screenshot, startApp } from './harness.ts';

let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  [app, browser] = await Promise.all([
    startApp({
      CREATOR_NAME: 'Ana Lima',
      CREATOR_BIO: 'I build calm software for busy people.',
      CREATOR_EMAIL: 'ana@example.org',
      CREATOR_LINKS:
        'GitHub=https://github.com/ana,LinkedIn=https://linkedin.com/in/ana,Mastodon=https://m.example/@ana,Blog=https://ana.example.org',
    }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe.each([
  ['desktop', 1280],
  ['phone', 360],
])('on a %s', (_label, width) => {
  let page: Page;
  const errors: string[] = [];
  beforeAll(async () => {
    page = await browser.newPage({ viewport: { width, height: 800 } });
    page.on('pageerror', (e) => errors.push(e.message));
    // A blocked eval (zod's JIT probe, say) is reported as a CSP violation, not as a console error.
    await page.exposeFunction('__reportCspViolation', (what: string) => errors.push(`CSP violation: ${what}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { __reportCspViolation(what: string): void }).__reportCspViolation(
          `${e.violatedDirective} ${e.blockedURI}`,
        );
      });
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('401')) errors.push(m.text());
    });
  });
  afterAll(async () => {
    await page.close();
    // No script errors and no CSP violations on any page.
    expect(errors).toEqual([]);
  });

  it('home renders the welcome, the feature cards, and the visitor actions', async () => {
    await page.goto(`${app.baseUrl}/`);
    await page.getByRole('heading', { level: 1, name: 'Welcome to Daybook' }).waitFor();
    await page.getByRole('link', { name: 'Get Started' }).waitFor();
    await expectLocator(page.getByRole('article')).toHaveCount(3);
    await expectLocator(
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Take the Tour' }),
    ).toHaveAttribute('href', '/guest-tour');
    // Nothing is wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await expectAccessible(page, 'home');
    await screenshot(page, 'home');
  });

  it('an unknown path shows Page Not Found, and Go Home leads home', async () => {
    await page.goto(`${app.baseUrl}/this/does/not/exist`);
    await page.getByRole('heading', { name: 'Page Not Found' }).waitFor();
    await expectPage(page).toHaveTitle('Page Not Found · Daybook');
    await expectAccessible(page, 'not found');
    await screenshot(page, 'not-found');
    await page.getByRole('link', { name: 'Go Home' }).click();
    await page.getByRole('heading', { name: 'Welcome to Daybook' }).waitFor();
    await expectPage(page).toHaveURL((u) => u.pathname === '/');
    // The new page's title, set and announced politely after the navigation.
    await expectPage(page).toHaveTitle('Home · Daybook');
    const announcer = page.getByTestId('page-announcer');
    await expectLocator(announcer).toHaveAttribute('aria-live', 'polite');
    await expectLocator(announcer).toHaveText('Home · Daybook');
  });

  it('a deep link to /memories goes to sign in, keeping the path and query', async () => {
    await page.goto(`${app.baseUrl}/memories?show_deleted=true`);
    await page.waitForURL((url) => url.pathname === '/auth/login');
    await expectPage(page).toHaveURL((u) => u.searchParams.get('next') === '/memories?show_deleted=true');
    await page.getByRole('heading', { name: 'Sign In' }).waitFor();
    // The cursor starts in the email field.
    await expectLocator(page.getByLabel('Email')).toBeFocused();
    await expectAccessible(page, 'sign in');
    await screenshot(page, 'login-redirect');
  });

  it('the about page shows the configured creator', async () => {
    await page.goto(`${app.baseUrl}/ana-lima`);
    await page.getByRole('heading', { level: 1, name: 'Ana Lima' }).waitFor();
    await expectPage(page).toHaveTitle('Ana Lima · Daybook');
    await expectLocator(page.getByText('I build calm software for busy people.')).toBeVisible();
    await expectLocator(page.getByRole('list', { name: 'Profiles' }).getByRole('link')).toHaveCount(4);
    await expectLocator(page.getByRole('link', { name: 'Request an invite' })).toHaveAttribute(
      'href',
      /^mailto:ana@example.org/,
    );
    const footer = page.getByRole('contentinfo');
    await expectLocator(footer.getByRole('link', { name: 'Ana Lima' })).toHaveAttribute('href', '/ana-lima');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await expectAccessible(page, 'about');
    await screenshot(page, 'about');
  });
});

it('the server answers unknown API paths with JSON, not the page', async () => {
  const res = await fetch(`${app.baseUrl}/api/does-not-exist/`);
  expect(res.status).toBe(404);
  expect(await res.json()).toEqual({ error: 'No route for GET /api/does-not-exist/', code: 'not_found' });
});
