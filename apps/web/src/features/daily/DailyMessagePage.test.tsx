import type { TDailyMessage, TResearch } from '@daybook/contracts';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { deferred, type Handler, mockFetch, type Reply, reply, USER_ME } from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';
import { ASK_IN_CHAT, DAILY_EMPTY, DAILY_LOAD_FAILED, DAILY_NOT_FOUND } from './DailyMessagePage.tsx';

const RESEARCH: TResearch = {
  id: 31,
  query: 'trams in lisbon',
  status: 'done',
  created: '2026-11-24T05:10:00.000Z',
  finished: '2026-11-24T05:12:00.000Z',
  introduction: 'Line 28 is **busy** [1].',
  report: '### Timetables\n\nTrams run every 10 minutes [2].',
  conclusion: 'Go early.',
  sources: [
    { url: 'https://carris.example/28', title: 'Carris line 28' },
    { url: 'https://news.example/trams', title: 'Tram news' },
  ],
  error: null,
  counts: { found: 4, read: 2, failed: 0 },
};

const MESSAGE: TDailyMessage = {
  id: 7,
  delivery_date: '2026-11-24',
  message_text: '# Good morning, Sam\n\nIt is **sunny** in Lisbon today.\n\n## Your day\n\n- Dentist at 10:00',
  research_reports: [
    RESEARCH,
    // Unfinished and failed researches have no body: they stay out of the page.
    { ...RESEARCH, id: 32, query: 'a running one', status: 'running', report: null, introduction: null },
    { ...RESEARCH, id: 33, query: 'a failed one', status: 'failed', report: null, error: 'No pages.' },
  ],
  delivered: '2026-11-24T07:00:00.000Z',
  chat_message_id: 501,
};

const PATH = 'GET /api/daily-messages/7/';

/** Through the app's routes (guard, layout, lazy page). */
function open(path: string, handler: Handler) {
  const network = mockFetch({ 'GET /api/users/me/': reply(200, USER_ME), [PATH]: handler });
  const view = renderRoutes(routes, { path, auth: signedIn });
  return { ...network, ...view, main: within(screen.getByRole('main')) };
}

/** The page has loaded: its chat link shows with the message. */
const loaded = (main: ReturnType<typeof within>) => main.findByRole('link', { name: ASK_IN_CHAT }, { timeout: 10_000 });

