import { RESOURCES_PREVIEW_MAX, type TResourceItem } from '@daybook/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import {
  deferred,
  type Handler,
  mockFetch,
  type RecordedRequest,
  type Reply,
  reply,
  USER_ME,
} from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';
import { EMPTY_TITLE, LOAD_FAILED } from './ResourcesPage.tsx';

const LIST = 'GET /api/resources/';

/** `n` research items, newest first, titled "topic 1" (newest) to "topic n". */
function history(n: number, fields: (i: number) => Partial<TResourceItem> = () => ({})): TResourceItem[] {
  return Array.from({ length: n }, (_, i) => {
    const date = new Date(Date.UTC(2025, 5, 30, 12) - i * 3_600_000).toISOString();
    return {
      resource_type: 'research',
      id: 1000 - i,
      sort_date: date,
      created: date,
      title: `topic ${i + 1}`,
      preview: null,
      status: 'done',
      ...fields(i),
    };
  });
}

const params = (request: RecordedRequest) => Object.fromEntries(new URLSearchParams(request.search));

/** Answers like the server: `limit` items, `before` newest first, `after` oldest first. */
const serve =
  (all: TResourceItem[]) =>
  (request: RecordedRequest): Reply => {
    const { limit, before, after } = params(request);
    const list = before
      ? all.filter((item) => item.sort_date < before)
      : after
        ? all.filter((item) => item.sort_date > after).reverse()
        : all;
    return reply(200, list.slice(0, Number(limit ?? 30)));
  };

function open(path: string, list: Handler) {
  const network = mockFetch({ 'GET /api/users/me/': reply(200, USER_ME), [LIST]: list });
  const view = renderRoutes(routes, { path, auth: signedIn });
  const main = within(screen.getByRole('main'));
  /** The query of each list request, e.g. { limit: '30', before: '...' }. */
  const lists = () => network.calls(LIST).map(params);
  const titles = () => main.getAllByRole('heading', { level: 3 }).map((h) => h.textContent);
  const search = () => view.router.state.location.search;
  return { ...network, ...view, main, lists, titles, search };
}

const topics = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `Topic ${from + i}`);

let scrolled: ReturnType<typeof vi.fn>;
beforeEach(() => {
  scrolled = vi.fn();
  Element.prototype.scrollIntoView = scrolled as unknown as Element['scrollIntoView'];
});
afterEach(() => {
  // biome-ignore lint/suspicious/noExplicitAny: jsdom has no scrollIntoView; the test added it
  delete (Element.prototype as any).scrollIntoView;
});

