import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { ALLAUTH, allauthErrors, mockFetch, type Reply, reply, TEST_USER } from '../../test/fetch.ts';
import { renderRoutes } from '../../test/render.tsx';

const REQUEST = 'POST /api/auth/password/reset/';
const RESET = `${ALLAUTH}/auth/password/reset`;
const KEY = '1-cd2x3y-0123456789abcdef';

describe('Reset password (request)', () => {
  it('sends the mail, says so and goes to /login (then sign in) after 3 s', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const { calls } = mockFetch({ [REQUEST]: reply(200, { detail: 'Password reset e-mail has been sent.' }) });
    const { router } = renderRoutes(routes, { path: '/auth/forgot-password' });
    expect(await screen.findByRole('heading', { level: 1, name: 'Reset Password' })).toBeInTheDocument();
    const main = within(screen.getByRole('main'));
    await user.type(main.getByLabelText('Email'), 'sam@example.com');
    await user.click(main.getByRole('button', { name: 'Reset Password' }));

    expect(await main.findByText('Password reset email sent. Please check your inbox.')).toBeInTheDocument();
    expect(calls(REQUEST)[0]?.body).toEqual({ email: 'sam@example.com' });
    await act(() => vi.advanceTimersByTimeAsync(2_500));
    expect(router.state.location.pathname).toBe('/auth/forgot-password');
    await act(() => vi.advanceTimersByTimeAsync(600));
    expect(router.state.location.pathname).toBe('/auth/login');
    expect(await screen.findByRole('heading', { name: 'Sign In' })).toBeInTheDocument();
  });

  it('shows an error when the request fails', async () => {
    mockFetch({ [REQUEST]: { status: 500, text: 'oops' } });
    renderRoutes(routes, { path: '/auth/forgot-password' });
    await userEvent.type(await screen.findByLabelText('Email'), 'sam@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Reset Password' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('An error occurred. Please try again.');
  });

  it("shows the server's error on the email field", async () => {
    mockFetch({
      [REQUEST]: reply(400, {
        error: 'Validation failed',
        code: 'validation_error',
        field_errors: { email: ['Enter a valid email address.'] },
      }),
    });
    renderRoutes(routes, { path: '/auth/forgot-password' });
    await userEvent.type(await screen.findByLabelText('Email'), 'sam@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Reset Password' }));
    expect(await screen.findByText('Enter a valid email address.')).toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toHaveAttribute('aria-invalid', 'true');
  });

  it('/login opens sign in with the same query', async () => {
    mockFetch();
    const { router } = renderRoutes(routes, { path: '/login?next=%2Fchat' });
    expect(await screen.findByRole('heading', { name: 'Sign In' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/auth/login');
    expect(router.state.location.search).toBe('?next=%2Fchat');
  });
});

describe('Reset password (new password from the mailed link)', () => {
  const valid = reply(200, { status: 200, data: { user: TEST_USER } });
  const open = (post: Reply, check: Reply = valid) => {
    const network = mockFetch({ [`GET ${RESET}`]: check, [`POST ${RESET}`]: post });
    renderRoutes(routes, { path: `/auth/reset-password/${KEY}` });
    return network;
  };

  it('says when the link is invalid or expired, and offers a new one', async () => {
    const { calls } = open(
      reply(401),
      allauthErrors({ message: 'The password reset token was invalid.', code: 'invalid_password_reset', param: 'key' }),
    );
    expect(await screen.findByText('This reset link is invalid or has expired.')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Request a new link' })).toHaveAttribute('href', '/auth/forgot-password');
    expect(calls(`GET ${RESET}`)[0]?.headers.get('X-Password-Reset-Key')).toBe(KEY);
  });

  it('checks the new password, sets it, and sends the user to sign in', async () => {
    const { calls } = open(reply(401, { status: 401, data: { flows: [] }, meta: { is_authenticated: false } }));
    const main = within(await screen.findByRole('main'));
    expect(await main.findByRole('heading', { name: 'Choose a New Password' })).toBeInTheDocument();
    expect(main.getByText('sam@example.com')).toBeInTheDocument();
    await userEvent.type(main.getByLabelText('New Password'), 'a brand new one');
    await userEvent.type(main.getByLabelText('Confirm New Password'), 'a brand new two');
    await userEvent.click(main.getByRole('button', { name: 'Set New Password' }));
    expect(main.getByText('Passwords do not match')).toBeInTheDocument();
    expect(calls(`POST ${RESET}`)).toHaveLength(0);

    await userEvent.clear(main.getByLabelText('Confirm New Password'));
    await userEvent.type(main.getByLabelText('Confirm New Password'), 'a brand new one');
    await userEvent.click(main.getByRole('button', { name: 'Set New Password' }));
    expect(await main.findByText('Your password has been reset.')).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Sign In' })).toHaveAttribute('href', '/auth/login');
    expect(calls(`POST ${RESET}`)[0]?.body).toEqual({ key: KEY, password: 'a brand new one' });
  });

  it("shows the server's password errors", async () => {
    open(allauthErrors({ message: 'This password is too common.', code: 'password_too_common', param: 'password' }));
    const password = await screen.findByLabelText('New Password');
    await userEvent.type(password, 'password123');
    await userEvent.type(screen.getByLabelText('Confirm New Password'), 'password123');
    await userEvent.click(screen.getByRole('button', { name: 'Set New Password' }));
    expect(await screen.findByText('This password is too common.')).toBeInTheDocument();
    expect(password).toHaveAccessibleDescription(/This password is too common\./);
  });
});
