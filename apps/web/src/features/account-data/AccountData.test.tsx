import { ACCOUNT_DATA_MESSAGES, type TUserMe } from '@daybook/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { type Handler, mockFetch, reply, USER_ME } from '../../test/fetch.ts';
import { anonymous, renderRoutes, signedIn } from '../../test/render.tsx';
import { EXPORT_PATH } from './api.ts';

const ME = '/api/users/me/';
const DELETE = 'POST /api/users/me/delete/';
const EXPORT_TEXT = JSON.stringify({ format: 'daybook-export', version: 1, memories: [{ key: 'home city' }] });

/** The export's answer: a file with its name, or an error in the API's shape. */
function serveExport(answer: () => Response) {
  const network = mockFetch({ [`GET ${ME}`]: reply(200, USER_ME) });
  const base = network.fetchMock.getMockImplementation();
  const exports: number[] = [];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    if (String(input) === EXPORT_PATH) {
      exports.push(Date.now());
      return answer();
    }
    return base?.(input, init);
  });
  return exports;
}

function captureDownloads() {
  const saved: Array<{ name: string; blob: Blob }> = [];
  const blobs = new Map<string, Blob>();
  vi.stubGlobal(
    'URL',
    Object.assign(URL, {
      createObjectURL: (blob: Blob) => {
        const url = `blob:test/${blobs.size}`;
        blobs.set(url, blob);
        return url;
      },
      revokeObjectURL: () => {},
    }),
  );
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push({ name: this.download, blob: blobs.get(this.href) as Blob });
  });
  return saved;
}

afterEach(() => vi.restoreAllMocks());

async function openProfile(extra: Record<string, Handler> = {}, me: Partial<TUserMe> = {}) {
  const network = mockFetch({ [`GET ${ME}`]: reply(200, { ...USER_ME, ...me }), ...extra });
  renderRoutes(routes, { path: '/profile', auth: signedIn });
  const main = within(screen.getByRole('main'));
  await main.findByRole('heading', { level: 2, name: 'Danger zone' });
  return { ...network, main };
}

