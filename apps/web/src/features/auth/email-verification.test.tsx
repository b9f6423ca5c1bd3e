import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { deferred, type Handler, mockFetch, type Reply, reply, USER_ME } from '../../test/fetch.ts';
import { anonymous, renderRoutes, signedIn } from '../../test/render.tsx';
import { accountEarlySettled, checkAccountEarly, REMINDER_DISMISSED_KEY } from './email-verification.tsx';

const ME = 'GET /api/users/me/';
const RESEND = 'POST /api/auth/verification/resend/';
const UNVERIFIED = { ...USER_ME, email_verified: false };
const TEXT =
  'Please verify your email address. We sent a link to sam@example.com; you will need it to sign in next time.';

function start({
  me = reply(200, UNVERIFIED),
  resend = reply(200, { sent: true, detail: 'Sent.' }),
  path = '/',
  auth = signedIn,
  strict = false,
  early = false,
}: {
  me?: Handler;
  resend?: Handler;
  path?: string;
  auth?: typeof signedIn | typeof anonymous;
  strict?: boolean;
  /** The account is asked before React renders, as main.tsx does. */
  early?: boolean;
} = {}) {
  const network = mockFetch({ [ME]: me, [RESEND]: resend });
  if (early) checkAccountEarly();
  const app = renderRoutes(routes, { path, auth, strict });
  return { ...network, ...app };
}

const reminder = () => screen.queryByRole('region', { name: 'Email verification' });

