import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
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
  type SignInOptions,
  setCookie,
  USER_ME,
} from '../../test/fetch.ts';
import { renderRoutes } from '../../test/render.tsx';
import { fetchSession } from './auth-context.tsx';

const LOGIN = `POST ${ALLAUTH}/auth/login`;
const SESSION = `GET ${ALLAUTH}/auth/session`;

/** The real session check over the fake network: anonymous until a login succeeded. */
const network = (login: Handler, options?: SignInOptions) => mockSignIn(LOGIN, login, options);

async function signIn(email = 'sam@example.com', password = 'correct horse') {
  const main = within(screen.getByRole('main'));
  await userEvent.type(await main.findByLabelText('Email'), email);
  await userEvent.type(main.getByLabelText('Password'), password);
  await userEvent.click(main.getByRole('button', { name: 'Sign In' }));
}

const open = (path = '/auth/login') => renderRoutes(routes, { path, loadSession: fetchSession });

describe('Sign in', () => {
  it('has the fields, links and autocomplete hints of a sign-in form', async () => {
    mockFetch();
    open();
    expect(await screen.findByRole('heading', { level: 1, name: 'Sign In' })).toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toHaveAttribute('autocomplete', 'email');
    // The page's one task: the cursor starts in the email field.
    expect(screen.getByLabelText('Email')).toHaveFocus();
    expect(screen.getByLabelText('Password')).toHaveAttribute('autocomplete', 'current-password');
    expect(screen.getByRole('link', { name: 'Forgot your password?' })).toHaveAttribute(
      'href',
      '/auth/forgot-password',
    );
    const main = within(screen.getByRole('main'));
    expect(main.getByText(/Don't have an account\?/)).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Sign up' })).toHaveAttribute('href', '/auth/signup');
  });

  it('checks the fields before calling the server', async () => {
    const { calls } = mockFetch();
    open();
    const main = within(screen.getByRole('main'));
    await userEvent.click(await main.findByRole('button', { name: 'Sign In' }));
    expect(main.getByText('Email is required')).toBeInTheDocument();
    expect(main.getByText('Password is required')).toBeInTheDocument();
    const email = main.getByLabelText('Email');
    expect(email).toHaveAttribute('aria-invalid', 'true');
    expect(email).toHaveAccessibleDescription('Email is required');
    expect(email).toHaveFocus();

    await userEvent.type(email, 'not-an-email');
    await userEvent.type(main.getByLabelText('Password'), 'short');
    expect(main.getByText('Invalid email address')).toBeInTheDocument();
    expect(main.getByText('Password must be at least 8 characters')).toBeInTheDocument();
    await userEvent.click(main.getByRole('button', { name: 'Sign In' }));
    expect(calls(LOGIN)).toHaveLength(0);
  });

  it("shows the server's message for a wrong password", async () => {
    network(
      allauthErrors({
        message: 'The email address and/or password you specified are not correct.',
        code: 'email_password_mismatch',
        param: 'password',
      }),
    );
    open();
    await signIn();
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The email address and/or password you specified are not correct.',
    );
    expect(screen.getByRole('button', { name: 'Sign In' })).toBeEnabled();
  });

  it('says "Signing in..." and disables the button while waiting', async () => {
    const answer = deferred<Reply>();
    network(() => answer.promise);
    open();
    await signIn();
    expect(await screen.findByRole('button', { name: 'Signing in...' })).toBeDisabled();
    answer.resolve(reply(429));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Too many attempts. Please wait a minute and try again.',
    );
  });

  it('explains an unverified email and links to a new verification mail', async () => {
    network(
      reply(401, {
        status: 401,
        data: { flows: [{ id: 'login' }, { id: 'signup' }, { id: 'verify_email', is_pending: true }] },
        meta: { is_authenticated: false },
      }),
    );
    open();
    await signIn('new@example.com');
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Your email address has not been verified yet.')).toBeInTheDocument();
    expect(alert).toHaveTextContent(/check your inbox for the verification link/);
    expect(within(alert).getByRole('link', { name: 'Resend verification email' })).toHaveAttribute(
      'href',
      '/auth/resend-verification?email=new%40example.com',
    );
  });

  it('treats an error mentioning verification as unverified too', async () => {
    network(allauthErrors({ message: 'E-mail is not verified.', code: 'account_email_verification_required' }));
    open();
    await signIn();
    expect(await screen.findByText('Your email address has not been verified yet.')).toBeInTheDocument();
  });

  it('falls back to generic messages', async () => {
    network(reply(401));
    open();
    await signIn();
    expect(await screen.findByRole('alert')).toHaveTextContent('Login failed. Please check your credentials.');

    network(() => {
      throw new TypeError('Failed to fetch');
    });
    await userEvent.click(screen.getByRole('button', { name: 'Sign In' }));
    await waitFor(() =>
      expect(screen.getByRole('alert')).toHaveTextContent('An unexpected error occurred. Please try again.'),
    );
  });

  it('signs in, rechecks the session and lands on ?next=, replacing the sign-in page', async () => {
    setCookie('csrftoken=cookie-token');
    const { calls, requests } = network(SESSION_SIGNED_IN);
    const { router } = open(`/auth/login?next=${encodeURIComponent('/memories?page=2')}`);
    await signIn('sam@example.com', 'correct horse');

    expect(await screen.findByRole('heading', { name: 'Your Memories' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/memories');
    expect(router.state.location.search).toBe('?page=2');
    expect(router.state.historyAction).toBe('REPLACE');
    expect(screen.getByRole('button', { name: 'Account menu for sam@example.com' })).toBeInTheDocument();

    const [login] = calls(LOGIN);
    expect(login?.body).toEqual({ email: 'sam@example.com', password: 'correct horse' });
    expect(login?.headers.get('X-CSRFToken')).toBe('cookie-token');
    expect(login?.headers.get('X-Requested-With')).toBe('XMLHttpRequest');
    expect(login?.headers.get('Content-Type')).toBe('application/json');
    expect(login?.credentials).toBe('same-origin');
    // The session is asked again after the login answer.
    expect(requests.findLastIndex((r) => r.path.endsWith('/auth/session'))).toBeGreaterThan(
      requests.findIndex((r) => r.path.endsWith('/auth/login')),
    );
  });

  it.each([['https://evil.example/steal'], ['//evil.example/steal'], ['/\\evil.example'], ['javascript:alert(1)']])(
    'never follows an outside ?next= (%s)',
    async (next) => {
      network(SESSION_SIGNED_IN);
      const { router } = open(`/auth/login?next=${encodeURIComponent(next)}`);
      await signIn();
      await waitFor(() => expect(router.state.location.pathname).toBe('/'));
      expect(await screen.findByRole('link', { name: 'Begin Chat' })).toBeInTheDocument();
    },
  );

  it.each([
    [false, '/onboarding'],
    [true, '/'],
  ])('a plain sign-in of someone onboarded=%s lands on %s', async (onboarded, landing) => {
    network(SESSION_SIGNED_IN, { routes: { 'GET /api/users/me/': reply(200, { ...USER_ME, onboarded }) } });
    const { router } = open();
    await signIn();
    await waitFor(() => expect(router.state.location.pathname).toBe(landing));
    expect(router.state.historyAction).toBe('REPLACE');
  });

  it('returns to the page the route guard remembered', async () => {
    network(SESSION_SIGNED_IN);
    const { router } = open('/resources?page=3');
    expect(await screen.findByRole('heading', { name: 'Sign In' })).toBeInTheDocument();
    await signIn();
    await waitFor(() => expect(router.state.location.pathname).toBe('/resources'));
    expect(router.state.location.search).toBe('?page=3');
  });

  it('reports a login whose session never shows up, after rechecking twice', async () => {
    const { calls } = network(SESSION_SIGNED_IN, { after: SESSION_ANONYMOUS });
    const { router } = open();
    await signIn();
    expect(
      await screen.findByText('Authentication failed after login. Session may not be valid.', {}, { timeout: 3000 }),
    ).toBeInTheDocument();
    expect(calls(SESSION)).toHaveLength(3);
    expect(router.state.location.pathname).toBe('/auth/login');
  });
});

describe('Sign in after the session ended elsewhere', () => {
  /** The account API's answer to a browser whose session a password change on another device ended. */
  const ENDED_BY_PASSWORD_CHANGE = reply(401, {
    status: 401,
    data: { flows: [{ id: 'login' }, { id: 'signup' }] },
    meta: { is_authenticated: false, session_ended: 'password_changed' },
  });
  const NOTICE = 'You were signed out because your password was changed. Sign in with your new password.';

  it('says why when a page that needs a session sends the browser to sign in', async () => {
    network(SESSION_SIGNED_IN, { before: ENDED_BY_PASSWORD_CHANGE });
    const { router } = open('/chat');
    // Announced politely: a status, not an alert.
    expect(await screen.findByText(NOTICE)).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent(NOTICE);
    expect(router.state.location.pathname).toBe('/auth/login');
    expect(router.state.location.search).toBe(`?next=${encodeURIComponent('/chat')}`);
    // Above the form, which is still the page's one task.
    expect(screen.getByLabelText('Email')).toHaveFocus();

    await signIn();
    await waitFor(() => expect(router.state.location.pathname).toBe('/chat'));
    expect(screen.queryByText(NOTICE)).toBeNull();
  });

  it('stays beside the error of a sign-in with the old password', async () => {
    network(
      (_request, n) =>
        n === 0
          ? allauthErrors({
              message: 'The email address and/or password you specified are not correct.',
              code: 'email_password_mismatch',
            })
          : SESSION_SIGNED_IN,
      { before: ENDED_BY_PASSWORD_CHANGE },
    );
    open();
    expect(await screen.findByText(NOTICE)).toBeInTheDocument();
    await signIn('sam@example.com', 'the old password');
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The email address and/or password you specified are not correct.',
    );
    expect(screen.getByText(NOTICE)).toBeInTheDocument();
  });

  it('says nothing of the kind to a browser that simply is not signed in', async () => {
    mockFetch();
    open('/chat');
    expect(await screen.findByRole('heading', { name: 'Sign In' })).toBeInTheDocument();
    expect(screen.queryByText(/You were signed out/)).toBeNull();
    expect(screen.queryByRole('status')).toBeNull();
  });
});
