// A user's own data in Chromium against the real server: download it all as one file from the
// profile page, then delete the account with the password; signing in again then fails.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectPage, expectToPass } from './expect.ts';
import {
  createInviteLink,
  launchBrowser,
  type RunningApp,
  SCREENSHOT_DIR,
  screenshot,
  signUpInBrowser,
  startApp,
} from './harness.ts';

const EMAIL = 'robin.okafor@example.com';
const PASSWORD = 'tea before sunrise';

let smtp: TestSmtp;
let app: RunningApp;
let browser: Browser;
let page: Page;
let signupLink = '';

beforeAll(async () => {
  smtp = await startSmtp();
  [app, browser] = await Promise.all([
    startApp({ SMTP_URL: smtp.url }, (run) => {
      signupLink = createInviteLink(run);
    }),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  await signUpInBrowser(page, signupLink.replace(/^https?:\/\/[^/]+/, app.baseUrl), EMAIL, PASSWORD);
  // A verified address, so the account can sign in with its password (and, once deleted, cannot).
  const mail = await smtp.waitFor(EMAIL, { subject: /Confirm your email/ });
  const link = mail.links.find((l) => l.includes('/auth/verify-email/'));
  if (!link) throw new Error('no verification link');
  await page.goto(link);
  await page.getByText('Email Verified!').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await smtp?.close();
});

async function signIn(email: string, password: string) {
  await page.goto(`${app.baseUrl}/auth/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign In' }).click();
}

/** Calls the product API from the page, as the signed-in user. */
async function api(method: string, path: string, body?: unknown) {
  return page.evaluate(
    async ([m, p, b]) => {
      const csrf =
        document.cookie
          .split('; ')
          .find((c) => c.startsWith('csrftoken='))
          ?.split('=')[1] ?? '';
      const res = await fetch(p as string, {
        method: m as string,
        headers: { 'Content-Type': 'application/json', 'X-CSRFToken': csrf },
        body: b === undefined ? undefined : JSON.stringify(b),
      });
      return res.status;
    },
    [method, path, body] as const,
  );
}

/** The whole page from its top at 1280 and 360 px wide (a dialog: what the screen shows). */
async function shots(name: string, { dialogOpen = false } = {}) {
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: width === 360 ? 780 : 900 });
    await expectAccessible(page, name);
    if (dialogOpen) {
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${width}.png`), animations: 'disabled' });
    } else {
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, name);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

const dataSection = () => page.getByRole('region', { name: 'Your data' });
const dialog = () => page.getByRole('alertdialog', { name: 'Delete your account?' });

describe('your data on the profile page', () => {
  it('stores something to take away (signup signed the new account in)', async () => {
    expect(await api('POST', '/api/memories/', { key: 'favourite tea', data: 'Assam, strong' })).toBe(201);
    expect(await api('PATCH', '/api/users/me/', { time_zone: 'Africa/Lagos', daily_message_time: '06:45' })).toBe(200);
  });

  it('downloads everything as one JSON file', async () => {
    await page.goto(`${app.baseUrl}/profile`);
    await dataSection().getByRole('button', { name: 'Download my data' }).waitFor();
    await shots('account-data-profile');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dataSection().getByRole('button', { name: 'Download my data' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^daybook-export-\d{4}-\d{2}-\d{2}\.json$/);
    const doc = JSON.parse(await readFile((await download.path()) as string, 'utf8'));
    expect(doc).toMatchObject({
      format: 'daybook-export',
      version: 1,
      account: {
        email: EMAIL,
        email_addresses: [{ email: EMAIL, primary: true, verified: true }],
        settings: { time_zone: 'Africa/Lagos', daily_message: { time: '06:45', paused: false } },
      },
      memories: [{ key: 'favourite tea', data: 'Assam, strong', deleted_at: null }],
      calendar_connections: [],
      model_usage: [],
    });
    expect(JSON.stringify(doc)).not.toContain(PASSWORD);
    await dataSection()
      .getByText(/^Downloaded daybook-export-.*\.json \(\d+(\.\d)? (B|KB)\)\.$/)
      .waitFor();
    await shots('account-data-downloaded');
    // The two sections close up, as a phone shows them.
    await page.setViewportSize({ width: 360, height: 780 });
    await dataSection().screenshot({ path: path.join(SCREENSHOT_DIR, 'account-data-section-360.png') });
    await page
      .getByRole('region', { name: 'Danger zone' })
      .screenshot({ path: path.join(SCREENSHOT_DIR, 'account-data-danger-360.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('refuses a wrong password in the delete dialog, and keeps the account', async () => {
    await page.getByRole('button', { name: 'Delete account' }).click();
    await dialog().waitFor();
    await expectLocator(dialog()).toContainText('memories, including deleted ones');
    await shots('account-data-delete-dialog', { dialogOpen: true });
    await dialog().getByLabel('Enter your password to confirm').fill('not my password');
    await dialog().getByRole('button', { name: 'Delete my account' }).click();
    await dialog().getByText('The password is not correct.').waitFor();
    await shots('account-data-delete-wrong', { dialogOpen: true });
    expect(await api('GET', '/api/users/me/')).toBe(200);
  });

  it('deletes the account with the right password and lands on sign-in with a notice', async () => {
    await dialog().getByLabel('Enter your password to confirm').fill(PASSWORD);
    await dialog().getByRole('button', { name: 'Delete my account' }).click();
    await page.waitForURL((u) => u.pathname === '/auth/account-deleted');
    await page.getByText('Your account and everything in it were deleted.').waitFor();
    await page.getByRole('heading', { name: 'Sign In' }).waitFor();
    await shots('account-data-deleted');
    expect(await api('GET', '/api/users/me/')).toBe(401);
  });

  it('cannot sign in again', async () => {
    await signIn(EMAIL, PASSWORD);
    await page.getByText('The email address and/or password you specified are not correct.').waitFor();
    await expectPage(page).toHaveURL((u) => u.pathname === '/auth/login');
    // The refused sign-in's request line is in the log (written when it completed, and read from the
    // server's output a little later): everything logged about it is there, and none of it names the address.
    await expectToPass(() => expect(app.logs()).toMatch(/ POST \/_allauth\/browser\/v1\/auth\/login 400 /));
    expect(app.logs()).not.toContain(EMAIL);
  });
});