describe('Your data on the profile page', () => {
  it('keeps the other sections and adds the download and the danger zone', async () => {
    const { main } = await openProfile();
    for (const name of ['Account', 'Security', 'Daily message', 'Learning', 'Your data', 'Danger zone'])
      expect(main.getByRole('heading', { level: 2, name })).toBeInTheDocument();
    expect(main.getByRole('link', { name: /Memories/ })).toHaveAttribute('href', '/memories');
    expect(main.getByRole('button', { name: 'Download my data' })).toBeEnabled();
    expect(main.getByRole('button', { name: 'Delete account' })).toBeEnabled();
  });

  it('downloads the file under the name the server gave, and says so', async () => {
    const exports = serveExport(
      () =>
        new Response(EXPORT_TEXT, {
          status: 200,
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'content-disposition': 'attachment; filename="daybook-export-2026-05-02.json"',
          },
        }),
    );
    const saved = captureDownloads();
    renderRoutes(routes, { path: '/profile', auth: signedIn });
    const button = await screen.findByRole('button', { name: 'Download my data' });
    await userEvent.click(button);
    await screen.findByText(`Downloaded daybook-export-2026-05-02.json (${EXPORT_TEXT.length} B).`);
    expect(exports).toHaveLength(1);
    expect(saved.map((s) => s.name)).toEqual(['daybook-export-2026-05-02.json']);
    expect(await saved[0]?.blob.text()).toBe(EXPORT_TEXT);
    expect(screen.getByRole('button', { name: 'Download my data' })).toBeEnabled();
  });

  it("shows the server's reason when the download is refused, and nothing is saved", async () => {
    serveExport(
      () =>
        new Response(JSON.stringify({ error: ACCOUNT_DATA_MESSAGES.exportLimit, code: 'rate_limited' }), {
          status: 429,
          headers: { 'content-type': 'application/json' },
        }),
    );
    const saved = captureDownloads();
    renderRoutes(routes, { path: '/profile', auth: signedIn });
    await userEvent.click(await screen.findByRole('button', { name: 'Download my data' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(ACCOUNT_DATA_MESSAGES.exportLimit);
    expect(saved).toEqual([]);
  });
});

describe('Deleting the account', () => {
  async function openDialog(extra: Record<string, Handler> = {}, me: Partial<TUserMe> = {}) {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    const network = await openProfile(extra, me);
    await userEvent.click(network.main.getByRole('button', { name: 'Delete account' }));
    const dialog = within(await screen.findByRole('alertdialog', { name: 'Delete your account?' }));
    return { ...network, dialog, assign };
  }

  it('explains what goes, asks for the password, and lands on the deleted-account page', async () => {
    const { dialog, calls, assign } = await openDialog({ [DELETE]: reply(200, { deleted: true }) });
    expect(dialog.getByText('memories, including deleted ones')).toBeInTheDocument();
    expect(dialog.getByText('calendar connections (Google access is revoked)')).toBeInTheDocument();
    const password = dialog.getByLabelText('Enter your password to confirm');
    expect(password).toHaveFocus();

    await userEvent.click(dialog.getByRole('button', { name: 'Delete my account' }));
    expect(dialog.getByText(ACCOUNT_DATA_MESSAGES.passwordRequired)).toBeInTheDocument();
    expect(calls(DELETE)).toHaveLength(0);

    await userEvent.type(password, 'correct horse battery');
    await userEvent.click(dialog.getByRole('button', { name: 'Delete my account' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('/auth/account-deleted'));
    expect(calls(DELETE).map((c) => c.body)).toEqual([{ password: 'correct horse battery' }]);
  });

  it('shows a wrong password on the field and stays open', async () => {
    const wrong = reply(400, {
      error: ACCOUNT_DATA_MESSAGES.wrongPassword,
      code: 'validation_error',
      field_errors: { password: [ACCOUNT_DATA_MESSAGES.wrongPassword] },
    });
    const { dialog, assign } = await openDialog({ [DELETE]: wrong });
    const password = dialog.getByLabelText('Enter your password to confirm');
    await userEvent.type(password, 'not my password');
    await userEvent.click(dialog.getByRole('button', { name: 'Delete my account' }));
    expect(await dialog.findByText(ACCOUNT_DATA_MESSAGES.wrongPassword)).toBeInTheDocument();
    expect(password).toHaveAttribute('aria-invalid', 'true');
    expect(password).toHaveFocus();
    expect(assign).not.toHaveBeenCalled();
  });

  it('shows why the server refused (the last administrator), and Cancel closes it', async () => {
    const { dialog } = await openDialog({
      [DELETE]: reply(409, { error: ACCOUNT_DATA_MESSAGES.lastAdmin, code: 'conflict' }),
    });
    await userEvent.type(dialog.getByLabelText('Enter your password to confirm'), 'correct horse battery');
    await userEvent.click(dialog.getByRole('button', { name: 'Delete my account' }));
    expect(await dialog.findByRole('alert')).toHaveTextContent(ACCOUNT_DATA_MESSAGES.lastAdmin);
    await userEvent.click(dialog.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
  });

  it('tells an account without a password to set one first', async () => {
    const { dialog } = await openDialog({}, { has_usable_password: false });
    expect(dialog.queryByLabelText('Enter your password to confirm')).not.toBeInTheDocument();
    expect(dialog.getByText(ACCOUNT_DATA_MESSAGES.noPassword)).toBeInTheDocument();
    expect(dialog.getByRole('link', { name: 'Set a password' })).toHaveAttribute('href', '/auth/change-password');
  });
});

describe('The deleted-account page', () => {
  it('is the sign-in page with a notice', async () => {
    mockFetch();
    renderRoutes(routes, { path: '/auth/account-deleted', auth: anonymous });
    const notice = await screen.findByText(new RegExp(ACCOUNT_DATA_MESSAGES.deleted));
    expect(notice.closest('[role="status"]')).not.toBeNull();
    expect(screen.getByRole('heading', { name: 'Sign In' })).toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toBeInTheDocument();
  });
});
