import { act, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import {
  ALLAUTH,
  allauthErrors,
  deferred,
  type Handler,
  mockFetch,
  mockSignIn,
  type Reply,
  reply,
  SESSION_ANONYMOUS,
  SESSION_SIGNED_IN,
  TEST_USER,
  USER_ME,
} from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';
import { fetchSession } from './auth-context.tsx';

const VERIFY = `${ALLAUTH}/auth/email/verify`;
const KEY = 'MQ:1u2v3w:abcDEF';

function network(post: Handler) {
  return mockFetch({
    [`GET ${VERIFY}`]: reply(200, {
      status: 200,
      data: { email: 'sam@example.com', user: TEST_USER },
      meta: { is_authenticating: false },
    }),
    [`POST ${VERIFY}`]: post,
  });
}

const open = (key = KEY) => renderRoutes(routes, { path: `/auth/verify-email/${key}`, strict: true });

describe('Verify email', () => {
  it('verifies once (even in StrictMode), then goes to sign in after 2 s', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const answer = deferred<Reply>();
    const { calls } = network(() => answer.promise);
    const { router } = open();
    expect(await screen.findByRole('heading', { name: 'Verifying your email...' })).toBeInTheDocument();
    answer.resolve(reply(401, { status: 401, data: { flows: [] }, meta: { is_authenticated: false } }));
    expect(await screen.findByRole('heading', { name: 'Email Verified!' })).toBeInTheDocument();
    expect(screen.getByText('Redirecting you to login...')).toBeInTheDocument();

    expect(calls(`GET ${VERIFY}`)[0]?.headers.get('X-Email-Verification-Key')).toBe(KEY);
    expect(calls(`POST ${VERIFY}`)).toHaveLength(1);
    expect(calls(`POST ${VERIFY}`)[0]?.body).toEqual({ key: KEY });

    await act(() => vi.advanceTimersByTimeAsync(1_500));
    expect(router.state.location.pathname).toBe(`/auth/verify-email/${KEY}`);
    await act(() => vi.advanceTimersByTimeAsync(600));
    expect(router.state.location.pathname).toBe('/auth/login');
  });

  it('goes home instead when verifying also signed the user in', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    mockSignIn(`POST ${VERIFY}`, SESSION_SIGNED_IN);
    const { router } = renderRoutes(routes, { path: `/auth/verify-email/${KEY}`, loadSession: fetchSession });
    expect(await screen.findByRole('heading', { name: 'Email Verified!' })).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Account menu for sam@example.com' })).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(2_100));
    expect(router.state.location.pathname).toBe('/');
  });

  it('verifies a signed-in new user (signup signs them in), then goes on to the onboarding interview', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let verified = false;
    const { calls } = mockFetch({
      // The server answers 200, with the session, to a signed-in browser.
      [`POST ${VERIFY}`]: () => {
        verified = true;
        return SESSION_SIGNED_IN;
      },
      [`GET ${ALLAUTH}/auth/session`]: SESSION_SIGNED_IN,
      'GET /api/users/me/': () => reply(200, { ...USER_ME, email_verified: verified }),
    });
    const { router } = renderRoutes(routes, {
      path: `/auth/verify-email/${KEY}`,
      loadSession: fetchSession,
      strict: true,
    });
    expect(await screen.findByRole('heading', { name: 'Email Verified!' })).toBeInTheDocument();
    expect(screen.getByText('Taking you to Daybook...')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe(`/auth/verify-email/${KEY}`);
    expect(calls(`POST ${VERIFY}`)).toHaveLength(1);
    expect(screen.getByRole('button', { name: 'Account menu for sam@example.com' })).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Email verification' })).not.toBeInTheDocument();

    await act(() => vi.advanceTimersByTimeAsync(2_100));
    await waitFor(() => expect(router.state.location.pathname).toBe('/onboarding'));
    expect(screen.queryByRole('region', { name: 'Email verification' })).not.toBeInTheDocument();
  });

  it('drops the reminder of a signed-in user as soon as the link worked', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const answer = deferred<Reply>();
    mockFetch({
      [`POST ${VERIFY}`]: () => answer.promise,
      // Onboarded already: the link leads home.
      'GET /api/users/me/': (_request, previous) =>
        reply(200, { ...USER_ME, onboarded: true, email_verified: previous > 0 }),
    });
    const { router } = renderRoutes(routes, { path: '/ana-lima', auth: signedIn });
    expect(await screen.findByRole('region', { name: 'Email verification' })).toBeInTheDocument();
    // The user follows the mailed link in this tab.
    await act(() => router.navigate(`/auth/verify-email/${KEY}`));
    expect(screen.queryByRole('region', { name: 'Email verification' })).not.toBeInTheDocument();
    answer.resolve(SESSION_SIGNED_IN);
    expect(await screen.findByRole('heading', { name: 'Email Verified!' })).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(2_100));
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(screen.queryByRole('region', { name: 'Email verification' })).not.toBeInTheDocument();
  });

  it('is reachable when signed in: a link without a key is called invalid, not sent home', async () => {
    mockFetch({ 'GET /api/users/me/': reply(200, USER_ME) });
    const { router } = renderRoutes(routes, { path: '/auth/verify-email', auth: signedIn });
    expect(await screen.findByText('Invalid verification link')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/auth/verify-email');
  });

  it('still verifies when the look-ahead GET fails', async () => {
    mockFetch({
      [`GET ${VERIFY}`]: () => {
        throw new TypeError('Failed to fetch');
      },
      [`POST ${VERIFY}`]: reply(401),
    });
    open();
    expect(await screen.findByRole('heading', { name: 'Email Verified!' })).toBeInTheDocument();
  });

  it('shows Verification Failed for a bad or expired key', async () => {
    network(allauthErrors({ message: 'Invalid or expired key.', code: 'invalid_or_expired_key', param: 'key' }));
    open();
    expect(await screen.findByRole('heading', { name: 'Verification Failed' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('Email verification failed');
    expect(screen.getByRole('link', { name: 'Go to Login' })).toHaveAttribute('href', '/auth/login');
  });

  it('a link opened a second time says the address is verified already and offers sign-in (issue 10)', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    mockFetch({
      [`GET ${VERIFY}`]: reply(409, { status: 409 }),
      [`POST ${VERIFY}`]: reply(409, { status: 409 }),
      [`GET ${ALLAUTH}/auth/session`]: SESSION_ANONYMOUS,
    });
    const { router } = renderRoutes(routes, { path: `/auth/verify-email/${KEY}`, loadSession: fetchSession });
    expect(await screen.findByRole('heading', { name: 'Email Already Verified' })).toBeInTheDocument();
    expect(screen.getByText('This link was used before: your email address is verified.')).toBeInTheDocument();
    expect(screen.queryByText(/Verification Failed/)).not.toBeInTheDocument();
    expect(within(screen.getByRole('main')).getByRole('link', { name: 'Sign In' })).toHaveAttribute(
      'href',
      '/auth/login',
    );
    // It stays, for the person to read and choose.
    await act(() => vi.advanceTimersByTimeAsync(3_000));
    expect(router.state.location.pathname).toBe(`/auth/verify-email/${KEY}`);
  });

  it('says so when something unexpected happens', async () => {
    network(reply(500));
    open();
    expect(await screen.findByText('An unexpected error occurred during verification.')).toBeInTheDocument();
  });

  it('calls a link without a key invalid', async () => {
    const { calls } = mockFetch();
    renderRoutes(routes, { path: '/auth/verify-email' });
    expect(await screen.findByText('Invalid verification link')).toBeInTheDocument();
    expect(calls(`POST ${VERIFY}`)).toHaveLength(0);
  });
});
