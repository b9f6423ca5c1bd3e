// Renders a piece of the app with its real providers, a chosen auth state and a memory router.
import type { TSiteInfo } from '@daybook/contracts';
import { render } from '@testing-library/react';
import { type ReactNode, StrictMode } from 'react';
import { createMemoryRouter, type InitialEntry, type RouteObject, RouterProvider } from 'react-router-dom';
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
    loadSession,
    site = { status: 'ready', site: SITE },
    strict = false,
    initialAuth,
  }: {
    path?: InitialEntry;
    auth?: AuthState | Promise<AuthState>;
    /** Replaces `auth`, e.g. with the real `fetchSession` over a mocked fetch. */
    loadSession?: () => Promise<AuthState>;
    site?: SiteState;
    /** Renders in <StrictMode>, which runs effects twice. */
    strict?: boolean;
    /** Known before the first render, as when the page carried the session (main.tsx). */
    initialAuth?: AuthState;
  } = {},
) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const load = loadSession ?? (() => Promise.resolve(auth));
  const tree = (
    <SiteProvider initial={site}>
      <AuthProvider loadSession={load} initial={initialAuth}>
        <RouterProvider router={router} />
      </AuthProvider>
    </SiteProvider>
  );
  const utils = render(strict ? <StrictMode>{tree}</StrictMode> : tree);
  return { ...utils, router };
}

export const page = (text: string): ReactNode => <h1>{text}</h1>;
