// Running Daybook from the browser, in Chromium against the built app: the first-run invite from the
// server's log makes the administrator; they invite someone by email from the Admin page, that person
// signs up through the mailed link, and the administrator deactivates them, which signs them out;
// then they check the model server (a replayed vLLM started without tool calls).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReplayServer, startReplayServer } from '../helpers/model-replay/server.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectPage, expectToPass } from './expect.ts';
import { launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

let smtp: TestSmtp;
let replay: ReplayServer;
let app: RunningApp;
let browser: Browser;

const ADMIN = 'ada.admin@example.com';
const FRIEND = 'friend.invited@example.com';
const PASSWORD = 'a long admin password';
const FRIEND_PASSWORD = 'friends have passwords too';

beforeAll(async () => {
  [smtp, replay] = await Promise.all([startSmtp(), startReplayServer()]);
  [app, browser] = await Promise.all([
    startApp({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Daybook <hello@daybook.test>',
      LLM_BASE_URL: replay.url('vllm-old'),
      LLM_MODEL: 'Qwen/Qwen2.5-14B-Instruct',
      LLM_MAX_RETRIES: '0',
    }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await smtp?.close();
  await replay?.close();
});

/** The first-run invite link the server logs (once it listens) when it has no accounts. */
async function firstRunLink(): Promise<string> {
  const find = () => /Create the first one with this invite link[^:]*: (http\S+?)["\s]/.exec(app.logs())?.[1];
  // The harness keeps the server's output as it arrives: wait until the line is in it.
  await expectToPass(
    () => {
      if (!find()) throw new Error(`no first-run invite in the log:\n${app.logs()}`);
    },
    { timeout: 15_000 },
  );
  return find() as string;
}

async function mailedLink(to: string, subject: RegExp, part: string, after = 0) {
  const mail = await smtp.waitFor(to, { subject, after });
  const link = mail.links.find((l) => l.includes(part));
  if (!link) throw new Error(`no ${part} link in: ${mail.text}`);
  return link;
}

describe('the Admin page', () => {
  let adminContext: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await adminContext.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    page = await adminContext.newPage();
  });
  afterAll(() => adminContext.close());

  it('belongs to the account made with the first-run invite', async () => {
    const link = await firstRunLink();
    await signUpInBrowser(page, link, ADMIN, PASSWORD);
    await page.goto(await mailedLink(ADMIN, /Confirm your email/, '/auth/verify-email/'));
    await page.getByRole('heading', { name: 'Email Verified!' }).waitFor();
    // The verified page moves on by itself.
    await page.waitForURL((u) => !u.pathname.startsWith('/auth/verify-email'));

    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: /Account menu/ }).click();
    await nav.getByRole('link', { name: 'Admin', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/admin');
    await page.getByRole('heading', { name: 'Admin', exact: true }).waitFor();
    // The first-run invite itself, used up by this account.
    const row = page.getByRole('row').filter({ hasText: ADMIN });
    await row.getByText('Used up').waitFor();
    await expectLocator(row.getByText('1 of 1')).toBeVisible();
  });

  it('creates an invite, mails it, and shows the link once to copy', async () => {
    const before = smtp.messages.length;
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill(FRIEND);
    await page.getByRole('checkbox', { name: 'Send the link by email' }).check();
    await page.getByRole('button', { name: 'Create and Send' }).click();
    await page.getByText(`Invite sent to ${FRIEND}.`).waitFor();
    const linkField = page.getByRole('textbox', { name: 'Invite link' });
    await expectLocator(linkField).toHaveValue(/\/auth\/signup\?itoken=/);
    const shown = await linkField.inputValue();

    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);

    const mailed = await mailedLink(FRIEND, /invited to Daybook/, '/auth/signup', before);
    expect(mailed).toBe(shown);
    await expectLocator(page.getByRole('row').filter({ hasText: FRIEND }).getByText('Active')).toBeVisible();
    await expectAccessible(page, 'admin-invites');
    await screenshot(page, 'admin-invites');
    await page.setViewportSize({ width: 360, height: 800 });
    await expectAccessible(page, 'admin-invites');
    await screenshot(page, 'admin-invites');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('lets the invited person sign up through the mailed link', async () => {
    const link = await mailedLink(FRIEND, /invited to Daybook/, '/auth/signup');
    const friendContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const friend = await friendContext.newPage();
      const before = smtp.messages.length;
      await signUpInBrowser(friend, link, FRIEND, FRIEND_PASSWORD);
      await friend.goto(await mailedLink(FRIEND, /Confirm your email/, '/auth/verify-email/', before));
      await friend.getByRole('heading', { name: 'Email Verified!' }).waitFor();
      await friend.waitForURL((u) => !u.pathname.startsWith('/auth/verify-email'));
      await friend.goto(`${app.baseUrl}/auth/login`);
      await friend.waitForURL((u) => u.pathname !== '/auth/login');

      // The administrator deactivates them: signed out at once, and kept out.
      await page.getByRole('tab', { name: 'Users' }).click();
      const row = page.getByRole('row').filter({ hasText: FRIEND });
      await row.getByRole('button', { name: `Deactivate ${FRIEND}` }).click();
      const dialog = page.getByRole('alertdialog', { name: 'Deactivate account?' });
      await dialog.getByRole('button', { name: 'Deactivate' }).click();
      await page.getByText(`${FRIEND} is deactivated and signed out.`).waitFor();
      await expectLocator(row.getByText('Deactivated')).toBeVisible();
      await expectAccessible(page, 'admin-users');
      await screenshot(page, 'admin-users');
      await page.setViewportSize({ width: 360, height: 800 });
      await expectAccessible(page, 'admin-users');
      await screenshot(page, 'admin-users');

      const me = await friend.request.get(`${app.baseUrl}/api/users/me/`);
      expect(me.status()).toBe(401);
      await friend.goto(`${app.baseUrl}/memories`);
      await friend.waitForURL((u) => u.pathname === '/auth/login');
      await friend.getByLabel('Email').fill(FRIEND);
      await friend.getByLabel('Password', { exact: true }).fill(FRIEND_PASSWORD);
      await friend.getByRole('button', { name: 'Sign In' }).click();
      await friend.getByRole('alert').first().waitFor();
      await expectPage(friend).toHaveURL((u) => u.pathname === '/auth/login');
    } finally {
      await friendContext.close();
    }
  });

  it('checks the model server: what works, what Daybook does instead, and what to change', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('tab', { name: 'Model' }).click();
    const panel = page.getByRole('tabpanel', { name: 'Model' });
    await panel.getByRole('button', { name: 'Check the model' }).click();
    await panel.getByRole('heading', { name: 'Qwen/Qwen2.5-14B-Instruct' }).waitFor();
    const tools = panel.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Tools in the chat' }) });
    await tools.getByText('Worked around').waitFor();
    await tools.getByText(/--enable-auto-tool-choice --tool-call-parser/).waitFor();
    await panel.getByText('The chat and its structured answers work with this model.').waitFor();
    await panel.getByText('Chat: streamed answers without tools; research starts with /research.').waitFor();
    await expectAccessible(page, 'admin-model');
    await screenshot(page, 'admin-model');
    await page.setViewportSize({ width: 360, height: 800 });
    await expectAccessible(page, 'admin-model');
    await screenshot(page, 'admin-model');
  });

  it('shows what the model spent, and says when nothing reported its tokens yet', async () => {
    // The model check's calls are the operator's, not a user's: nothing is kept of them.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('tab', { name: 'Usage' }).click();
    const panel = page.getByRole('tabpanel', { name: 'Usage' });
    await panel.getByText('No model calls reported their tokens in these 30 days.').waitFor();
    await panel.getByText('No daily allowance per user is set (LLM_USER_DAILY_TOKENS).').waitFor();
    await panel.getByRole('combobox', { name: 'Period' }).selectOption({ label: 'Last 7 days' });
    await panel.getByText('No model calls reported their tokens in these 7 days.').waitFor();
    await expectAccessible(page, 'admin-usage');
    await screenshot(page, 'admin-usage');
    await page.setViewportSize({ width: 360, height: 800 });
    await expectAccessible(page, 'admin-usage');
    await screenshot(page, 'admin-usage');
  });
});
