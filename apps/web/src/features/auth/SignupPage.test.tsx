import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { routes } from '../../app/routes.tsx';
import {
  ALLAUTH,
  deferred,
  type Handler,
  mockFetch,
  mockSignIn,
  type Reply,
  reply,
  SESSION_ANONYMOUS,
} from '../../test/fetch.ts';
import { renderRoutes, SITE } from '../../test/render.tsx';
import { fetchSession } from './auth-context.tsx';

const SIGNUP = 'POST /api/auth/signup/';
const LOOKUP = 'GET /api/auth/invite/';

/** The invite of the link: usable by any address unless the test says otherwise. */
const ANY_ADDRESS = reply(200, { valid: true, email: null });

/** The real session check over the fake network: anonymous until a signup succeeded (it signs in). */
const network = (signup: Reply, lookup: Handler = ANY_ADDRESS) =>
  mockSignIn(SIGNUP, signup, { routes: { [LOOKUP]: lookup } });

const open = (path = '/auth/signup') => renderRoutes(routes, { path, loadSession: fetchSession });

async function fill(values: { token?: string; email?: string; password?: string; confirm?: string }) {
  const main = within(screen.getByRole('main'));
  if (values.token) await userEvent.type(main.getByLabelText('Invite Token'), values.token);
  if (values.email) await userEvent.type(main.getByLabelText('Email'), values.email);
  if (values.password) await userEvent.type(main.getByLabelText('Password'), values.password);
  if (values.confirm) await userEvent.type(main.getByLabelText('Confirm Password'), values.confirm);
  await userEvent.click(main.getByRole('button', { name: 'Sign Up' }));
}

