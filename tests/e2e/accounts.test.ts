// A new user's whole account journey in Chromium: invite link from the operator command, signup,
// verification mail over real SMTP, sign in and out, password change (another browser is told why
// it was signed out), password reset by mail; an invite bound to an address, and a used one.
// Run alone: npx vite build apps/web --logLevel warn && npx vitest run --project e2e tests/e2e/accounts.test.ts
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, startApp } from './harness.ts';

let smtp: TestSmtp;
let app: RunningApp;
let browser: Browser;
let signupLink = '';
let boundLink = '';

const EMAIL = 'sam.rivera@example.com';
const FIRST_PASSWORD = 'mornings are for coffee';
const SECOND_PASSWORD = 'evenings are for books';
const THIRD_PASSWORD = 'weekends are for hiking';
const BOUND_EMAIL = 'lee.invited@example.com';

beforeAll(async () => {
  smtp = await startSmtp();
  [app, browser] = await Promise.all([
    startApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Daybook <hello@daybook.test>' }, (run) => {
      signupLink = createInviteLink(run, '--uses', '2', '--expires', '7d');
      boundLink = createInviteLink(run, '--email', BOUND_EMAIL);
    }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await smtp?.close();
});

async function linkFrom(to: string, subject: RegExp, after: number, pathPart: string) {
  const mail = await smtp.waitFor(to, { subject, after });
  const link = mail.links.find((l) => l.includes(pathPart));
  if (!link) throw new Error(`no ${pathPart} link in: ${mail.text}`);
  return link;
}

async function signOut(page: Page) {
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('button', { name: /Account menu/ }).click();
  await nav.getByRole('button', { name: 'Sign Out' }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await page.getByRole('link', { name: 'Sign In' }).first().waitFor();
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${app.baseUrl}/auth/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign In' }).click();
}

describe('a new user, from invite link to a signed-in session', () => {
  let page: Page;
  beforeAll(async () => {
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  });
  afterAll(() => page.close());

  it('signs up through the invite link and lands on the demo tour', async () => {
    expect(signupLink).toMatch(/\/auth\/signup\?itoken=/);
    const before = smtp.messages.length;
    await page.goto(signupLink.replace(/^https?:\/\/[^/]+/, app.baseUrl));
    await page.getByRole('heading', { name: 'Create Account' }).waitFor();
    // The link carries a usable token: nobody is asked to type it.
    await page.getByText("You're invited. Enter your email and choose a password to create your account.").waitFor();
    await expectLocator(page.getByLabel('Invite Token')).toHaveCount(0);
    await expectAccessible(page, 'signup');
    await screenshot(page, 'signup');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(FIRST_PASSWORD);
    await page.getByLabel('Confirm Password').fill(FIRST_PASSWORD);
    await page.getByRole('button', { name: 'Sign Up' }).click();
    await page.waitForURL((u) => u.pathname === '/demo-tour');
    await linkFrom(EMAIL, /Confirm your email/, before, '/auth/verify-email/');
  });

  it('cannot sign in before verifying, and is told how to get a new link', async () => {
    await signOut(page);
    await signIn(page, EMAIL, FIRST_PASSWORD);
    await page.getByText('Your email address has not been verified yet.').waitFor();
    await expectLocator(page.getByRole('link', { name: /verification/i }).first()).toHaveAttribute(
      'href',
      /^\/auth\/resend-verification/,
    );
    await expectAccessible(page, 'login-unverified');
    await screenshot(page, 'login-unverified');
  });

  it('verifies the address with the mailed link', async () => {
    const link = await linkFrom(EMAIL, /Confirm your email/, 0, '/auth/verify-email/');
    await page.goto(link);
    await page.getByText('Email Verified!').waitFor();
    await expectAccessible(page, 'verify-email');
    await screenshot(page, 'verify-email');
    await page.waitForURL((u) => u.pathname === '/auth/login', { timeout: 10_000 });
  });

  it('opening the link again says the address is verified already, and offers sign-in', async () => {
    const link = await linkFrom(EMAIL, /Confirm your email/, 0, '/auth/verify-email/');
    await page.goto(link);
    await page.getByRole('heading', { name: 'Email Already Verified' }).waitFor();
    await expectLocator(page.getByText('Verification Failed')).toHaveCount(0);
    await expectAccessible(page, 'verify-email-again');
    await screenshot(page, 'verify-email-again');
    await page.setViewportSize({ width: 360, height: 780 });
    await expectAccessible(page, 'verify-email-again');
    await screenshot(page, 'verify-email-again');
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.getByRole('main').getByRole('link', { name: 'Sign In' }).click();
    await page.waitForURL((u) => u.pathname === '/auth/login');
  });

  it('signing up again with the address says "check your email" and mails the owner', async () => {
    const before = smtp.messages.length;
    await page.goto(signupLink.replace(/^https?:\/\/[^/]+/, app.baseUrl));
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill('a different password 7');
    await page.getByLabel('Confirm Password').fill('a different password 7');
    await page.getByRole('button', { name: 'Sign Up' }).click();
    await page.getByRole('heading', { name: 'Check Your Email' }).waitFor();
    await expectLocator(page.getByText('A user is already registered')).toHaveCount(0);
    await expectAccessible(page, 'signup-existing');
    await screenshot(page, 'signup-existing');
    await page.setViewportSize({ width: 360, height: 780 });
    await expectAccessible(page, 'signup-existing');
    await screenshot(page, 'signup-existing');
    await page.setViewportSize({ width: 1280, height: 860 });
    await smtp.waitFor(EMAIL, { subject: /already have a Daybook account/, after: before });
  });

  it('a wrong password shows the server message; the right one signs in', async () => {
    await signIn(page, EMAIL, 'not my password');
    await page.getByText('The email address and/or password you specified are not correct.').waitFor();
    await expectAccessible(page, 'login-error');
    await screenshot(page, 'login-error');
    await signIn(page, EMAIL, FIRST_PASSWORD);
    // Not interviewed yet: the first sign-in lands on the onboarding chat, and "Skip for now" ends it
    // for good (the next sign-ins land on Home).
    await page.waitForURL((u) => u.pathname === '/onboarding');
    await page.getByRole('button', { name: 'Skip for now' }).click();
    await page.waitForURL((u) => u.pathname === '/chat');
  });

  it('changes the password and is sent to the profile; another browser is signed out and told why', async () => {
    // The same account, open in the chat of another browser.
    const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const otherPage = await other.newPage();
    await signIn(otherPage, EMAIL, FIRST_PASSWORD);
    await otherPage.waitForURL((u) => u.pathname === '/');
    await otherPage.goto(`${app.baseUrl}/chat`);
    // Connected: the chat's socket is what hears the session end.
    const box = otherPage.getByRole('textbox', { name: 'Message', exact: true });
    await expectLocator(box).toBeEnabled({ timeout: 15_000 });

    await page.goto(`${app.baseUrl}/auth/change-password`);
    // A wrong current password is named as such, and Try Again brings the form back.
    await page.getByLabel('Current Password').fill('not my password at all');
    await page.getByLabel('New Password', { exact: true }).fill(SECOND_PASSWORD);
    await page.getByLabel('Confirm New Password').fill(SECOND_PASSWORD);
    await page.getByRole('button', { name: /Change Password/i }).click();
    await page.getByRole('heading', { name: 'Password Change Failed' }).waitFor();
    await page.getByText('Your current password is incorrect.').waitFor();
    await page.getByRole('button', { name: 'Try Again' }).click();
    await page.getByLabel('Current Password').fill(FIRST_PASSWORD);
    await page.getByLabel('New Password', { exact: true }).fill(SECOND_PASSWORD);
    await page.getByLabel('Confirm New Password').fill(SECOND_PASSWORD);
    await page.getByRole('button', { name: /Change Password/i }).click();
    await page.getByText('Password Changed Successfully!').waitFor();
    await expectAccessible(page, 'change-password-success');
    await screenshot(page, 'change-password-success');
    await page.waitForURL((u) => u.pathname === '/profile', { timeout: 10_000 });

    // The other browser's chat was closed with its session: it is on the sign-in page, which says why.
    await otherPage.waitForURL((u) => u.pathname === '/auth/login', { timeout: 15_000 });
    const notice = otherPage.getByRole('status').filter({ hasText: 'You were signed out' });
    await notice.waitFor();
    await expectLocator(notice).toHaveText(
      'You were signed out because your password was changed. Sign in with your new password.',
    );
    await expectAccessible(otherPage, 'login-password-changed');
    await screenshot(otherPage, 'login-password-changed');
    await otherPage.setViewportSize({ width: 360, height: 780 });
    expect(await otherPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(otherPage, 'login-password-changed');
    await screenshot(otherPage, 'login-password-changed');
    // Signed in again with the new password, it is back in the chat it was in, and the notice is gone.
    await otherPage.getByLabel('Email').fill(EMAIL);
    await otherPage.getByLabel('Password', { exact: true }).fill(SECOND_PASSWORD);
    await otherPage.getByRole('button', { name: 'Sign In' }).click();
    await otherPage.waitForURL((u) => u.pathname === '/chat');
    await otherPage.goto(`${app.baseUrl}/auth/login`);
    await otherPage.waitForURL((u) => u.pathname !== '/auth/login');
    await other.close();
  });

  it('signs out, then resets the forgotten password by mail and signs in with the new one', async () => {
    await signOut(page);
    const before = smtp.messages.length;
    await page.goto(`${app.baseUrl}/auth/forgot-password`);
    await page.getByLabel('Email').fill(EMAIL);
    await expectAccessible(page, 'forgot password');
    await page.getByRole('button', { name: 'Reset Password' }).click();
    await page.getByText('Password reset email sent. Please check your inbox.').waitFor();
    const link = await linkFrom(EMAIL, /Reset your Daybook password/, before, '/auth/reset-password/');
    await page.waitForURL((u) => u.pathname === '/auth/login', { timeout: 10_000 });

    await page.goto(link);
    await page.getByLabel('New Password', { exact: true }).fill(THIRD_PASSWORD);
    await page.getByLabel('Confirm New Password').fill(THIRD_PASSWORD);
    await expectAccessible(page, 'reset-password');
    await screenshot(page, 'reset-password');
    await page.getByRole('button', { name: /reset|save|set/i }).click();
    await page.getByText('Your password has been reset.').waitFor();

    await signIn(page, EMAIL, SECOND_PASSWORD);
    await page.getByText('The email address and/or password you specified are not correct.').waitFor();
    await signIn(page, EMAIL, THIRD_PASSWORD);
    await page.waitForURL((u) => u.pathname === '/');
    await page.getByRole('link', { name: 'Begin Chat' }).waitFor();
  });

  it('pauses daily messages from the menu, and the setting sticks', async () => {
    await page.getByRole('button', { name: /Account menu/ }).click();
    const toggle = page
      .getByRole('switch', { name: /Pause daily messages/ })
      .or(page.getByRole('checkbox', { name: /Pause daily messages/ }));
    // Listen before clicking: the save can answer before a listener added afterwards would exist.
    const saved = page.waitForResponse((r) => r.url().endsWith('/api/users/me/') && r.request().method() === 'PATCH');
    await toggle.click();
    await saved;
    await expectLocator(toggle).toHaveAttribute('aria-checked', 'true');
    await expectAccessible(page, 'user-menu');
    await screenshot(page, 'user-menu');
    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me.is_daily_message_paused).toBe(true);
  });
});

describe('a new user who verifies while still signed in (signup signs them in)', () => {
  const KIM = 'kim.park@example.com';
  const KIM_PASSWORD = 'tea before anything else';

  it('is reminded to verify, gets a new link, and verifies it without signing out', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const before = smtp.messages.length;
    await page.goto(signupLink.replace(/^https?:\/\/[^/]+/, app.baseUrl));
    await page.getByLabel('Email').fill(KIM);
    await page.getByLabel('Password', { exact: true }).fill(KIM_PASSWORD);
    await page.getByLabel('Confirm Password').fill(KIM_PASSWORD);
    await page.getByRole('button', { name: 'Sign Up' }).click();
    await page.waitForURL((u) => u.pathname === '/demo-tour');
    const link = await linkFrom(KIM, /Confirm your email/, before, '/auth/verify-email/');

    const reminder = page.getByRole('region', { name: 'Email verification' });
    await reminder
      .getByText(`Please verify your email address. We sent a link to ${KIM}; you will need it to sign in next time.`)
      .waitFor();
    // The tour still fits the screen under the nav bar and the reminder.
    await page.getByRole('button', { name: 'Continue' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(860);
    await expectAccessible(page, 'verify-reminder');
    await screenshot(page, 'verify-reminder');
    await page.setViewportSize({ width: 360, height: 780 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(page, 'verify-reminder');
    await screenshot(page, 'verify-reminder');
    await page.setViewportSize({ width: 1280, height: 860 });

    // The server mails at most one link per address every 3 minutes, and says so; the first link is the one to use.
    const resent = page.waitForResponse((r) => r.url().endsWith('/api/auth/verification/resend/'));
    await reminder.getByRole('button', { name: 'Resend' }).click();
    expect((await resent).status()).toBe(200);
    await reminder.getByText('We sent one a moment ago; you can ask again in 3 minutes.').first().waitFor();
    await expectLocator(reminder.getByRole('button', { name: 'Sent!' })).toHaveCount(0);
    await expectAccessible(page, 'verify-reminder-throttled');
    await screenshot(page, 'verify-reminder-throttled');
    await page.setViewportSize({ width: 360, height: 780 });
    await expectAccessible(page, 'verify-reminder-throttled');
    await screenshot(page, 'verify-reminder-throttled');
    await page.setViewportSize({ width: 1280, height: 860 });

    // Following the link while signed in verifies the address (it used to send the user home unverified).
    await page.goto(link.replace(/^https?:\/\/[^/]+/, app.baseUrl));
    await page.getByText('Email Verified!').waitFor();
    await expectLocator(reminder).toHaveCount(0);
    // Not interviewed yet: on to the onboarding chat.
    await page.waitForURL((u) => u.pathname === '/onboarding', { timeout: 10_000 });
    await expectLocator(reminder).toHaveCount(0);
    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me.email_verified).toBe(true);

    // And the next sign-in works: to the interview again, until it is done or skipped.
    await signOut(page);
    await signIn(page, KIM, KIM_PASSWORD);
    await page.waitForURL((u) => u.pathname === '/onboarding');
    await page.getByRole('button', { name: 'Skip for now' }).click();
    await page.waitForURL((u) => u.pathname === '/chat');
    await signOut(page);
    await signIn(page, KIM, KIM_PASSWORD);
    await page.waitForURL((u) => u.pathname === '/');
    await page.getByRole('link', { name: 'Begin Chat' }).waitFor();
    await page.close();
  });
});

describe('an invite bound to an address', () => {
  it('fills in and locks the address, asks for no token, and signs up', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(boundLink.replace(/^https?:\/\/[^/]+/, app.baseUrl));
    const email = page.getByLabel('Email');
    await email.waitFor();
    await expectLocator(email).toHaveValue(BOUND_EMAIL);
    await expectLocator(email).toBeEditable({ editable: false });
    await page.getByText('This invite is for this address only, so it cannot be changed.').waitFor();
    await expectLocator(page.getByLabel('Invite Token')).toHaveCount(0);
    await expectLocator(page.getByText(/invite token/i)).toHaveCount(0);
    await expectAccessible(page, 'signup-bound');
    await screenshot(page, 'signup-bound');
    await page.setViewportSize({ width: 360, height: 780 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(page, 'signup-bound');
    await screenshot(page, 'signup-bound');

    await page.getByLabel('Password', { exact: true }).fill('lanterns in the garden');
    await page.getByLabel('Confirm Password').fill('lanterns in the garden');
    await page.getByRole('button', { name: 'Sign Up' }).click();
    await page.waitForURL((u) => u.pathname === '/demo-tour');
    const me = await page.evaluate(() => fetch('/api/users/me/').then((r) => r.json()));
    expect(me.email).toBe(BOUND_EMAIL);
    await context.close();
  });

  it('once used, the link says so and whom to ask for a new one', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(boundLink.replace(/^https?:\/\/[^/]+/, app.baseUrl));
    const notice = page.getByRole('alert');
    await notice.getByText("This invite link can't be used.").waitFor();
    await notice.getByText('This invite has already been used.').waitFor();
    await notice.getByText('Need a new invite? Ask Daybook Maintainers, who runs this Daybook.').waitFor();
    await expectLocator(page.getByLabel('Invite Token')).toHaveValue('');
    await expectAccessible(page, 'signup-used-invite');
    await screenshot(page, 'signup-used-invite');
    await page.setViewportSize({ width: 360, height: 780 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(page, 'signup-used-invite');
    await screenshot(page, 'signup-used-invite');
    await context.close();
  });
});

it('the sign-in page and the forgot-password page are usable on a phone', async () => {
  const page = await browser.newPage({ viewport: { width: 360, height: 780 } });
  for (const path of ['/auth/login', '/auth/signup', '/auth/forgot-password', '/auth/resend-verification']) {
    await page.goto(`${app.baseUrl}${path}`);
    await page.getByRole('button').last().waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(page, path.slice(1).replace(/\//g, '-'));
    await screenshot(page, path.slice(1).replace(/\//g, '-'));
  }
  await page.close();
});
