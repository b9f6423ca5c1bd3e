import type { TResearch } from '@daybook/contracts';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { type Handler, mockFetch, reply, USER_ME } from '../../test/fetch.ts';
import { memoryRouter, renderRoutes, signedIn } from '../../test/render.tsx';
import {
  COPIED,
  COPY_FAILED,
  RESEARCH_CANCELLED,
  RESEARCH_FAILED,
  RESEARCH_LOAD_FAILED,
  RESEARCH_NOT_FOUND,
  RESEARCH_RUNNING,
  ResearchPage,
} from './ResearchPage.tsx';

const DONE: TResearch = {
  id: 12,
  query: 'e-bikes for commuting',
  status: 'done',
  created: '2025-06-03T09:30:00.000Z',
  finished: '2025-06-03T09:32:00.000Z',
  introduction: 'Commuters are switching to **e-bikes** [1].',
  report: '# Prices\n\nPrices fell by 10% [2], and range grew [1, 3].\n\n## Range\n\nMost reach 60 km [3].',
  conclusion: 'A good time to buy [2].',
  sources: [
    { url: 'https://news.example/ebikes', title: 'E-bike news' },
    { url: 'https://shop.example/prices', title: 'Price survey [2025]' },
    { url: 'javascript:alert(1)', title: 'Not a page' },
  ],
  error: null,
  counts: { found: 9, read: 3, failed: 1 },
};

const PATH = 'GET /api/web-research/12/';

/** Through the app's routes (guard, layout, lazy page). */
function open(path: string, handler: Handler) {
  const network = mockFetch({ 'GET /api/users/me/': reply(200, USER_ME), [PATH]: handler });
  const view = renderRoutes(routes, { path, auth: signedIn });
  return { ...network, ...view, main: within(screen.getByRole('main')) };
}

/** The page alone, polling fast. */
function openPolling(handler: Handler) {
  const network = mockFetch({ [PATH]: handler });
  const router = memoryRouter(
    [
      { path: '/resources/research/:id', element: <ResearchPage pollMs={5} /> },
      { path: '/resources', element: <h1>Resources page</h1> },
    ],
    { initialEntries: ['/resources/research/12'] },
  );
  render(router.element);
  return { ...network, router };
}

