import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { mockFetch, reply } from '../../test/fetch.ts';
import { renderRoutes } from '../../test/render.tsx';

const RESEND = 'POST /api/auth/verification/resend/';

describe('Resend verification', () => {
  it('prefills the email, sends a new link and offers the way back', async () => {
    const { calls } = mockFetch({
      [RESEND]: reply(200, { sent: true, detail: 'If this address needs verifying, a new link is on its way.' }),
    });
    renderRoutes(routes, { path: '/auth/resend-verification?email=new%40example.com' });
    expect(await screen.findByRole('heading', { level: 1, name: 'Resend Verification Email' })).toBeInTheDocument();
    const main = within(screen.getByRole('main'));
    expect(main.getByLabelText('Email')).toHaveValue('new@example.com');
    expect(main.getByRole('link', { name: 'Back to Sign In' })).toHaveAttribute('href', '/auth/login');

    await userEvent.click(main.getByRole('button', { name: 'Resend Verification Email' }));
    expect(await main.findByText(/A new verification email has been sent to/)).toHaveTextContent('new@example.com');
    expect(main.getByText(/spam/)).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Return to Login' })).toHaveAttribute('href', '/auth/login');
    expect(calls(RESEND)[0]?.body).toEqual({ email: 'new@example.com' });
  });

  it('within the 3-minute cooldown, says no new mail went out and when to ask again (issue 10)', async () => {
    mockFetch({
      [RESEND]: reply(200, {
        sent: false,
        retry_after: 170,
        detail: 'We sent one a moment ago; you can ask again in 3 minutes.',
      }),
    });
    renderRoutes(routes, { path: '/auth/resend-verification?email=new%40example.com' });
    const main = within(await screen.findByRole('main'));
    await userEvent.click(await main.findByRole('button', { name: 'Resend Verification Email' }));
    expect(await main.findByText(/a moment ago/)).toHaveTextContent(
      'We sent one to new@example.com a moment ago; you can ask again in 3 minutes.',
    );
    expect(main.queryByText(/A new verification email has been sent/)).not.toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Return to Login' })).toHaveAttribute('href', '/auth/login');
  });

  it('checks the address first', async () => {
    const { calls } = mockFetch();
    renderRoutes(routes, { path: '/auth/resend-verification' });
    await userEvent.click(await screen.findByRole('button', { name: 'Resend Verification Email' }));
    expect(screen.getByText('Email is required')).toBeInTheDocument();
    expect(calls(RESEND)).toHaveLength(0);
  });

  it('reports a failure', async () => {
    mockFetch({ [RESEND]: reply(500, { error: 'Internal server error', code: 'internal_error' }) });
    renderRoutes(routes, { path: '/auth/resend-verification?email=new%40example.com' });
    await userEvent.click(await screen.findByRole('button', { name: 'Resend Verification Email' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Failed to resend verification email.');
  });
});