describe('Resources', () => {
  it('shows each item with its type, date and title, a cut preview and the link to its page', async () => {
    const text = `# Good morning\n\nToday **looks** bright. ${'Rain later, then sun over the hills. '.repeat(6)}`;
    const items: TResourceItem[] = [
      {
        resource_type: 'daily_message',
        id: 7,
        sort_date: '2025-06-03T06:00:00.000Z',
        created: '2025-06-03T06:00:00.000Z',
        title: '2025-06-03',
        preview: text,
        status: null,
      },
      ...history(4, (i) => ({ status: (['done', 'running', 'failed', 'cancelled'] as const)[i] })),
    ];
    const answer = deferred<Reply>();
    const { main, lists } = open('/resources', () => answer.promise);
    expect(await main.findByRole('heading', { level: 1, name: 'Your Resources' })).toBeInTheDocument();
    expect(main.getByText('View your daily messages and web research reports.')).toBeInTheDocument();
    expect(await main.findByRole('status')).toHaveTextContent('Loading your resources...');
    answer.resolve(reply(200, items));

    const daily = await main.findByRole('article', { name: 'Tuesday, June 3, 2025' });
    expect(within(daily).getByText('Daily Message')).toBeInTheDocument();
    const preview = within(daily).getByText(/^Good morning Today looks bright\./);
    const shown = preview.textContent ?? '';
    expect(shown.endsWith('…')).toBe(true);
    expect(Array.from(shown)).toHaveLength(RESOURCES_PREVIEW_MAX + 1);
    expect(within(daily).getByRole('link', { name: 'View Message' })).toHaveAttribute(
      'href',
      '/resources/daily-message/7',
    );
    expect(within(daily).getByText(/2025/, { selector: 'time' })).toHaveAttribute(
      'datetime',
      '2025-06-03T06:00:00.000Z',
    );

    const done = main.getByRole('article', { name: 'Topic 1' });
    expect(within(done).getByText('Web Research')).toBeInTheDocument();
    expect(within(done).queryByText('In progress')).not.toBeInTheDocument();
    expect(within(done).getByRole('link', { name: 'View Report' })).toHaveAttribute('href', '/resources/research/1000');
    expect(within(main.getByRole('article', { name: 'Topic 2' })).getByText('In progress')).toBeInTheDocument();
    expect(within(main.getByRole('article', { name: 'Topic 3' })).getByText('Failed')).toBeInTheDocument();
    expect(within(main.getByRole('article', { name: 'Topic 4' })).getByText('Cancelled')).toBeInTheDocument();

    expect(main.getByText('Showing 1–5 of 5')).toBeInTheDocument();
    // Everything fits on one page: no paging.
    expect(main.queryByRole('navigation', { name: 'Resource pages' })).not.toBeInTheDocument();
    expect(lists()).toEqual([{ limit: '30' }]);
  });

  it('shows daily messages as the server sends them: a short text whole, a cut one with an ellipsis', async () => {
    const long = `Good morning! ${'Sunny spells over the river, then a breeze in the evening. '.repeat(4)}`;
    const daily = (id: number, day: string, preview: string): TResourceItem => ({
      resource_type: 'daily_message',
      id,
      sort_date: `${day}T07:00:00.000Z`,
      created: `${day}T06:58:00.000Z`,
      title: day,
      preview,
      status: null,
    });
    const items = [
      daily(9, '2026-11-24', Array.from(long).slice(0, RESOURCES_PREVIEW_MAX).join('')),
      daily(8, '2026-11-23', 'A quiet **Monday**.'),
    ];
    const { main } = open('/resources', reply(200, items));

    const cut = await main.findByRole('article', { name: 'Tuesday, November 24, 2026' });
    expect(within(cut).getByText('Daily Message')).toBeInTheDocument();
    const shown = within(cut).getByText(/^Good morning! Sunny spells/).textContent ?? '';
    expect(shown.endsWith('…')).toBe(true);
    expect(within(cut).getByRole('link', { name: 'View Message' })).toHaveAttribute(
      'href',
      '/resources/daily-message/9',
    );

    const whole = main.getByRole('article', { name: 'Monday, November 23, 2026' });
    expect(within(whole).getByText('A quiet Monday.')).toBeInTheDocument();
    expect(within(whole).getByRole('link', { name: 'View Message' })).toHaveAttribute(
      'href',
      '/resources/daily-message/8',
    );
  });

  it('pages 15 at a time with the page in the URL, scrolls to the list and focuses its heading', async () => {
    const user = userEvent.setup();
    const { main, titles, search, lists } = open('/resources', serve(history(42)));
    await main.findByRole('heading', { name: 'Topic 1' });
    expect(titles()).toEqual(topics(1, 15));
    expect(main.getByText('Showing 1–15')).toBeInTheDocument();
    const pager = within(main.getByRole('navigation', { name: 'Resource pages' }));
    expect(pager.getByRole('button', { name: /Previous/ })).toBeDisabled();

    await user.click(pager.getByRole('button', { name: /Next/ }));
    expect(search()).toBe('?page=2');
    expect(titles()).toEqual(topics(16, 30));
    expect(main.getByRole('heading', { level: 2, name: 'All resources, page 2' })).toHaveFocus();
    expect(scrolled).toHaveBeenCalled();
    expect(pager.getByText('Page 2')).toBeInTheDocument();
    // Pages 1 and 2 came in one fetch.
    expect(lists()).toHaveLength(1);

    await user.click(pager.getByRole('button', { name: /Previous/ }));
    expect(search()).toBe('');
    expect(titles()).toEqual(topics(1, 15));
  });

  it('reads the page from the URL on load', async () => {
    const { main, titles } = open('/resources?page=2', serve(history(42)));
    await main.findByRole('heading', { name: 'Topic 16' });
    expect(titles()).toEqual(topics(16, 30));
    expect(main.getByRole('button', { name: /Previous/ })).toBeEnabled();
  });

  it('fetches the next 30 with the last sort_date as cursor when page 3 passes the loaded items', async () => {
    const user = userEvent.setup();
    const all = history(42);
    const { main, titles, lists, search } = open('/resources?page=2', serve(all));
    await main.findByRole('heading', { name: 'Topic 16' });
    await user.click(main.getByRole('button', { name: /Next/ }));
    expect(await main.findByRole('heading', { name: 'Topic 31' })).toBeInTheDocument();
    expect(search()).toBe('?page=3');
    expect(lists()).toEqual([{ limit: '30' }, { limit: '30', before: all[29]?.sort_date }]);
    expect(titles()).toEqual(topics(31, 42));
    // The last fetch was short: the end is known, and Next has nowhere to go.
    expect(main.getByText('Showing 31–42 of 42')).toBeInTheDocument();
    expect(main.getByRole('button', { name: /Next/ })).toBeDisabled();
  });

  it('holds at most 60: page 5 drops the newest 30, and going back fetches them again with after', async () => {
    const user = userEvent.setup();
    const all = history(100);
    const { main, titles, lists, search } = open('/resources?page=5', serve(all));
    await main.findByRole('heading', { name: 'Topic 61' });
    expect(titles()).toEqual(topics(61, 75));
    expect(main.getByText('Showing 61–75')).toBeInTheDocument();
    expect(lists()).toEqual([
      { limit: '30' },
      { limit: '30', before: all[29]?.sort_date },
      { limit: '30', before: all[59]?.sort_date },
    ]);
    const previous = () => user.click(main.getByRole('button', { name: /Previous/ }));
    await previous();
    await previous();
    expect(titles()).toEqual(topics(31, 45));
    expect(lists()).toHaveLength(3);
    await previous();
    expect(await main.findByRole('heading', { name: 'Topic 16' })).toBeInTheDocument();
    expect(search()).toBe('?page=2');
    expect(titles()).toEqual(topics(16, 30));
    expect(lists()[3]).toEqual({ limit: '30', after: all[30]?.sort_date });
    await previous();
    expect(titles()).toEqual(topics(1, 15));
    expect(lists()).toHaveLength(4);
    // Items 61-90 were dropped on the way back: page 5 asks for them again.
    const next = () => user.click(main.getByRole('button', { name: /Next/ }));
    await next();
    await next();
    await next();
    expect(titles()).toEqual(topics(46, 60));
    expect(lists()).toHaveLength(4);
    await next();
    expect(await main.findByRole('heading', { name: 'Topic 61' })).toBeInTheDocument();
    expect(lists()[4]).toEqual({ limit: '30', before: all[59]?.sort_date });
  });

  it('a page past the end of the list shows its last page', async () => {
    const { main, titles, search } = open('/resources?page=9', serve(history(20)));
    await main.findByRole('heading', { name: 'Topic 16' });
    expect(titles()).toEqual(topics(16, 20));
    expect(search()).toBe('?page=2');
  });

  it('shows No resources found with Start Chatting when there are none', async () => {
    const user = userEvent.setup();
    const { main, router } = open('/resources', reply(200, []));
    expect(await main.findByRole('heading', { name: EMPTY_TITLE })).toBeInTheDocument();
    expect(main.queryByRole('navigation', { name: 'Resource pages' })).not.toBeInTheDocument();
    await user.click(main.getByRole('link', { name: 'Start Chatting' }));
    expect(router.state.location.pathname).toBe('/chat');
  });

  it('shows the load failure in a dismissible banner, and Retry loads again', async () => {
    const user = userEvent.setup();
    const all = history(3);
    const { main, lists } = open('/resources', (_request, calls) =>
      calls === 0 ? reply(500, { error: 'Boom', code: 'internal' }) : serve(all)(_request),
    );
    const banner = await main.findByRole('alert');
    expect(banner).toHaveTextContent(LOAD_FAILED);
    expect(main.queryByRole('heading', { name: EMPTY_TITLE })).not.toBeInTheDocument();
    await user.click(within(banner).getByRole('button', { name: 'Dismiss' }));
    expect(main.queryByRole('alert')).not.toBeInTheDocument();
    // Dismissing does not load again by itself.
    expect(lists()).toHaveLength(1);
    await user.click(main.getByRole('button', { name: 'Try loading again' }));
    expect(await main.findByRole('heading', { name: 'Topic 1' })).toBeInTheDocument();
    expect(lists()).toHaveLength(2);
  });

  it('a failure loading more is only logged; the page stays on what is loaded and Next tries again', async () => {
    const user = userEvent.setup();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const all = history(50);
    const { main, titles, search, lists } = open('/resources?page=2', (request, calls) =>
      calls === 1 ? reply(503) : serve(all)(request),
    );
    await main.findByRole('heading', { name: 'Topic 16' });
    await user.click(main.getByRole('button', { name: /Next/ }));
    await waitFor(() => expect(logged).toHaveBeenCalledWith('Failed to load more resources', expect.anything()));
    expect(await main.findByRole('heading', { name: 'Topic 16' })).toBeInTheDocument();
    expect(search()).toBe('?page=2');
    expect(titles()).toEqual(topics(16, 30));
    expect(main.queryByRole('alert')).not.toBeInTheDocument();
    await user.click(main.getByRole('button', { name: /Next/ }));
    expect(await main.findByRole('heading', { name: 'Topic 31' })).toBeInTheDocument();
    expect(lists()).toHaveLength(3);
  });
});
