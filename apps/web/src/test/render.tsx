// Renders a piece of the app with its real providers, a chosen auth state and a memory router.
import type { TSiteInfo } from '@daybook/contracts';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, type RouteObject, RouterProvider } from 'react-router-dom';
import { AuthProvider, type AuthState } from '../features/auth/auth-context.tsx';
import { SiteProvider, type SiteState } from '../lib/site.tsx';

export const SITE: TSiteInfo = {
  creator: {
    name: 'Ana Lima',
    slug: 'ana-lima',
    bio: 'I build small tools for people.',
    email: 'ana@example.org',
    links: [
      { label: 'GitHub', url: 'https://github.com/ana' },
      { label: 'LinkedIn', url: 'https://linkedin.com/in/ana' },
      { label: 'Mastodon', url: 'https://m.example/@ana' },
      { label: 'Blog', url: 'https://ana.example.org/' },
    ],
  },
};

export const signedIn: AuthState = { status: 'authenticated', user: { id: 1, email: 'sam@example.com' } };
export const anonymous: AuthState = { status: 'anonymous', user: null };

export function renderRoutes(
  routes: RouteObject[],
  {
    path = '/',
    auth = anonymous,
    site = { status: 'ready', site: SITE },
  }: { path?: string; auth?: AuthState | Promise<AuthState>; site?: SiteState } = {},
) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const loadSession = () => Promise.resolve(auth);
  const utils = render(
    <SiteProvider initial={site}>
      <AuthProvider loadSession={loadSession}>
        <RouterProvider router={router} />
      </AuthProvider>
    </SiteProvider>,
  );
  return { ...utils, router };
}

export const page = (text: string): ReactNode => <h1>{text}</h1>;