describe('Sign up', () => {
  it('shows every validation message of the spec', async () => {
    const { calls } = network(reply(201));
    open();
    expect(await screen.findByRole('heading', { level: 1, name: 'Create Account' })).toBeInTheDocument();
    await fill({});
    const main = within(screen.getByRole('main'));
    for (const message of [
      'Invite token is required',
      'Email is required',
      'Password is required',
      'Please confirm your password',
    ]) {
      expect(main.getByText(message)).toBeInTheDocument();
    }
    expect(main.getByLabelText('Invite Token')).toHaveFocus();

    await fill({ token: 'abc', email: 'not-an-email', password: 'short', confirm: 'different' });
    expect(main.getByText('Invalid email address')).toBeInTheDocument();
    expect(main.getByText('Password must be at least 8 characters')).toBeInTheDocument();
    expect(main.getByText('Passwords do not match')).toBeInTheDocument();
    expect(main.getByLabelText('Confirm Password')).toHaveAccessibleDescription('Passwords do not match');
    expect(calls(SIGNUP)).toHaveLength(0);
  });

  it('prefills the invite token from ?itoken= when the invite cannot be looked up, and links to sign in', async () => {
    network(reply(201), { status: 502, text: 'Bad gateway' });
    open('/auth/signup?itoken=abc');
    expect(await screen.findByLabelText('Invite Token')).toHaveValue('abc');
    const main = within(screen.getByRole('main'));
    expect(main.getByRole('link', { name: 'Sign in' })).toHaveAttribute('href', '/auth/login');
    // Someone without an invite learns whom to ask, and where: the about page, with its ways to ask.
    expect(main.getByRole('link', { name: 'Request one from Ana Lima' })).toHaveAttribute('href', '/ana-lima');
    expect(main.getByLabelText('Password')).toHaveAttribute('autocomplete', 'new-password');
    expect(main.getByLabelText('Confirm Password')).toHaveAttribute('autocomplete', 'new-password');
  });

  it('names who runs this Daybook when it gives no way to reach them, and offers no dead link', async () => {
    network(reply(201));
    renderRoutes(routes, {
      path: '/auth/signup',
      loadSession: fetchSession,
      site: {
        status: 'ready',
        site: { creator: { ...SITE.creator, name: 'Daybook Maintainers', email: null, links: [] } },
      },
    });
    const main = within(await screen.findByRole('main'));
    expect(await main.findByText('No invite yet? Ask Daybook Maintainers, who runs this Daybook.')).toBeInTheDocument();
    expect(main.queryByRole('link', { name: /request/i })).toBeNull();
  });

  it("shows the server's field errors beside their fields, and its message", async () => {
    network(
      reply(400, {
        error: 'Please correct the errors below.',
        code: 'validation_error',
        field_errors: {
          email: ['A user is already registered with this email address.'],
          inviteToken: ['This invite token is invalid or has expired.'],
        },
      }),
    );
    open('/auth/signup');
    await screen.findByLabelText('Invite Token');
    await fill({ token: 'old', email: 'taken@example.com', password: 'long enough 1', confirm: 'long enough 1' });
    const main = within(screen.getByRole('main'));
    expect(await main.findByLabelText('Email')).toHaveAccessibleDescription(
      'A user is already registered with this email address.',
    );
    expect(main.getByLabelText('Invite Token')).toHaveAccessibleDescription(
      'This invite token is invalid or has expired.',
    );
    expect(main.getByText('Please correct the errors below.')).toBeInTheDocument();
    // Editing a field clears its server error.
    await userEvent.type(main.getByLabelText('Email'), 'x');
    expect(main.queryByText('A user is already registered with this email address.')).not.toBeInTheDocument();
  });

  it('falls back to the generic signup message', async () => {
    network({ status: 502, text: 'Bad gateway' });
    open('/auth/signup?itoken=abc');
    await screen.findByLabelText('Email');
    await fill({ email: 'sam@example.com', password: 'long enough 1', confirm: 'long enough 1' });
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Signup failed. Please check your information and try again.',
    );
  });

  it('an address that already has an account gets "check your email", not an error (issue 10)', async () => {
    // The server answers as for a new account but starts no session, and mails the owner.
    mockFetch({
      [SIGNUP]: reply(201, { verification_sent: true }),
      [LOOKUP]: ANY_ADDRESS,
      [`GET ${ALLAUTH}/auth/session`]: SESSION_ANONYMOUS,
    });
    const { router } = open('/auth/signup?itoken=abc');
    await screen.findByLabelText('Email');
    await fill({ email: 'sam@example.com', password: 'long enough 1', confirm: 'long enough 1' });
    expect(await screen.findByRole('heading', { name: 'Check Your Email' })).toBeInTheDocument();
    expect(screen.getByText(/We sent a message to/)).toHaveTextContent(
      'We sent a message to sam@example.com. Open it to continue.',
    );
    expect(screen.getByRole('link', { name: 'Go to Sign In' })).toHaveAttribute('href', '/auth/login');
    expect(screen.queryByText(/already registered/)).not.toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/auth/signup');
  });

  it('creates the account, picks up the new session and opens the demo tour', async () => {
    const { calls } = network(reply(201, { verification_sent: true }));
    const { router } = open('/auth/signup?itoken=abc');
    await screen.findByLabelText('Email');
    await fill({ email: ' sam@example.com ', password: 'long enough 1', confirm: 'long enough 1' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/demo-tour'));
    expect(await screen.findByRole('heading', { name: 'Demo Tour' }, { timeout: 10_000 })).toBeInTheDocument();
    const [signup] = calls(SIGNUP);
    expect(signup?.body).toEqual({
      email: 'sam@example.com',
      password1: 'long enough 1',
      password2: 'long enough 1',
      inviteToken: 'abc',
    });
    // No csrftoken cookie yet: the token comes from the account API's /config.
    expect(signup?.headers.get('X-CSRFToken')).toBe('config-token');
    expect(calls(`GET ${ALLAUTH}/auth/session`).length).toBeGreaterThanOrEqual(2);
  });
});

describe('Sign up from an invite link', () => {
  const BOUND = reply(200, { valid: true, email: 'friend@example.org' });

  it('asks about the invite, fills in and locks the address it is for, and asks for no token', async () => {
    const { calls } = network(reply(201, { verification_sent: true }), BOUND);
    const { router } = open('/auth/signup?itoken=abc%2B1');
    const main = within(await screen.findByRole('main'));
    const email = await main.findByLabelText('Email');
    expect(email).toHaveValue('friend@example.org');
    expect(email).toHaveAttribute('readonly');
    expect(email).toHaveAccessibleDescription('This invite is for this address only, so it cannot be changed.');
    // The token came with the link: no field, and no instructions to enter it.
    expect(main.queryByLabelText('Invite Token')).toBeNull();
    expect(main.queryByText(/invite token/i)).toBeNull();
    expect(main.getByText("You're invited. Choose a password to create your account.")).toBeInTheDocument();
    // They have an invite: nobody is told where to ask for one.
    expect(main.queryByText(/No invite yet/)).toBeNull();
    expect(calls(LOOKUP).map((r) => r.search)).toEqual(['?token=abc%2B1']);

    await userEvent.type(email, 'x');
    expect(email).toHaveValue('friend@example.org');
    await fill({ password: 'long enough 1', confirm: 'long enough 1' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/demo-tour'));
    expect(calls(SIGNUP)[0]?.body).toEqual({
      email: 'friend@example.org',
      password1: 'long enough 1',
      password2: 'long enough 1',
      inviteToken: 'abc+1',
    });
  });

  it('an invite for any address leaves the address to fill in, and still asks for no token', async () => {
    const { calls } = network(reply(201, { verification_sent: true }));
    open('/auth/signup?itoken=abc');
    const main = within(await screen.findByRole('main'));
    const email = await main.findByLabelText('Email');
    expect(email).toHaveValue('');
    expect(email).not.toHaveAttribute('readonly');
    expect(main.queryByLabelText('Invite Token')).toBeNull();
    await fill({ email: 'sam@example.com', password: 'long enough 1', confirm: 'long enough 1' });
    await waitFor(() => expect(calls(SIGNUP)).toHaveLength(1));
    expect(calls(SIGNUP)[0]?.body).toMatchObject({ email: 'sam@example.com', inviteToken: 'abc' });
  });

  it('a link that can no longer be used says why and whom to ask, and takes another token', async () => {
    network(reply(201), reply(404, { error: 'This invite has already been used.', code: 'not_found' }));
    open('/auth/signup?itoken=used');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent("This invite link can't be used.");
    expect(alert).toHaveTextContent('This invite has already been used.');
    expect(within(alert).getByRole('link', { name: 'Request one from Ana Lima' })).toHaveAttribute('href', '/ana-lima');
    expect(alert).toHaveTextContent('Need a new invite? Request one from Ana Lima');
    const main = within(screen.getByRole('main'));
    expect(main.getByLabelText('Invite Token')).toHaveValue('');
    expect(main.getByLabelText('Email')).not.toHaveAttribute('readonly');
    // Said once, in the notice.
    expect(main.getAllByRole('link', { name: /Request one from/ })).toHaveLength(1);
  });

  it('names who runs this Daybook in that notice when it gives no way to reach them', async () => {
    network(reply(201), reply(404, { error: 'This invite has expired.', code: 'not_found' }));
    renderRoutes(routes, {
      path: '/auth/signup?itoken=late',
      loadSession: fetchSession,
      site: {
        status: 'ready',
        site: { creator: { ...SITE.creator, name: 'Daybook Maintainers', email: null, links: [] } },
      },
    });
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Need a new invite? Ask Daybook Maintainers, who runs this Daybook.',
    );
  });

  it("shows the server's word on the link's token as the form's message, there being no field for it", async () => {
    network(
      reply(400, {
        error: 'This invite has expired.',
        code: 'validation_error',
        field_errors: { inviteToken: ['This invite has expired.'] },
      }),
      BOUND,
    );
    open('/auth/signup?itoken=abc');
    await screen.findByDisplayValue('friend@example.org');
    await fill({ password: 'long enough 1', confirm: 'long enough 1' });
    expect(await screen.findByRole('alert')).toHaveTextContent('This invite has expired.');
  });

  it('says it is checking the invite meanwhile', async () => {
    const answer = deferred<Reply>();
    network(reply(201), () => answer.promise);
    open('/auth/signup?itoken=abc');
    expect(await screen.findByText('Checking your invite...')).toBeInTheDocument();
    expect(screen.queryByLabelText('Email')).toBeNull();
    answer.resolve(BOUND);
    expect(await screen.findByDisplayValue('friend@example.org')).toBeInTheDocument();
  });
});
