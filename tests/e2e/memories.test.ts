// Managing memories in Chromium against the real server: add, edit, delete, restore, the blank-data
// rule, paging past 30, and the error banner when the server goes away.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe.ts';
import { expectLocator, expectPage } from './expect.ts';
import { createInviteLink, launchBrowser, type RunningApp, screenshot, signUpInBrowser, startApp } from './harness.ts';

let app: RunningApp;
let browser: Browser;
let page: Page;
let signupLink = '';

beforeAll(async () => {
  [app, browser] = await Promise.all([
    startApp({}, (run) => {
      signupLink = createInviteLink(run);
    }),
    launchBrowser(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // A new account: signing up starts its first session.
  await signUpInBrowser(page, signupLink, 'maya@example.com', 'a quiet morning walk');
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

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

const dialog = () => page.getByRole('dialog');
const row = (key: string) => page.getByRole('row').filter({ has: page.getByRole('cell', { name: key, exact: true }) });

const memoryList = () => page.getByRole('region', { name: 'Memory list' });

describe('the Memories page', () => {
  it('starts empty and adds a memory through the form', async () => {
    await page.goto(`${app.baseUrl}/memories`);
    await page.getByRole('heading', { name: 'Your Memories' }).waitFor();
    await expectPage(page).toHaveTitle('Memories · Daybook');
    await page.getByText('No memories found').waitFor();
    await expectAccessible(page, 'memories (empty)');
    await screenshot(page, 'memories-empty');

    await page.getByRole('button', { name: 'Add New Memory' }).click();
    await dialog().getByRole('heading', { name: 'Add New Memory' }).waitFor();
    await dialog().getByLabel('Key').fill('home city');
    await dialog().getByLabel('Data').fill('Lives in Lisbon, near the river.');
    await dialog().getByLabel('Type').selectOption('location');
    await dialog().getByLabel('URL').fill('https://www.visitlisboa.com/en');
    await dialog().getByLabel('Frequency').fill('always');
    await expectAccessible(page, 'memories add form');
    await screenshot(page, 'memories-add-form');
    await dialog().getByRole('button', { name: 'Add Memory' }).click();
    await row('home city').waitFor();
    await expectLocator(row('home city')).toContainText('Location');
  });

  it('a new memory with blank data is refused with the spec message', async () => {
    await page.getByRole('button', { name: 'Add New Memory' }).click();
    await dialog().getByLabel('Key').fill('nothing');
    await dialog().getByLabel('Data').fill('    ');
    await dialog().getByRole('button', { name: 'Add Memory' }).click();
    await dialog().getByText('Memory data cannot be blank. Please enter some data or cancel.').waitFor();
    await expectAccessible(page, 'memories form with an error');
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
  });

  it('edits a memory', async () => {
    await row('home city').getByRole('button', { name: /Edit/ }).click();
    await dialog().getByRole('heading', { name: 'Edit Memory' }).waitFor();
    await expectAccessible(page, 'memories edit form');
    await dialog().getByLabel('Data').fill('Lives in Porto now.');
    await dialog().getByRole('button', { name: 'Save Changes' }).click();
    await dialog().waitFor({ state: 'detached' });
    await row('home city').getByText('Lives in Porto now.').waitFor();
  });

  it('deletes with confirmation, shows it among deleted memories, and restores it', async () => {
    await row('home city')
      .getByRole('button', { name: /Delete/ })
      .click();
    const confirm = page.getByRole('alertdialog');
    await confirm.getByRole('heading', { name: 'Confirm Deletion' }).waitFor();
    // A soft delete: the dialog says where to find it again.
    await expectLocator(confirm).toContainText('You can restore it from "Show deleted memories".');
    await expectAccessible(page, 'memories delete dialog');
    await screenshot(page, 'memories-confirm-delete');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No memories found').waitFor();
    // The row's Delete button is gone: focus is on the list, not <body>.
    await expectLocator(memoryList()).toBeFocused();

    await page.getByLabel('Show deleted memories').check();
    await row('home city').waitFor();
    await expectLocator(page.getByRole('button', { name: 'Add New Memory' })).toHaveCount(0);
    await expectAccessible(page, 'memories deleted view');
    await screenshot(page, 'memories-deleted-view');
    await row('home city')
      .getByRole('button', { name: /Restore/ })
      .click();
    await dialog().getByRole('heading', { name: 'Restore Memory' }).waitFor();
    await dialog().getByText('No reason provided').waitFor();
    await expectAccessible(page, 'memories restore form');
    await dialog().getByRole('button', { name: 'Restore Memory' }).click();
    await page.getByText('No deleted memories found').waitFor();

    await page.getByLabel('Show deleted memories').uncheck();
    await row('home city').waitFor();
  });

  it('saving an edit with blank data asks again, then deletes the memory', async () => {
    await row('home city').getByRole('button', { name: /Edit/ }).click();
    await dialog().getByLabel('Data').fill('  ');
    await dialog().getByRole('button', { name: 'Save Changes' }).click();
    const second = page.getByRole('alertdialog');
    await second
      .getByText('Saving with blank data will delete this memory. Are you sure you want to proceed?')
      .waitFor();
    await second.getByRole('button', { name: /Delete|Confirm|Proceed/ }).click();
    await page.getByText('No memories found').waitFor();
    await page.getByLabel('Show deleted memories').check();
    await row('home city').waitFor();
    await page.getByLabel('Show deleted memories').uncheck();
  });

  it('pages through 31 memories, 30 per page', async () => {
    for (let i = 1; i <= 31; i++) {
      expect(
        await api('POST', '/api/memories/', {
          key: `topic ${String(i).padStart(2, '0')}`,
          data: `Interest number ${i}`,
          memory_type: 'interest',
        }),
      ).toBe(201);
    }
    await page.reload();
    await row('topic 31').waitFor();
    await expectLocator(page.getByRole('row')).toHaveCount(31); // 30 rows and the header
    await expectAccessible(page, 'memories list');
    await screenshot(page, 'memories-page-1');
    await page.getByRole('button', { name: 'Next' }).click();
    await row('topic 01').waitFor();
    await expectLocator(page.getByRole('row')).toHaveCount(2);
    await expectAccessible(page, 'memories page 2');
    // Next is disabled on the last page: focus is on the list, not <body>.
    await expectLocator(memoryList()).toBeFocused();
    await expectPage(page).toHaveURL((u) => u.searchParams.get('page') === '2');
    await page.getByRole('button', { name: 'Previous' }).click();
    await row('topic 31').waitFor();
    await expectLocator(memoryList()).toBeFocused();
  });

  it('the account menu closes when focus leaves it, by Tab or to nothing', async () => {
    const menuButton = page.getByRole('button', { name: /^Account menu for / });
    await menuButton.click();
    const signOut = page.getByRole('button', { name: 'Sign Out' });
    await signOut.focus();
    await page.keyboard.press('Tab');
    await signOut.waitFor({ state: 'detached' });
    await expectLocator(menuButton).toHaveAttribute('aria-expanded', 'false');

    await menuButton.click();
    await page.getByRole('link', { name: 'History' }).focus();
    await page.evaluate(() => (document.activeElement as HTMLElement).blur());
    await signOut.waitFor({ state: 'detached' });
    await expectLocator(menuButton).toHaveAttribute('aria-expanded', 'false');
  });

  it('becomes cards on a phone', async () => {
    const phone = await browser.newPage({ viewport: { width: 360, height: 780 } });
    await phone.context().addCookies(await page.context().cookies());
    await phone.goto(`${app.baseUrl}/memories`);
    await phone.getByText('topic 31', { exact: true }).first().waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(phone, 'memories as cards');
    await screenshot(phone, 'memories');
    await phone.close();
  });

  it('shows the error banner when the server cannot be reached', async () => {
    await app.stop();
    // The list reloads when the view changes; with the server gone that load fails.
    await page.getByLabel('Show deleted memories').click();
    await page.getByText('Failed to load your memories. Please try again later.').waitFor();
    await expectAccessible(page, 'memories load error');
    await screenshot(page, 'memories-error');
  });
});
