import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import {
  ALLAUTH,
  allauthErrors,
  type Handler,
  mockFetch,
  reply,
  SESSION_SIGNED_IN,
  USER_ME,
} from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';

const CHANGE = `POST ${ALLAUTH}/account/password/change`;

function open(change: Handler, user: Pick<typeof userEvent, 'type' | 'click'> = userEvent) {
  const network = mockFetch({ [CHANGE]: change, 'GET /api/users/me/': reply(200, USER_ME) });
  const view = renderRoutes(routes, { path: '/auth/change-password', auth: signedIn });
  const main = within(screen.getByRole('main'));
  const fill = async (current: string, next: string, confirm: string) => {
    if (current) await user.type(await main.findByLabelText('Current Password'), current);
    if (next) await user.type(main.getByLabelText('New Password'), next);
    if (confirm) await user.type(main.getByLabelText('Confirm New Password'), confirm);
    await user.click(main.getByRole('button', { name: 'Change Password' }));
  };
  return { ...network, ...view, main, fill };
}

describe('Change password', () => {
  it('requires all three fields and matching new passwords', async () => {
    const { main, fill, calls } = open(SESSION_SIGNED_IN);
    expect(await main.findByRole('heading', { level: 1, name: 'Change Password' })).toBeInTheDocument();
    await fill('', '', '');
    expect(main.getByText('Current password is required')).toBeInTheDocument();
    expect(main.getByText('New password is required')).toBeInTheDocument();
    expect(main.getByText('Please confirm your new password')).toBeInTheDocument();
    await fill('old password', 'new password 1', 'new password 2');
    expect(main.getByText('New passwords do not match')).toBeInTheDocument();
    expect(calls(CHANGE)).toHaveLength(0);
    expect(main.getByLabelText('Current Password')).toHaveAttribute('autocomplete', 'current-password');
    expect(main.getByLabelText('New Password')).toHaveAttribute('autocomplete', 'new-password');
  });

  it('changes the password, then goes to the profile after 3 s', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const { main, fill, calls, router } = open(SESSION_SIGNED_IN, user);
    await fill('old password', 'new password 1', 'new password 1');
    expect(await main.findByRole('heading', { name: 'Password Changed Successfully!' })).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Go to Profile' })).toHaveAttribute('href', '/profile');
    expect(calls(CHANGE)[0]?.body).toEqual({ current_password: 'old password', new_password: 'new password 1' });

    await act(() => vi.advanceTimersByTimeAsync(2_500));
    expect(router.state.location.pathname).toBe('/auth/change-password');
    await act(() => vi.advanceTimersByTimeAsync(600));
    expect(router.state.location.pathname).toBe('/profile');
    expect(await screen.findByRole('heading', { name: 'Your Account' })).toBeInTheDocument();
  });

  it('shows the failure, and Try Again brings the form back with the fields kept', async () => {
    const { main, fill } = open(
      allauthErrors({
        message: 'Your current password is incorrect.',
        code: 'enter_current_password',
        param: 'current_password',
      }),
    );
    await fill('wrong password', 'new password 1', 'new password 1');
    expect(await main.findByRole('heading', { name: 'Password Change Failed' })).toBeInTheDocument();
    expect(main.getByRole('alert')).toHaveTextContent('Your current password is incorrect.');

    await userEvent.click(main.getByRole('button', { name: 'Try Again' }));
    const current = main.getByLabelText('Current Password');
    expect(current).toHaveValue('wrong password');
    expect(current).toHaveAccessibleDescription('Your current password is incorrect.');
    expect(current).toHaveFocus();
    expect(main.getByLabelText('New Password')).toHaveValue('new password 1');
  });

  it.each([
    ['a refusal without messages', reply(403), 'Failed to change password'],
    [
      'a network failure',
      () => {
        throw new TypeError('Failed to fetch');
      },
      'An error occurred.',
    ],
  ] as [string, Handler, string][])('explains %s', async (_name, handler, message) => {
    const { main, fill } = open(handler);
    await fill('old password', 'new password 1', 'new password 1');
    expect(await main.findByRole('alert')).toHaveTextContent(message);
    expect(main.getByRole('heading', { name: 'Password Change Failed' })).toBeInTheDocument();
  });
});
