import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SiteState } from '../lib/site.tsx';
import { mockFetch, reply, USER_ME } from '../test/fetch.ts';
import { renderRoutes, SITE, signedIn } from '../test/render.tsx';
import { routes, signedInOnly } from './routes.tsx';

describe('the route table', () => {
  beforeEach(() => {
    document.title = '';
  });

  it.each([['/no/such/page'], ['/someone-else']])(
    'shows Page Not Found for %s, with Go Home and Try Chat',
    async (path) => {
      renderRoutes(routes, { path });
      expect(await screen.findByRole('heading', { name: 'Page Not Found' })).toBeInTheDocument();
      expect(screen.getByText("The page you're looking for doesn't exist or has been moved.")).toBeInTheDocument();
      expect(screen.getByRole('link', { name: 'Go Home' })).toHaveAttribute('href', '/');
      expect(screen.getByRole('link', { name: 'Try Chat' })).toHaveAttribute('href', '/chat');
    },
  );

  it.each([
    ['/', 'Home · Daybook'],
    ['/auth/login', 'Sign In · Daybook'],
    ['/auth/signup', 'Create Account · Daybook'],
    ['/guest-tour', 'Guest Tour · Daybook'],
    ['/ana-lima', 'Ana Lima · Daybook'],
    ['/someone-else', 'Page Not Found · Daybook'],
    ['/no/such/page', 'Page Not Found · Daybook'],
  ])('%s has its own document title', async (path, title) => {
    renderRoutes(routes, { path });
    await waitFor(() => expect(document.title).toBe(title));
    // The first page is not announced: the browser reads a loaded page's title itself.
    expect(screen.getByTestId('page-announcer')).toBeEmptyDOMElement();
  });

  it.each([
    ['/chat', true],
    ['/memories', true],
    ['/resources/research/7', true],
    ['/admin', true],
    ['/', false],
    ['/auth/login', false],
    ['/guest-tour', false],
    ['/auth/verify-email/abc', false],
    ['/ana-lima', false],
  ])('knows whether %s is a page only signed-in users see (%s)', (path, only) => {
    expect(signedInOnly(path)).toBe(only);
  });

  it('signed-in pages have theirs too', async () => {
    mockFetch({ 'GET /api/users/me/': reply(200, USER_ME), 'GET /api/memories/': reply(200, []) });
    renderRoutes(routes, { path: '/memories', auth: signedIn });
    await waitFor(() => expect(document.title).toBe('Memories · Daybook'));
  });

  it('announces the new title after a navigation, politely', async () => {
    renderRoutes(routes, { path: '/no/such/page' });
    await userEvent.click(await screen.findByRole('link', { name: 'Go Home' }));
    await waitFor(() => expect(document.title).toBe('Home · Daybook'));
    const region = screen.getByTestId('page-announcer');
    expect(region).toHaveAttribute('aria-live', 'polite');
    expect(region).toHaveTextContent('Home · Daybook');
  });

  it("shows the creator's about page at /{slug} with configured bio, links and contact", async () => {
    renderRoutes(routes, { path: '/ana-lima' });
    expect(await screen.findByRole('heading', { level: 1, name: 'Ana Lima' })).toBeInTheDocument();
    const main = screen.getByRole('main');
    expect(within(main).getByText('I build small tools for people.')).toBeInTheDocument();
    const profiles = within(main).getByRole('list', { name: 'Profiles' });
    expect(
      within(profiles)
        .getAllByRole('link')
        .map((a) => a.getAttribute('href')),
    ).toEqual([
      'https://github.com/ana',
      'https://linkedin.com/in/ana',
      'https://m.example/@ana',
      'https://ana.example.org/',
    ]);
    expect(within(main).getByRole('link', { name: 'Request an invite' })).toHaveAttribute(
      'href',
      'mailto:ana@example.org?subject=Daybook%20invite%20request',
    );
    expect(within(main).getByRole('heading', { name: 'Built with' })).toBeInTheDocument();
  });

  it('home shows Get Started and Sign In to visitors, Begin Chat to signed-in users', async () => {
    const visitor = renderRoutes(routes, { path: '/' });
    expect(await screen.findByRole('link', { name: 'Get Started' })).toHaveAttribute('href', '/auth/signup');
    expect(within(screen.getByRole('main')).getByRole('link', { name: 'Sign In' })).toHaveAttribute(
      'href',
      '/auth/login',
    );
    expect(screen.getAllByRole('article')).toHaveLength(3);
    visitor.unmount();

    renderRoutes(routes, { path: '/', auth: signedIn });
    expect(await screen.findByRole('link', { name: 'Begin Chat' })).toHaveAttribute('href', '/chat');
    expect(screen.queryByRole('link', { name: 'Get Started' })).not.toBeInTheDocument();
  });

  it('footer names the author and links four profiles', async () => {
    renderRoutes(routes, { path: '/' });
    const footer = await screen.findByRole('contentinfo');
    expect(within(footer).getByRole('link', { name: 'Ana Lima' })).toHaveAttribute('href', '/ana-lima');
    expect(within(within(footer).getByRole('list')).getAllByRole('link')).toHaveLength(4);
  });

  it('shows no profile links, in the footer or on the about page, until CREATOR_LINKS is set', async () => {
    const site: SiteState = { status: 'ready', site: { creator: { ...SITE.creator, links: [] } } };
    renderRoutes(routes, { path: '/ana-lima', site });
    expect(await screen.findByRole('heading', { level: 1, name: 'Ana Lima' })).toBeInTheDocument();
    const main = screen.getByRole('main');
    expect(within(main).queryByRole('list', { name: 'Profiles' })).not.toBeInTheDocument();
    expect(within(main).getByText(/To get an invite, contact Ana Lima by email\./)).toBeInTheDocument();
    const footer = screen.getByRole('contentinfo');
    expect(within(footer).getByRole('link', { name: 'Ana Lima' })).toHaveAttribute('href', '/ana-lima');
    expect(within(footer).queryByRole('list')).not.toBeInTheDocument();
  });

  it('the signed-in avatar menu lists the account pages', async () => {
    mockFetch({ 'GET /api/users/me/': reply(200, USER_ME) });
    renderRoutes(routes, { path: '/', auth: signedIn });
    const button = await screen.findByRole('button', { name: 'Account menu for sam@example.com' });
    expect(button).toHaveTextContent('S');
    await userEvent.click(button);
    expect(screen.getByText('sam@example.com')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Memories' })).toHaveAttribute('href', '/memories');
    expect(screen.getByRole('link', { name: 'History' })).toHaveAttribute('href', '/resources');
    expect(screen.getByRole('link', { name: 'Calendar Connections' })).toHaveAttribute('href', '/accounts/3rdparty/');
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('link', { name: 'History' })).not.toBeInTheDocument();
  });
});