describe('Daily message page', () => {
  it('shows the message as markdown under its delivery date, with a way back and a way to the chat', async () => {
    const { main } = open('/resources/daily-message/7', reply(200, { ...MESSAGE, research_reports: [] }));
    expect(await loaded(main)).toHaveAttribute('href', '/chat?dmid=7');
    expect(main.getByRole('heading', { level: 1, name: 'Daily Message' })).toBeInTheDocument();
    // The calendar day the message is for, wherever the reader is: no time-zone shift.
    const date = main.getByText('Tuesday, November 24, 2026');
    expect(date.tagName).toBe('TIME');
    expect(date).toHaveAttribute('datetime', '2026-11-24');
    expect(date.parentElement).toHaveTextContent('Delivered on Tuesday, November 24, 2026');
    // The message's own headings sit under the page's h1.
    expect(main.getByRole('heading', { level: 2, name: 'Good morning, Sam' })).toBeInTheDocument();
    expect(main.getByRole('heading', { level: 3, name: 'Your day' })).toBeInTheDocument();
    expect(main.getByText('sunny').tagName).toBe('STRONG');
    expect(main.getByRole('listitem')).toHaveTextContent('Dentist at 10:00');
    expect(main.getByRole('link', { name: /Back to resources/ })).toHaveAttribute('href', '/resources');
    // No research with a body: no research section.
    expect(main.queryByRole('heading', { name: 'Web Research' })).not.toBeInTheDocument();
  });

  it('shows each attached report with a body: query, date, report and sources', async () => {
    const { main } = open('/resources/daily-message/7', reply(200, MESSAGE));
    await loaded(main);
    const section = within(main.getByRole('region', { name: 'Web Research' }));
    expect(section.getByRole('heading', { level: 2, name: 'Web Research' })).toBeInTheDocument();
    const report = within(section.getByRole('region', { name: 'Trams in lisbon' }));
    expect(report.getByRole('heading', { level: 3, name: 'Trams in lisbon' })).toBeInTheDocument();
    expect(report.getByText(/2026/, { selector: 'time' })).toHaveAttribute('datetime', RESEARCH.created);
    expect(report.getByText('busy').tagName).toBe('STRONG');
    expect(report.getByText(/Trams run every 10 minutes/)).toBeInTheDocument();
    expect(report.getByText('Go early.')).toBeInTheDocument();
    const sources = within(report.getByRole('list', { name: 'Sources' }));
    expect(sources.getAllByRole('link').map((a) => [a.textContent, a.getAttribute('href')])).toEqual([
      ['Carris line 28', 'https://carris.example/28'],
      ['Tram news', 'https://news.example/trams'],
    ]);
    // Citations link to their sources.
    expect(report.getByRole('link', { name: '[2]' })).toHaveAttribute('href', 'https://news.example/trams');
    // Only the report with a body is shown.
    expect(section.getAllByRole('heading', { level: 3 })).toHaveLength(1);
    expect(main.queryByText('A running one')).not.toBeInTheDocument();
    expect(main.queryByText('A failed one')).not.toBeInTheDocument();
  });

  it('shows Loading while the message is on its way', async () => {
    const answer = deferred<Reply>();
    const { main } = open('/resources/daily-message/7', () => answer.promise);
    const loading = await main.findByText('Loading the daily message...', {}, { timeout: 10_000 });
    expect(loading.closest('[role="status"]')).toBeInTheDocument();
    answer.resolve(reply(200, MESSAGE));
    await loaded(main);
    expect(main.queryByText('Loading the daily message...')).not.toBeInTheDocument();
  });

  it('says so while the message has no text yet', async () => {
    const { main } = open('/resources/daily-message/7', reply(200, { ...MESSAGE, message_text: '', delivered: null }));
    await loaded(main);
    expect(main.getByText(DAILY_EMPTY)).toBeInTheDocument();
  });

  it('answers Daily message not found for a 404 (unknown, or another account’s)', async () => {
    const { main, calls } = open('/resources/daily-message/7', reply(404, { error: 'Not found', code: 'not_found' }));
    expect(await main.findByRole('heading', { name: DAILY_NOT_FOUND }, { timeout: 10_000 })).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Back to resources' })).toHaveAttribute('href', '/resources');
    expect(main.queryByRole('link', { name: ASK_IN_CHAT })).not.toBeInTheDocument();
    expect(calls(PATH)).toHaveLength(1);
  });

  it.each(['abc', '0', '-3', '1.5', '99999999999'])('an id like %s is not found without asking', async (id) => {
    const { main, requests } = open(`/resources/daily-message/${id}`, reply(200, MESSAGE));
    expect(await main.findByRole('heading', { name: DAILY_NOT_FOUND }, { timeout: 10_000 })).toBeInTheDocument();
    expect(requests.filter((r) => r.path.startsWith('/api/daily-messages/'))).toHaveLength(0);
  });

  it('shows the load error for other failures, and Try again loads again', async () => {
    const user = userEvent.setup();
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { main, calls } = open('/resources/daily-message/7', (_request, previous) =>
      previous === 0 ? reply(500, { error: 'Boom', code: 'internal' }) : reply(200, MESSAGE),
    );
    expect(await main.findByRole('alert', {}, { timeout: 10_000 })).toHaveTextContent(DAILY_LOAD_FAILED);
    expect(main.queryByRole('heading', { name: DAILY_NOT_FOUND })).not.toBeInTheDocument();
    await user.click(main.getByRole('button', { name: 'Try again' }));
    await loaded(main);
    expect(main.queryByRole('alert')).not.toBeInTheDocument();
    expect(calls(PATH)).toHaveLength(2);
  });
});
