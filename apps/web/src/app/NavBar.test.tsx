import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { anonymous, page, renderRoutes, signedIn } from '../test/render.tsx';
import { Layout } from './Layout.tsx';

const routes = [
  {
    element: <Layout />,
    children: ['/', '/guest-tour', '/demo-tour', '/auth/login', '/memories'].map((path) => ({
      path,
      element: page(path),
    })),
  },
];

async function navLinks(path: string, auth = anonymous) {
  renderRoutes(routes, { path, auth });
  const nav = await screen.findByRole('navigation', { name: 'Main' });
  await screen.findByRole('heading', { name: path });
  return within(nav);
}

describe('NavBar', () => {
  it('offers Take the Tour and Sign In to visitors on home', async () => {
    const nav = await navLinks('/');
    expect(nav.getByRole('link', { name: 'Take the Tour' })).toHaveAttribute('href', '/guest-tour');
    expect(nav.getByRole('link', { name: 'Sign In' })).toHaveAttribute('href', '/auth/login');
    expect(nav.queryByRole('link', { name: 'Chat' })).not.toBeInTheDocument();
  });

  it('offers Sign Up instead of Sign In on the sign-in page', async () => {
    const nav = await navLinks('/auth/login');
    expect(nav.getByRole('link', { name: 'Sign Up' })).toHaveAttribute('href', '/auth/signup');
    expect(nav.queryByRole('link', { name: 'Sign In' })).not.toBeInTheDocument();
  });

  it('labels the tour link by the tour being taken, and hides Chat during a tour', async () => {
    expect((await navLinks('/guest-tour')).getByRole('link', { name: 'Guest Tour' })).toHaveAttribute(
      'aria-current',
      'page',
    );
  });

  it('shows Demo Tour without Chat to a signed-in user in the tour', async () => {
    const nav = await navLinks('/demo-tour', signedIn);
    expect(nav.getByRole('link', { name: 'Demo Tour' })).toBeInTheDocument();
    expect(nav.queryByRole('link', { name: 'Chat' })).not.toBeInTheDocument();
  });

  it('shows Chat and the avatar to signed-in users, and no tour link on home', async () => {
    const nav = await navLinks('/', signedIn);
    expect(nav.getByRole('link', { name: 'Chat' })).toHaveAttribute('href', '/chat');
    expect(nav.queryByRole('link', { name: /Tour/ })).not.toBeInTheDocument();
    expect(nav.getByRole('button', { name: 'Account menu for sam@example.com' })).toBeInTheDocument();
    expect(nav.queryByRole('link', { name: 'Sign In' })).not.toBeInTheDocument();
  });
});
