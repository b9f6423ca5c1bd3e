// Renders a piece of the app with its real providers, a chosen auth state and a memory router.
import type { TSiteInfo } from '@daybook/contracts';
import { render } from '@testing-library/react';
import { type ReactElement, type ReactNode, StrictMode } from 'react';
import {
  type InitialEntry,
  type Location,
  MemoryRouter,
  type NavigateOptions,
  type NavigationType,
  type RouteObject,
  type To,
  useLocation,
  useNavigate,
  useNavigationType,
  useRoutes,
} from 'react-router-dom';
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

/** A router in memory, for tests: where it is, and a way to go elsewhere. */
export interface TestRouter {
  /** The routes inside a MemoryRouter: what to render. */
  element: ReactElement;
  navigate(to: To | number, options?: NavigateOptions): void;
  readonly state: { location: Location; historyAction: NavigationType };
}

interface Seen {
  navigate?: ReturnType<typeof useNavigate>;
  location?: Location;
  action?: NavigationType;
}

/** The routes, telling `seen` where the router is and how to move it. */
function SeenRoutes({ routes, seen }: { routes: RouteObject[]; seen: Seen }) {
  seen.navigate = useNavigate();
  seen.location = useLocation();
  seen.action = useNavigationType();
  return useRoutes(routes);
}

/**
 * The app's kind of router (a declarative one, as App.tsx uses: URL changes are transitions, and
 * there is no data router's flushSync), in memory, with what tests ask of it.
 */
export function memoryRouter(
  routes: RouteObject[],
  { initialEntries = ['/'] }: { initialEntries?: InitialEntry[] } = {},
) {
  const seen: Seen = {};
  const router: TestRouter = {
    element: (
      <MemoryRouter initialEntries={initialEntries}>
        <SeenRoutes routes={routes} seen={seen} />
      </MemoryRouter>
    ),
    navigate(to, options) {
      if (!seen.navigate) throw new Error('the router has not rendered yet');
      if (typeof to === 'number') seen.navigate(to);
      else seen.navigate(to, options);
    },
    get state() {
      if (!seen.location || !seen.action) throw new Error('the router has not rendered yet');
      return { location: seen.location, historyAction: seen.action };
    },
  };
  return router;
}

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
  const router = memoryRouter(routes, { initialEntries: [path] });
  const load = loadSession ?? (() => Promise.resolve(auth));
  const tree = (
    <SiteProvider initial={site}>
      <AuthProvider loadSession={load} initial={initialAuth}>
        {router.element}
      </AuthProvider>
    </SiteProvider>
  );
  const utils = render(strict ? <StrictMode>{tree}</StrictMode> : tree);
  return { ...utils, router };
}

export const page = (text: string): ReactNode => <h1>{text}</h1>;
