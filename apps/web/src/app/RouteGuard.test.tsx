import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { type AuthState, useAuth } from '../features/auth/auth-context.tsx';
import { anonymous, page, renderRoutes, signedIn } from '../test/render.tsx';
import { RouteGuard } from './RouteGuard.tsx';

const routes = [
  { path: '/memories', element: <RouteGuard requireAuth>{page('Memories')}</RouteGuard> },
  { path: '/auth/login', element: <RouteGuard anonymousOnly>{page('Sign in')}</RouteGuard> },
  {
    path: '/auth/signup',
    element: (
      <RouteGuard anonymousOnly redirectTo="/chat">
        {page('Sign up')}
      </RouteGuard>
    ),
  },
  { path: '/', element: page('Home') },
  { path: '/chat', element: page('Chat') },
];

/** Stands in for a sign-in page: the button rechecks the session, its label shows the result. */
function SignInHere() {
  const { state, refresh } = useAuth();
  return (
    <button type="button" onClick={() => void refresh()}>
      {state.status}
    </button>
  );
}

describe('RouteGuard', () => {
  it('shows Loading... while the session is being checked', async () => {
    let resolve: (s: AuthState) => void = () => {};
    const pending = new Promise<AuthState>((r) => {
      resolve = r;
    });
    renderRoutes(routes, { path: '/memories', auth: pending });
    expect(screen.getByRole('status')).toHaveTextContent('Loading...');
    expect(screen.queryByRole('heading')).not.toBeInTheDocument();
    resolve(signedIn);
    expect(await screen.findByRole('heading', { name: 'Memories' })).toBeInTheDocument();
  });

  it('sends a signed-out visitor to sign in, remembering path and query', async () => {
    const { router } = renderRoutes(routes, { path: '/memories?page=2', auth: anonymous });
    expect(await screen.findByRole('heading', { name: 'Sign in' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/auth/login');
    expect(new URLSearchParams(router.state.location.search).get('next')).toBe('/memories?page=2');
  });

  it('lets a signed-in user through', async () => {
    renderRoutes(routes, { path: '/memories', auth: signedIn });
    expect(await screen.findByRole('heading', { name: 'Memories' })).toBeInTheDocument();
  });

  it('sends a signed-in user away from anonymous-only pages, to / or the given target', async () => {
    const home = renderRoutes(routes, { path: '/auth/login', auth: signedIn });
    await waitFor(() => expect(home.router.state.location.pathname).toBe('/'));
    home.unmount();
    const target = renderRoutes(routes, { path: '/auth/signup', auth: signedIn });
    await waitFor(() => expect(target.router.state.location.pathname).toBe('/chat'));
  });

  it('shows anonymous-only pages to signed-out visitors', async () => {
    renderRoutes(routes, { path: '/auth/login', auth: anonymous });
    expect(await screen.findByRole('heading', { name: 'Sign in' })).toBeInTheDocument();
  });

  it('leaves an anonymous-only page to decide where to go once its visitor signs in there', async () => {
    let session: AuthState = anonymous;
    const { router } = renderRoutes(
      [{ path: '/auth/login', element: <RouteGuard anonymousOnly>{<SignInHere />}</RouteGuard> }, ...routes],
      { path: '/auth/login', loadSession: () => Promise.resolve(session) },
    );
    const button = await screen.findByRole('button', { name: 'anonymous' });
    session = signedIn;
    await userEvent.click(button);
    expect(await screen.findByRole('button', { name: 'authenticated' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/auth/login');
  });
});