describe('Research report page', () => {
  it('shows the report: title, query and date, introduction, body, conclusion and numbered sources', async () => {
    const { main } = open('/resources/research/12', reply(200, DONE));
    expect(await main.findByRole('heading', { level: 1, name: 'Web Research Report' })).toBeInTheDocument();
    expect(await main.findByText('E-bikes for commuting')).toBeInTheDocument();
    expect(main.getByText(/2025/, { selector: 'time' })).toHaveAttribute('datetime', DONE.created);
    expect(main.getByText('e-bikes').tagName).toBe('STRONG');
    // The body's headings sit under the page's h1, whatever level the model started at.
    expect(main.getByRole('heading', { level: 2, name: 'Prices' })).toBeInTheDocument();
    expect(main.getByRole('heading', { level: 3, name: 'Range' })).toBeInTheDocument();
    expect(main.getByRole('heading', { level: 2, name: 'Conclusion' })).toBeInTheDocument();
    const sources = within(main.getByRole('list', { name: 'Sources' }));
    const items = sources.getAllByRole('listitem');
    expect(items).toHaveLength(3);
    expect(within(items[0] as HTMLElement).getByRole('link', { name: 'E-bike news' })).toHaveAttribute(
      'href',
      'https://news.example/ebikes',
    );
    expect(within(items[0] as HTMLElement).getByText('news.example')).toBeInTheDocument();
    // A source that is not a web page is named, never linked.
    expect(within(items[2] as HTMLElement).queryByRole('link')).not.toBeInTheDocument();
    expect(items[2]).toHaveTextContent('Not a page');
    // The report says how many pages it rests on, and how many could not be read.
    expect(
      main.getByText(
        'Based on 3 pages Daybook read; 1 more could not be read (they refused, were too large, or were not web pages).',
      ),
    ).toBeInTheDocument();
    expect(main.getByRole('link', { name: /Back to resources/ })).toHaveAttribute('href', '/resources');
  });

  it('links each citation [n] to the n-th source in a new tab, web pages only', async () => {
    const { main } = open('/resources/research/12', reply(200, DONE));
    await main.findByText('E-bikes for commuting');
    const cites = main
      .getAllByRole('link')
      .filter((a) => a.classList.contains('md-cite'))
      .map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]);
    const news = 'https://news.example/ebikes';
    const prices = 'https://shop.example/prices';
    const blank = ['_blank', 'noopener noreferrer'];
    expect(cites).toEqual([
      ['[1]', news, ...blank],
      ['[2]', prices, ...blank],
      ['1', news, ...blank],
      ['[2]', prices, ...blank],
    ]);
    // [3] names the javascript: source: it stays text.
    expect(main.getByText(/Most reach 60 km \[3\]\./)).toBeInTheDocument();
  });

  it('copies the whole report as markdown and says Copied', async () => {
    const user = userEvent.setup();
    const { main } = open('/resources/research/12', reply(200, DONE));
    await user.click(await main.findByRole('button', { name: 'Copy as markdown' }));
    expect(main.getByRole('status')).toHaveTextContent(COPIED);
    const copied = await navigator.clipboard.readText();
    expect(copied).toMatch(/^# E-bikes for commuting\n\n_Web research, June 3, 2025_\n\n/);
    expect(copied).toContain('Commuters are switching to **e-bikes** [1].');
    // The body's # heading moves under the title.
    expect(copied).toContain('## Prices\n\nPrices fell by 10% [2]');
    expect(copied).toContain('### Range');
    expect(copied).toContain('## Conclusion\n\nA good time to buy [2].');
    expect(copied).toMatch(
      /## Sources\n\n1\. \[E-bike news\]\(<https:\/\/news\.example\/ebikes>\)\n2\. \[Price survey \\\[2025\\\]\]\(<https:\/\/shop\.example\/prices>\)\n3\. \[Not a page\]/,
    );
  });

  it('says so when copying is refused', async () => {
    const user = userEvent.setup();
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { main } = open('/resources/research/12', reply(200, DONE));
    const button = await main.findByRole('button', { name: 'Copy as markdown' });
    vi.spyOn(navigator.clipboard, 'writeText').mockRejectedValue(new DOMException('Denied', 'NotAllowedError'));
    await user.click(button);
    expect(await main.findByText(COPY_FAILED)).toBeInTheDocument();
  });

  it('answers Research report not found for a 404', async () => {
    const { main, calls } = open('/resources/research/12', reply(404, { error: 'Not found', code: 'not_found' }));
    expect(await main.findByRole('heading', { name: RESEARCH_NOT_FOUND })).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Back to resources' })).toHaveAttribute('href', '/resources');
    expect(main.queryByRole('button', { name: 'Copy as markdown' })).not.toBeInTheDocument();
    expect(calls(PATH)).toHaveLength(1);
  });

  it('an id that is not a number is not found without asking', async () => {
    const { main, requests } = open('/resources/research/abc', reply(200, DONE));
    expect(await main.findByRole('heading', { name: RESEARCH_NOT_FOUND })).toBeInTheDocument();
    expect(requests.filter((r) => r.path.startsWith('/api/web-research/'))).toHaveLength(0);
  });

  it('shows the load error for other failures, and Retry loads again', async () => {
    const user = userEvent.setup();
    const { main } = open('/resources/research/12', (_request, calls) =>
      calls === 0 ? reply(500, { error: 'Boom', code: 'internal' }) : reply(200, DONE),
    );
    expect(await main.findByRole('alert')).toHaveTextContent(RESEARCH_LOAD_FAILED);
    await user.click(main.getByRole('button', { name: 'Retry' }));
    expect(await main.findByText('E-bikes for commuting')).toBeInTheDocument();
    expect(main.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('while the research runs it says so and asks again until the report is done', async () => {
    const running: TResearch = {
      ...DONE,
      status: 'running',
      finished: null,
      introduction: null,
      report: null,
      conclusion: null,
      sources: [],
      counts: { found: 9, read: 4, failed: 0 },
    };
    const { calls } = openPolling((_request, previous) =>
      previous === 0
        ? reply(200, { ...running, status: 'queued', counts: { found: 0, read: 0, failed: 0 } })
        : previous < 3
          ? reply(200, running)
          : reply(200, DONE),
    );
    expect(await screen.findByRole('heading', { name: RESEARCH_RUNNING })).toBeInTheDocument();
    expect(await screen.findByText(/Read 4 of 9 pages found so far\./)).toBeInTheDocument();
    expect(await screen.findByRole('heading', { name: 'Conclusion' })).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: RESEARCH_RUNNING })).not.toBeInTheDocument();
    expect(calls(PATH)).toHaveLength(4);
  });

  it('a failed research shows its reason', async () => {
    const failed: TResearch = {
      ...DONE,
      status: 'failed',
      report: null,
      introduction: null,
      conclusion: null,
      sources: [],
      error: 'No search provider answered.',
    };
    openPolling(reply(200, failed));
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByRole('heading', { name: RESEARCH_FAILED })).toBeInTheDocument();
    expect(alert).toHaveTextContent('No search provider answered.');
    expect(screen.queryByRole('button', { name: 'Copy as markdown' })).not.toBeInTheDocument();
  });

  it('a cancelled research says so, not that it failed', async () => {
    const cancelled: TResearch = {
      ...DONE,
      status: 'cancelled',
      report: null,
      introduction: null,
      conclusion: null,
      sources: [],
      error: null,
    };
    openPolling(reply(200, cancelled));
    const heading = await screen.findByRole('heading', { name: RESEARCH_CANCELLED });
    const status = heading.closest('[role="status"]') as HTMLElement;
    expect(status).toHaveTextContent('It was stopped before it wrote a report.');
    expect(screen.queryByRole('heading', { name: RESEARCH_FAILED })).not.toBeInTheDocument();
    expect(within(status).getByRole('link', { name: 'Go to Chat' })).toHaveAttribute('href', '/chat');
  });
});
