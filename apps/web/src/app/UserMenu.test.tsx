import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { useDailyMessagePause } from '../features/auth/daily-pause.tsx';
import {
  ALLAUTH,
  deferred,
  type Handler,
  mockFetch,
  type Reply,
  reply,
  SESSION_ANONYMOUS,
  USER_ME,
} from '../test/fetch.ts';
import { anonymous, renderRoutes, signedIn } from '../test/render.tsx';
import { routes } from './routes.tsx';

const ME = '/api/users/me/';

async function openMenu(patch: Handler = reply(500)) {
  const network = mockFetch({ [`GET ${ME}`]: reply(200, USER_ME), [`PATCH ${ME}`]: patch });
  renderRoutes(routes, { path: '/', auth: signedIn });
  const button = await screen.findByRole('button', { name: 'Account menu for sam@example.com' });
  // The layout asks once per sign-in whether the address is verified (for its reminder).
  await waitFor(() => expect(network.calls(`GET ${ME}`)).toHaveLength(1));
  await userEvent.click(button);
  const toggle = screen.getByRole('switch', { name: 'Pause daily messages' });
  await waitFor(() => expect(toggle).toBeEnabled());
  return { ...network, button, toggle };
}

describe('Account menu', () => {
  it('lists the account pages, the pause toggle and Sign Out', async () => {
    const { button, toggle, calls } = await openMenu();
    expect(button).toHaveAttribute('aria-expanded', 'true');
    // A disclosure, not an ARIA menu: the button controls the panel and announces no popup menu.
    expect(button).not.toHaveAttribute('aria-haspopup');
    const panelId = button.getAttribute('aria-controls') ?? '';
    expect(document.getElementById(panelId)).toContainElement(screen.getByRole('link', { name: 'Memories' }));
    expect(screen.queryByRole('menu')).not.toBeInTheDocument();
    expect(screen.queryByRole('menuitem')).not.toBeInTheDocument();
    expect(screen.getByRole('link', { name: /sam@example\.com/ })).toHaveAttribute('href', '/profile');
    expect(screen.getByRole('link', { name: 'Memories' })).toHaveAttribute('href', '/memories');
    expect(screen.getByRole('link', { name: 'History' })).toHaveAttribute('href', '/resources');
    expect(screen.getByRole('link', { name: 'Calendar Connections' })).toHaveAttribute('href', '/accounts/3rdparty/');
    expect(toggle).toHaveAttribute('aria-checked', 'false');
    expect(screen.getByRole('button', { name: 'Sign Out' })).toBeInTheDocument();
    // One for the layout's verification check, two as the menu first opened (the pause switch, and
    // whether to show the Admin link).
    expect(calls(`GET ${ME}`)).toHaveLength(3);

    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('switch')).not.toBeInTheDocument();
    expect(button).toHaveFocus();
    expect(button).toHaveAttribute('aria-expanded', 'false');
  });

  it('is a disclosure the keyboard opens, walks through, and leaves with Tab or Escape', async () => {
    await openMenu();
    const button = screen.getByRole('button', { name: 'Account menu for sam@example.com' });
    await userEvent.keyboard('{Escape}');
    expect(button).toHaveFocus();
    await userEvent.keyboard('{Enter}');
    expect(button).toHaveAttribute('aria-expanded', 'true');
    await userEvent.tab();
    expect(screen.getByRole('link', { name: /sam@example\.com/ })).toHaveFocus();
    // Tab goes on through the panel in page order, then out of it, which closes it.
    for (let i = 0; i < 5; i++) await userEvent.tab();
    expect(screen.getByRole('button', { name: 'Sign Out' })).toHaveFocus();
    await userEvent.tab();
    expect(button).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('button', { name: 'Sign Out' })).not.toBeInTheDocument();
  });

  it('closes when focus leaves it for nothing, but not on a click on its own text', async () => {
    const { button } = await openMenu();
    const panel = document.getElementById(button.getAttribute('aria-controls') ?? '') as HTMLElement;
    await userEvent.click(panel);
    expect(panel).toHaveFocus();
    expect(button).toHaveAttribute('aria-expanded', 'true');

    const memories = screen.getByRole('link', { name: 'Memories' });
    memories.focus();
    // Focus dropping to <body> (the focused item went away, or Tab left the page).
    act(() => memories.blur());
    await waitFor(() => expect(button).toHaveAttribute('aria-expanded', 'false'));
    expect(screen.queryByRole('link', { name: 'Memories' })).not.toBeInTheDocument();
  });

  it('flips the pause toggle at once and saves it', async () => {
    const saved = deferred<Reply>();
    const { toggle, calls } = await openMenu(() => saved.promise);
    await userEvent.click(toggle);
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(calls(`PATCH ${ME}`)[0]?.body).toEqual({ is_daily_message_paused: true });
    saved.resolve(reply(200, { ...USER_ME, is_daily_message_paused: true }));
    await waitFor(() => expect(calls(`PATCH ${ME}`)).toHaveLength(1));
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('flips it back and says so when saving fails', async () => {
    const saved = deferred<Reply>();
    const { toggle } = await openMenu(() => saved.promise);
    await userEvent.click(toggle);
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    saved.resolve(reply(500, { error: 'Internal server error', code: 'internal_error' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Failed to update user settings.');
    expect(toggle).toHaveAttribute('aria-checked', 'false');
  });

  it('signs out through the account API, then reloads the app at /', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    const { calls } = await openMenu();
    const signOut = mockFetch({ [`DELETE ${ALLAUTH}/auth/session`]: SESSION_ANONYMOUS });
    // An unsent chat message must not be left for the next person at this browser.
    window.sessionStorage.setItem('daybook.draft.chat', 'half a thought');
    window.sessionStorage.setItem('daybook.tour', 'kept');
    await userEvent.click(screen.getByRole('button', { name: 'Sign Out' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('/'));
    expect(window.sessionStorage.getItem('daybook.draft.chat')).toBeNull();
    expect(window.sessionStorage.getItem('daybook.tour')).toBe('kept');
    const [request] = signOut.calls(`DELETE ${ALLAUTH}/auth/session`);
    expect(request?.headers.get('X-CSRFToken')).toBe('config-token');
    expect(calls(`GET ${ME}`)).toHaveLength(3);
  });

  it('still leaves when signing out fails, and logs it', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    await openMenu();
    mockFetch({
      [`DELETE ${ALLAUTH}/auth/session`]: () => {
        throw new TypeError('Failed to fetch');
      },
    });
    await userEvent.click(screen.getByRole('button', { name: 'Sign Out' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('/'));
    expect(log).toHaveBeenCalled();
    log.mockRestore();
  });
});

function PauseHarness() {
  const pause = useDailyMessagePause();
  return (
    <>
      <button type="button" onClick={() => void pause.toggle()}>
        Toggle
      </button>
      {pause.error && <p role="alert">{pause.error}</p>}
    </>
  );
}

describe('useDailyMessagePause', () => {
  it('refuses without a signed-in user', async () => {
    const { calls } = mockFetch();
    renderRoutes([{ path: '/', element: <PauseHarness /> }], { auth: anonymous });
    await userEvent.click(await screen.findByRole('button', { name: 'Toggle' }));
    expect(screen.getByRole('alert')).toHaveTextContent('No user logged in');
    expect(calls(`PATCH ${ME}`)).toHaveLength(0);
  });
});

describe('Profile', () => {
  it('shows the account, its verification state and the settings', async () => {
    mockFetch({
      [`GET ${ME}`]: reply(200, { ...USER_ME, email_verified: false, is_daily_message_paused: true }),
      'POST /api/auth/verification/resend/': reply(200, { sent: true, detail: 'Sent.' }),
    });
    renderRoutes(routes, { path: '/profile', auth: signedIn });
    const main = within(screen.getByRole('main'));
    expect(await main.findByRole('heading', { level: 1, name: 'Your Account' })).toBeInTheDocument();
    expect(await main.findByText('Not verified')).toBeInTheDocument();
    expect(main.getByText('sam@example.com')).toBeInTheDocument();
    expect(main.getByText('Member since')).toBeInTheDocument();
    expect(main.getByRole('switch', { name: 'Pause daily messages' })).toHaveAttribute('aria-checked', 'true');
    expect(main.getByRole('link', { name: 'Change password' })).toHaveAttribute('href', '/auth/change-password');
    expect(main.getByRole('link', { name: /Memories/ })).toHaveAttribute('href', '/memories');
    expect(main.getByRole('link', { name: /History/ })).toHaveAttribute('href', '/resources');

    expect(main.getByText('Your email address has not been verified yet.')).toBeInTheDocument();
    await userEvent.click(main.getByRole('button', { name: 'Resend verification email' }));
    expect(await main.findByText('A new verification email has been sent to sam@example.com.')).toBeInTheDocument();
  });

  it('turns "Learn from my chats" off and saves it', async () => {
    const { calls } = mockFetch({
      [`GET ${ME}`]: reply(200, USER_ME),
      [`PATCH ${ME}`]: reply(200, { ...USER_ME, learn_from_chats: false }),
    });
    renderRoutes(routes, { path: '/profile', auth: signedIn });
    const main = within(screen.getByRole('main'));
    const learn = await main.findByRole('switch', { name: 'Learn from my chats' });
    await waitFor(() => expect(learn).toHaveAttribute('aria-checked', 'true'));
    await userEvent.click(learn);
    await waitFor(() => expect(learn).toHaveAttribute('aria-checked', 'false'));
    expect(calls(`PATCH ${ME}`).map((c) => c.body)).toEqual([{ learn_from_chats: false }]);
  });

  it('is for signed-in users only', async () => {
    mockFetch();
    const { router } = renderRoutes(routes, { path: '/profile' });
    expect(await screen.findByRole('heading', { name: 'Sign In' })).toBeInTheDocument();
    expect(router.state.location.search).toBe(`?next=${encodeURIComponent('/profile')}`);
  });
});