describe('the email verification reminder', () => {
  it('tells a signed-in, unverified user to verify, on every page, asking the server once', async () => {
    const { router, calls } = start();
    const region = await screen.findByRole('region', { name: 'Email verification' });
    expect(region).toHaveTextContent(TEXT);
    // Under the nav bar, before the page.
    expect(screen.getByRole('navigation', { name: 'Main' }).compareDocumentPosition(region)).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );
    expect(region.compareDocumentPosition(screen.getByRole('main'))).toBe(Node.DOCUMENT_POSITION_FOLLOWING);

    for (const path of ['/ana-lima', '/no/such/page', '/profile']) {
      await act(() => router.navigate(path));
      expect(reminder()).toBeInTheDocument();
    }
    // The profile page (loaded on demand) reads the account itself; the reminder asked only once, at sign-in.
    await waitFor(() => expect(calls(ME).length).toBe(2));
  });

  it('appears in the first render, with a signed-in page, when the page carried the session and account', async () => {
    const { calls } = mockFetch({ [ME]: reply(200, UNVERIFIED) });
    // As main.tsx does before React starts.
    checkAccountEarly();
    await accountEarlySettled();
    renderRoutes(routes, { path: '/', auth: signedIn, initialAuth: signedIn });
    // No waiting for anything: the reminder and the signed-in page are there as the first render commits.
    expect(reminder()).toHaveTextContent(TEXT);
    expect(screen.getByRole('link', { name: 'Begin Chat' })).toBeInTheDocument();
    expect(screen.queryByText('Loading')).not.toBeInTheDocument();
    // The provider took the early answer instead of asking again.
    await act(() => new Promise((resolve) => setTimeout(resolve, 50)));
    expect(calls(ME)).toHaveLength(1);
    expect(reminder()).toHaveTextContent(TEXT);
  });

  it('asks only once across pages that do not read the account', async () => {
    const { router, calls } = start();
    await screen.findByRole('region', { name: 'Email verification' });
    for (const path of ['/ana-lima', '/no/such/page', '/']) await act(() => router.navigate(path));
    expect(calls(ME)).toHaveLength(1);
  });

  it('is not shown on the verify-email pages', async () => {
    const { router } = start({ path: '/ana-lima' });
    await screen.findByRole('region', { name: 'Email verification' });
    await act(() => router.navigate('/auth/verify-email'));
    expect(await screen.findByText('Invalid verification link')).toBeInTheDocument();
    expect(reminder()).not.toBeInTheDocument();
    await act(() => router.navigate('/'));
    expect(reminder()).toBeInTheDocument();
  });

  it('mails a new link from Resend and says Sent!', async () => {
    const sent = deferred<Reply>();
    const { calls } = start({ resend: () => sent.promise });
    const region = await screen.findByRole('region', { name: 'Email verification' });
    const button = within(region).getByRole('button', { name: 'Resend' });
    await userEvent.click(button);
    expect(button).toHaveTextContent('Sending...');
    expect(button).toHaveAttribute('aria-disabled', 'true');
    sent.resolve(reply(200, { sent: true, detail: 'Sent.' }));
    await waitFor(() => expect(button).toHaveTextContent('Sent!'));
    expect(within(region).getByRole('status')).toHaveTextContent(
      'A new verification link was sent to sam@example.com.',
    );
    expect(calls(RESEND).map((c) => c.body)).toEqual([{ email: 'sam@example.com' }]);
    // Focus stays on the button, and a second click sends nothing more.
    expect(button).toHaveFocus();
    await userEvent.click(button);
    expect(calls(RESEND)).toHaveLength(1);
  });

  it('says when a link went out moments ago instead of "Sent!" (issue 10)', async () => {
    start({ resend: reply(200, { sent: false, retry_after: 95, detail: 'We sent one a moment ago.' }) });
    const region = await screen.findByRole('region', { name: 'Email verification' });
    const button = within(region).getByRole('button', { name: 'Resend' });
    await userEvent.click(button);
    // Shown beside the button, not only announced.
    const text = region.querySelector('.verify-reminder-text');
    await waitFor(() => expect(text).toHaveTextContent('We sent one a moment ago; you can ask again in 2 minutes.'));
    expect(within(region).getByRole('status')).toHaveTextContent(
      'We sent one a moment ago; you can ask again in 2 minutes.',
    );
    expect(button).not.toHaveTextContent('Sent!');
    expect(button).toHaveAttribute('aria-disabled', 'true');
  });

  it('offers Resend again once the cooldown it named is over, without a reload', async () => {
    start({ resend: reply(200, { sent: false, retry_after: 1, detail: 'We sent one a moment ago.' }) });
    const region = await screen.findByRole('region', { name: 'Email verification' });
    const button = within(region).getByRole('button', { name: 'Resend' });
    await userEvent.click(button);
    await waitFor(() => expect(button).toHaveAttribute('aria-disabled', 'true'));
    await waitFor(() => expect(button).not.toHaveAttribute('aria-disabled'), { timeout: 3000 });
    expect(region).not.toHaveTextContent('We sent one a moment ago');
  });

  it('says so when the new link could not be sent', async () => {
    start({ resend: reply(429, { error: 'Too many requests', code: 'rate_limited' }) });
    const region = await screen.findByRole('region', { name: 'Email verification' });
    await userEvent.click(within(region).getByRole('button', { name: 'Resend' }));
    expect(await within(region).findByRole('alert')).toHaveTextContent('Failed to resend verification email.');
    expect(within(region).getByRole('button', { name: 'Resend' })).not.toHaveAttribute('aria-disabled');
  });

  it('stays dismissed for the rest of the browser session, for that user', async () => {
    const first = start();
    const region = await screen.findByRole('region', { name: 'Email verification' });
    await userEvent.click(within(region).getByRole('button', { name: 'Dismiss' }));
    expect(reminder()).not.toBeInTheDocument();
    expect(window.sessionStorage.getItem(REMINDER_DISMISSED_KEY)).toBe('1');
    await act(() => first.router.navigate('/ana-lima'));
    expect(reminder()).not.toBeInTheDocument();
    first.unmount();

    // A reload in the same tab: still dismissed.
    const again = start();
    await waitFor(() => expect(again.calls(ME)).toHaveLength(1));
    await act(() => Promise.resolve());
    expect(reminder()).not.toBeInTheDocument();
    again.unmount();

    // Someone else signing in on this tab is reminded.
    start({ auth: { status: 'authenticated', user: { id: 2, email: 'kim@example.com' } } });
    expect(await screen.findByRole('region', { name: 'Email verification' })).toBeInTheDocument();
  });

  it('is not shown to verified users, nor to (or asked for) signed-out visitors', async () => {
    const verified = start({ me: reply(200, USER_ME) });
    await waitFor(() => expect(verified.calls(ME)).toHaveLength(1));
    await act(() => Promise.resolve());
    expect(reminder()).not.toBeInTheDocument();
    verified.unmount();

    const visitor = start({ auth: anonymous });
    expect(await screen.findByRole('link', { name: 'Get Started' })).toBeInTheDocument();
    expect(visitor.calls(ME)).toHaveLength(0);
    expect(reminder()).not.toBeInTheDocument();
  });

  it('shows a signed-in page together with the reminder, never pushed down by it', async () => {
    const answer = deferred<Reply>();
    start({ path: '/auth/change-password', me: () => answer.promise });
    // The session is known; the page waits (showing nothing new) for the account.
    await screen.findByRole('navigation', { name: 'Main' });
    await act(() => Promise.resolve());
    expect(screen.queryByRole('heading', { name: 'Change Password' })).not.toBeInTheDocument();
    expect(screen.queryByRole('status')).not.toBeInTheDocument();
    answer.resolve(reply(200, UNVERIFIED));
    expect(await screen.findByRole('heading', { name: 'Change Password' })).toBeInTheDocument();
    expect(reminder()).toBeInTheDocument();
  });

  it('shows a signed-in page when the account cannot be read, without the reminder', async () => {
    start({
      path: '/auth/change-password',
      me: reply(500, { error: 'Internal server error', code: 'internal_error' }),
    });
    expect(await screen.findByRole('heading', { name: 'Change Password' })).toBeInTheDocument();
    expect(reminder()).not.toBeInTheDocument();
  });

  it('shows the page and the reminder in StrictMode (an aborted first check does not end the wait)', async () => {
    const { calls } = start({ path: '/auth/change-password', strict: true });
    expect(await screen.findByRole('heading', { name: 'Change Password' })).toBeInTheDocument();
    expect(reminder()).toBeInTheDocument();
    expect(calls(ME).length).toBeGreaterThanOrEqual(1);
  });

  it('takes the answer asked before React rendered, once, when it is the signed-in user’s', async () => {
    const { calls } = start({ early: true, path: '/auth/change-password' });
    expect(await screen.findByRole('heading', { name: 'Change Password' })).toBeInTheDocument();
    expect(reminder()).toHaveTextContent(TEXT);
    expect(calls(ME)).toHaveLength(1);
  });

  it.each([
    ['for someone else', reply(200, { ...UNVERIFIED, id: 2, email: 'kim@example.com' })],
    ['a failure (asked while signed out)', reply(403, { error: 'Not signed in.', code: 'not_authenticated' })],
  ])('asks again when the early answer was %s', async (_, first) => {
    let asked = 0;
    const { calls } = start({ early: true, me: () => (asked++ === 0 ? first : reply(200, UNVERIFIED)) });
    expect(await screen.findByRole('region', { name: 'Email verification' })).toHaveTextContent(TEXT);
    expect(calls(ME)).toHaveLength(2);
  });

  it('stays away when the account cannot be read', async () => {
    const { calls } = start({ me: reply(500, { error: 'Internal server error', code: 'internal_error' }) });
    await waitFor(() => expect(calls(ME)).toHaveLength(1));
    await act(() => Promise.resolve());
    expect(reminder()).not.toBeInTheDocument();
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });
});
