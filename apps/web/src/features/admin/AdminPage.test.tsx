import type { TAdminUser, TInvite } from '@daybook/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { mockFetch, reply, USER_ME } from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';

const INVITES = '/api/admin/invites/';
const USERS = '/api/admin/users/';

const invite = (over: Partial<TInvite> = {}): TInvite => ({
  id: 7,
  email: null,
  max_uses: 3,
  uses: 1,
  expires_at: new Date(Date.now() + 6 * 86_400_000).toISOString(),
  revoked_at: null,
  created_at: new Date(Date.now() - 86_400_000).toISOString(),
  status: 'active',
  used_by: [{ email: 'kim@example.com', used_at: '2025-03-15T10:00:00.000Z' }],
  ...over,
});

const user = (over: Partial<TAdminUser> = {}): TAdminUser => ({
  id: 2,
  email: 'kim@example.com',
  date_joined: '2025-03-15T10:00:00.000Z',
  last_login: new Date(Date.now() - 3 * 3_600_000).toISOString(),
  email_verified: true,
  is_active: true,
  is_admin: false,
  ...over,
});

const ME_ROW = user({ id: 1, email: 'sam@example.com', is_admin: true });

function adminNetwork(extra: Parameters<typeof mockFetch>[0] = {}) {
  return mockFetch({
    'GET /api/users/me/': reply(200, { ...USER_ME, is_admin: true }),
    [`GET ${INVITES}`]: reply(200, { results: [invite()], count: 1 }),
    [`GET ${USERS}`]: reply(200, { results: [user(), ME_ROW], count: 2, next: null, previous: null }),
    ...extra,
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Admin page', () => {
  it('shows an Admin link in the account menu to administrators only', async () => {
    adminNetwork();
    renderRoutes(routes, { path: '/', auth: signedIn });
    await userEvent.click(await screen.findByRole('button', { name: /Account menu/ }));
    expect(await screen.findByRole('link', { name: 'Admin' })).toHaveAttribute('href', '/admin');
  });

  it('shows no Admin link to other users', async () => {
    const network = mockFetch({ 'GET /api/users/me/': reply(200, USER_ME) });
    renderRoutes(routes, { path: '/', auth: signedIn });
    await userEvent.click(await screen.findByRole('button', { name: /Account menu/ }));
    await waitFor(() => expect(network.calls('GET /api/users/me/')).toHaveLength(3));
    expect(screen.getByRole('link', { name: 'Memories' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Admin' })).not.toBeInTheDocument();
  });

  it('tells a user who is not an administrator that the area is not for them', async () => {
    mockFetch({
      [`GET ${INVITES}`]: reply(403, { error: 'Only administrators can manage invites.', code: 'forbidden' }),
    });
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    expect(await screen.findByRole('heading', { name: 'Administrators Only' })).toBeInTheDocument();
    expect(screen.queryByRole('tab')).not.toBeInTheDocument();
  });

  it('creates an invite, shows its link once with a Copy button, and lists it', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const url = 'http://localhost/auth/signup?itoken=abc123';
    const made = invite({ id: 8, email: 'ana@example.com', max_uses: 1, uses: 0, used_by: [] });
    const network = adminNetwork({
      [`POST ${INVITES}`]: reply(201, { invite: made, token: 'abc123', signup_url: url }),
    });
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    const table = await screen.findByRole('table');
    expect(within(table).getByRole('rowheader', { name: /Anyone with the link/ })).toBeInTheDocument();
    expect(within(table).getByText('1 of 3')).toBeInTheDocument();
    expect(within(table).getByText('kim@example.com')).toBeInTheDocument();

    const days = screen.getByLabelText('Expires after (days)');
    await userEvent.clear(days);
    await userEvent.type(days, 'soon');
    await userEvent.click(screen.getByRole('button', { name: 'Create Invite' }));
    expect(await screen.findByText(/Enter a number of days/)).toBeInTheDocument();
    expect(network.calls(`POST ${INVITES}`)).toHaveLength(0);

    await userEvent.clear(days);
    await userEvent.type(days, '14');
    await userEvent.type(screen.getByLabelText('Email'), 'ana@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Create Invite' }));
    const link = await screen.findByRole('textbox', { name: 'Invite link' });
    expect(link).toHaveValue(url);
    expect(network.calls(`POST ${INVITES}`)[0]?.body).toEqual({
      max_uses: 1,
      expires_in_days: 14,
      email: 'ana@example.com',
    });
    expect(screen.getByText(/Only ana@example.com can use it/)).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Copy' }));
    expect(writeText).toHaveBeenCalledWith(url);
    expect(await screen.findByRole('button', { name: 'Copied' })).toBeInTheDocument();
    expect(within(screen.getByRole('table')).getByRole('rowheader', { name: /ana@example.com/ })).toBeInTheDocument();
  });

  it('sends an invite by email, which needs an address', async () => {
    const made = invite({ id: 9, email: 'lee@example.com', max_uses: 1, uses: 0, used_by: [] });
    const network = adminNetwork({
      'POST /api/admin/invites/send/': reply(201, {
        invite: made,
        token: 't',
        signup_url: 'http://localhost/auth/signup?itoken=t',
        sent_to: 'lee@example.com',
      }),
    });
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    await screen.findByRole('table');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Send the link by email' }));
    await userEvent.click(screen.getByRole('button', { name: 'Create and Send' }));
    expect(await screen.findByText('Enter the address to send the invite to.')).toBeInTheDocument();
    await userEvent.type(screen.getByLabelText('Email'), 'lee@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Create and Send' }));
    expect(await screen.findByText('Invite sent to lee@example.com.')).toBeInTheDocument();
    expect(network.calls('POST /api/admin/invites/send/')[0]?.body).toEqual({
      max_uses: 1,
      expires_in_days: 7,
      email: 'lee@example.com',
    });
  });

  it('revokes an invite after a confirmation', async () => {
    const network = adminNetwork({
      [`DELETE ${INVITES}7/`]: reply(200, invite({ status: 'revoked', revoked_at: new Date().toISOString() })),
    });
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    await userEvent.click(await screen.findByRole('button', { name: 'Revoke invite #7' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Revoke invite?' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(network.calls(`DELETE ${INVITES}7/`)).toHaveLength(0);

    await userEvent.click(screen.getByRole('button', { name: 'Revoke invite #7' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Revoke' }));
    expect(await screen.findByText('Revoked')).toBeInTheDocument();
    expect(network.calls(`DELETE ${INVITES}7/`)).toHaveLength(1);
    expect(screen.queryByRole('button', { name: 'Revoke invite #7' })).not.toBeInTheDocument();
  });

  it('lists users and deactivates one after a confirmation; your own row has no actions', async () => {
    const network = adminNetwork({
      [`PATCH ${USERS}2/`]: reply(200, user({ is_active: false })),
    });
    renderRoutes(routes, { path: '/admin?tab=users', auth: signedIn });
    expect(await screen.findByRole('tab', { name: 'Users' })).toHaveAttribute('aria-selected', 'true');
    const kim = await screen.findByRole('row', { name: /kim@example.com/ });
    expect(within(kim).getByText('3 hours ago')).toBeInTheDocument();
    const me = screen.getByRole('row', { name: /sam@example.com/ });
    expect(within(me).getByText('This is you')).toBeInTheDocument();
    expect(within(me).queryByRole('button')).not.toBeInTheDocument();

    await userEvent.click(within(kim).getByRole('button', { name: /^Deactivate/ }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Deactivate account?' });
    expect(dialog).toHaveTextContent('signed out everywhere');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Deactivate' }));
    expect(await screen.findByText('kim@example.com is deactivated and signed out.')).toBeInTheDocument();
    expect(network.calls(`PATCH ${USERS}2/`)[0]?.body).toEqual({ is_active: false });
    expect(within(screen.getByRole('row', { name: /kim@example.com/ })).getByText('Deactivated')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /^Reactivate/ })).toBeInTheDocument();
  });

  it("shows the server's reason when a change is refused, and searches by email", async () => {
    const network = adminNetwork({
      [`PATCH ${USERS}2/`]: reply(400, {
        error: 'Daybook needs at least one active administrator: make someone else an administrator first.',
        code: 'bad_request',
      }),
    });
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    await screen.findByRole('table');
    await userEvent.click(screen.getByRole('tab', { name: 'Users' }));
    await userEvent.click(await screen.findByRole('button', { name: /^Make administrator/ }));
    await userEvent.click(
      within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Make administrator' }),
    );
    expect(await screen.findByRole('alert')).toHaveTextContent('at least one active administrator');

    await userEvent.type(screen.getByRole('searchbox', { name: 'Search users by email' }), 'kim{Enter}');
    await waitFor(() => expect(network.calls(`GET ${USERS}`).at(-1)?.search).toContain('search=kim'));
  });

  it('an invite used by someone who deleted their account counts the use, without "Nobody yet"', async () => {
    adminNetwork({
      [`GET ${INVITES}`]: reply(200, {
        results: [invite({ uses: 2, used_by: [invite().used_by[0] as never] })],
        count: 1,
      }),
    });
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    const row = (await screen.findByText('kim@example.com')).closest('tr') as HTMLElement;
    expect(within(row).getByText('An account since deleted')).toBeInTheDocument();
    expect(within(row).queryByText('Nobody yet')).toBeNull();
  });

  it('moves between the tabs with the arrow keys', async () => {
    adminNetwork();
    renderRoutes(routes, { path: '/admin', auth: signedIn });
    const invitesTab = await screen.findByRole('tab', { name: 'Invites' });
    expect(invitesTab).toHaveAttribute('aria-selected', 'true');
    invitesTab.focus();
    await userEvent.keyboard('{ArrowRight}');
    const usersTab = screen.getByRole('tab', { name: 'Users' });
    expect(usersTab).toHaveFocus();
    expect(usersTab).toHaveAttribute('aria-selected', 'true');
    expect(await screen.findByRole('tabpanel', { name: 'Users' })).toBeVisible();
  });

  it('checks the model: each capability, what Daybook uses, and what to change on the server', async () => {
    const network = adminNetwork({
      'POST /api/admin/model-check/': reply(200, {
        endpoint: 'http://gpu.lan:8000/v1',
        model: 'Qwen/Qwen3-8B',
        checks: [
          { name: 'Answers', status: 'ok', detail: 'Streamed "ready" in 0.4 s.', advice: null },
          {
            name: 'Tools in the chat',
            status: 'degraded',
            detail: 'The server refused them: "auto" tool choice requires --enable-auto-tool-choice.',
            advice: 'vLLM: start it with --enable-auto-tool-choice --tool-call-parser <parser>.',
          },
          { name: 'Embeddings', status: 'skipped', detail: 'EMBEDDING_MODEL is not set.', advice: null },
        ],
        uses: ['Chat: streamed answers without tools; research starts with /research.'],
        ok: true,
      }),
    });
    renderRoutes(routes, { path: '/admin?tab=model', auth: signedIn });
    const panel = await screen.findByRole('tabpanel', { name: 'Model' });
    await userEvent.click(within(panel).getByRole('button', { name: 'Check the model' }));
    expect(await within(panel).findByRole('heading', { name: 'Qwen/Qwen3-8B' })).toBeVisible();
    expect(network.calls('POST /api/admin/model-check/')).toHaveLength(1);
    const tools = within(panel).getByRole('heading', { name: 'Tools in the chat' }).closest('li') as HTMLElement;
    expect(within(tools).getByText('Worked around')).toBeVisible();
    expect(tools).toHaveTextContent('--enable-auto-tool-choice --tool-call-parser');
    expect(within(panel).getByText('Not set up')).toBeVisible();
    expect(panel).toHaveTextContent('research starts with /research');
    expect(within(panel).getByText('The check is done.')).toHaveAttribute('role', 'status');
    expect(within(panel).getByRole('button', { name: 'Check again' })).toBeEnabled();
  });

  it('shows why a check could not run', async () => {
    adminNetwork({ 'POST /api/admin/model-check/': reply(500, { detail: 'Internal error' }) });
    renderRoutes(routes, { path: '/admin?tab=model', auth: signedIn });
    const panel = await screen.findByRole('tabpanel', { name: 'Model' });
    await userEvent.click(within(panel).getByRole('button', { name: 'Check the model' }));
    expect(await within(panel).findByRole('alert')).toBeVisible();
  });

  it('shows what the model spent: totals, by purpose, the users who spent most, and by day', async () => {
    const counts = (calls: number, prompt: number, cached: number, completion: number) => ({
      calls,
      prompt_tokens: prompt,
      cached_tokens: cached,
      completion_tokens: completion,
    });
    const network = adminNetwork({
      'GET /api/admin/usage/': reply(200, {
        days: 30,
        daily_limit: 200_000,
        totals: counts(12, 40_000, 30_000, 4_000),
        by_purpose: [
          { purpose: 'chat', ...counts(8, 36_000, 29_000, 3_500) },
          { purpose: 'learning', ...counts(4, 4_000, 1_000, 500) },
        ],
        by_day: [
          { day: '2026-11-28', ...counts(5, 10_000, 6_000, 1_000) },
          { day: '2026-11-29', ...counts(7, 30_000, 24_000, 3_000) },
        ],
        top_users: [{ id: 2, email: 'kim@example.com', ...counts(12, 40_000, 30_000, 4_000) }],
      }),
    });
    renderRoutes(routes, { path: '/admin?tab=usage', auth: signedIn });
    const panel = await screen.findByRole('tabpanel', { name: 'Usage' });
    expect(await within(panel).findByText('Each user may spend 200,000 tokens a day.')).toBeVisible();
    expect(within(panel).getByText('75% cached')).toBeVisible();
    const purposes = within(panel).getByRole('region', { name: 'By purpose' });
    const chat = within(purposes).getByRole('row', { name: /Chat and onboarding/ });
    expect(chat).toHaveTextContent('36,000');
    expect(chat).toHaveTextContent('81%');
    const users = within(panel).getByRole('region', { name: 'Users who spent most' });
    expect(within(users).getByRole('row', { name: /kim@example.com/ })).toHaveTextContent('44,000');
    expect(within(panel).getByRole('region', { name: 'By day' })).toHaveTextContent('2026-11-29');
    expect(network.calls('GET /api/admin/usage/')[0]?.search).toBe('?days=30');
    await userEvent.selectOptions(within(panel).getByRole('combobox', { name: 'Period' }), 'Last 7 days');
    await waitFor(() => expect(network.calls('GET /api/admin/usage/').at(-1)?.search).toBe('?days=7'));
  });
});
