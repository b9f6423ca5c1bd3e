import type { TChatSearchResult } from '@daybook/contracts';
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { type Handler, mockFetch, type RecordedRequest, reply } from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';
import { ChatSearchButton, formatWhen, highlighted, MORE_FAILED, SEARCH_FAILED, SEARCH_HINT } from './ChatSearch.tsx';

const SEARCH = 'GET /api/chat/search/';

function result(id: number, fields: Partial<TChatSearchResult> = {}): TChatSearchResult {
  return {
    message_id: id,
    author_type: 'human',
    message_type: 'message',
    timestamp: '2026-03-14T15:05:00.000Z',
    snippet: `About the tides, number ${id}`,
    highlights: [{ start: 10, end: 15 }],
    ...fields,
  };
}

function Where() {
  const location = useLocation();
  return <p data-testid="where">{`${location.pathname}${location.search}`}</p>;
}

const params = (request: RecordedRequest) => Object.fromEntries(new URLSearchParams(request.search));

function open(search: Handler) {
  const network = mockFetch({ [SEARCH]: search });
  const routes = [
    {
      path: '/chat',
      element: (
        <main>
          <ChatSearchButton />
          <textarea aria-label="Message" />
          <Where />
        </main>
      ),
    },
  ];
  renderRoutes(routes, { path: '/chat', auth: signedIn });
  const searches = () => network.calls(SEARCH).map(params);
  return { ...network, searches };
}

async function openDialog() {
  const user = userEvent.setup();
  await user.click(screen.getByRole('button', { name: 'Search chat' }));
  const dialog = await screen.findByRole('dialog', { name: 'Search chat' });
  return { user, dialog: within(dialog) };
}

describe('Chat search', () => {
  it('dates results with the chat day labels', () => {
    const now = new Date(2026, 10, 18, 9, 0).getTime();
    const local = (...args: [number, number, number, number, number]) => new Date(...args).toISOString();
    expect(formatWhen(local(2026, 10, 18, 15, 5), now)).toBe('Today, 3:05 PM');
    expect(formatWhen(local(2026, 10, 17, 8, 0), now)).toBe('Yesterday, 8:00 AM');
    expect(formatWhen(local(2026, 10, 16, 8, 0), now)).toBe('Mon 16 November, 8:00 AM');
    expect(formatWhen(local(2025, 10, 17, 8, 0), now)).toBe('Mon 17 November 2025, 8:00 AM');
    expect(formatWhen('garbled', now)).toBe('');
  });

  it('searches as one types (debounced), shows author, date and the match marked, and opens a result', async () => {
    const { searches } = open(
      reply(200, {
        results: [
          result(42, { snippet: 'Remember the Café on Rua Augusta', highlights: [{ start: 13, end: 17 }] }),
          result(7, {
            author_type: 'assistant',
            message_type: 'markdown',
            snippet: 'The cafe opens at 8.',
            highlights: [{ start: 4, end: 8 }],
          }),
        ],
        has_more: false,
      }),
    );
    const { user, dialog } = await openDialog();
    const field = dialog.getByRole('searchbox', { name: 'Search messages' });
    expect(field).toHaveFocus();
    expect(dialog.getByText(SEARCH_HINT)).toBeInTheDocument();

    await user.type(field, '  cafe');
    const list = await dialog.findByRole('list', { name: 'Results' });
    expect(searches()).toEqual([{ q: 'cafe' }]);
    const links = within(list).getAllByRole('link');
    expect(links).toHaveLength(2);
    expect(links[0]).toHaveAttribute('href', '/chat?message=42');
    expect(within(links[0] as HTMLElement).getByText('You')).toBeInTheDocument();
    expect(within(links[1] as HTMLElement).getByText('Assistant')).toBeInTheDocument();
    expect(links[0]?.querySelector('time')).toHaveAttribute('datetime', '2026-03-14T15:05:00.000Z');
    // The chat's day labels: 15:05 UTC on 14 March 2026 is the 14th or the 15th, depending on the zone.
    expect(links[0]?.querySelector('time')?.textContent).toMatch(/^\w{3} 1[45] March( 2026)?, \d{1,2}:05 [AP]M$/);
    expect(Array.from(list.querySelectorAll('mark'), (m) => m.textContent)).toEqual(['Café', 'cafe']);
    expect(links[0]).toHaveTextContent('Remember the Café on Rua Augusta');
    expect(await screen.findByText('2 results.')).toBeInTheDocument();

    await user.click(links[0] as HTMLElement);
    expect(screen.getByTestId('where')).toHaveTextContent('/chat?message=42');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Search chat' })).toHaveFocus();
  });

  it('labels a research report result and opens it in the chat like any other', async () => {
    open(
      reply(200, {
        results: [
          result(31, {
            author_type: 'assistant',
            message_type: 'research_report',
            snippet: 'The Tagus estuary has semidiurnal tides.',
            highlights: [{ start: 4, end: 17 }],
          }),
          result(30),
        ],
        has_more: false,
      }),
    );
    const { user, dialog } = await openDialog();
    await user.type(dialog.getByRole('searchbox'), 'tagus estuary');
    const links = within(await dialog.findByRole('list', { name: 'Results' })).getAllByRole('link');
    const report = links[0] as HTMLElement;
    expect(within(report).getByText('Research report')).toBeVisible();
    // Spoken as one link: who, what, when, then the snippet.
    expect(report).toHaveAccessibleName(
      /^Assistant,\s?Research report,\s?.+:\s?The Tagus estuary has semidiurnal tides\.$/,
    );
    expect(links[1]).toHaveAccessibleName(/^(You|Assistant),\s?[^,]+, [^,:]+:\s?\S/);
    expect(within(report).getByText('Tagus estuary').tagName).toBe('MARK');
    expect(within(links[1] as HTMLElement).queryByText('Research report')).not.toBeInTheDocument();

    await user.click(report);
    expect(screen.getByTestId('where')).toHaveTextContent('/chat?message=31');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('loads more results from the last one, and moves focus to the first new one', async () => {
    const { searches } = open((request) => {
      const before = params(request).before;
      return before
        ? reply(200, { results: [result(3), result(2)], has_more: false })
        : reply(200, { results: [result(9), result(8)], has_more: true });
    });
    const { user, dialog } = await openDialog();
    await user.type(dialog.getByRole('searchbox'), 'tides');
    await dialog.findByRole('list', { name: 'Results' });
    expect(await screen.findByText('2 results, more available.')).toBeInTheDocument();
    await user.click(dialog.getByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(dialog.getAllByRole('link')).toHaveLength(4));
    expect(searches()).toEqual([{ q: 'tides' }, { q: 'tides', before: '8' }]);
    expect(dialog.getAllByRole('link')[2]).toHaveFocus();
    expect(dialog.queryByRole('button', { name: 'Load more' })).not.toBeInTheDocument();
  });

  it('says when nothing matches, and offers to try again after a failure', async () => {
    const { searches } = open((request, calls) => {
      const q = params(request).q;
      if (q === 'zebra') return reply(200, { results: [], has_more: false });
      return calls === 1
        ? reply(500, { error: 'Something went wrong', code: 'internal' })
        : reply(200, { results: [result(5)], has_more: false });
    });
    const { user, dialog } = await openDialog();
    const field = dialog.getByRole('searchbox');
    await user.type(field, 'zebra');
    expect(await dialog.findByText(/No messages match/)).toHaveTextContent('No messages match “zebra”.');
    expect(screen.getByText('No messages found.')).toBeInTheDocument();

    await user.clear(field);
    await user.type(field, 'tides');
    expect(await dialog.findByRole('alert')).toHaveTextContent(SEARCH_FAILED);
    await user.click(dialog.getByRole('button', { name: 'Try again' }));
    expect(await dialog.findByRole('list', { name: 'Results' })).toBeInTheDocument();
    expect(searches().map((s) => s.q)).toEqual(['zebra', 'tides', 'tides']);
  });

  it('keeps the results when loading more fails, and retries', async () => {
    open((request, calls) => {
      if (!params(request).before) return reply(200, { results: [result(9)], has_more: true });
      return calls === 1 ? reply(503, {}) : reply(200, { results: [result(4)], has_more: false });
    });
    const { user, dialog } = await openDialog();
    await user.type(dialog.getByRole('searchbox'), 'tides');
    await user.click(await dialog.findByRole('button', { name: 'Load more' }));
    expect(await dialog.findByRole('alert')).toHaveTextContent(MORE_FAILED);
    expect(dialog.getAllByRole('link')).toHaveLength(1);
    await user.click(dialog.getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(dialog.getAllByRole('link')).toHaveLength(2));
  });

  it('works from the keyboard: Ctrl+K opens, arrows move, Enter opens, Escape closes', async () => {
    open(reply(200, { results: [result(11), result(10)], has_more: false }));
    const user = userEvent.setup();
    const box = screen.getByRole('textbox', { name: 'Message' });
    await user.click(box);
    await user.keyboard('{Control>}k{/Control}');
    const dialog = within(await screen.findByRole('dialog', { name: 'Search chat' }));
    const field = dialog.getByRole('searchbox');
    expect(field).toHaveFocus();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(box).toHaveFocus();

    await user.click(screen.getByRole('button', { name: 'Search chat' }));
    const again = within(await screen.findByRole('dialog'));
    await user.type(again.getByRole('searchbox'), 'tides');
    const links = await again.findAllByRole('link');
    await user.keyboard('{ArrowDown}');
    expect(links[0]).toHaveFocus();
    await user.keyboard('{ArrowDown}');
    expect(links[1]).toHaveFocus();
    await user.keyboard('{ArrowUp}{ArrowUp}');
    expect(again.getByRole('searchbox')).toHaveFocus();
    // Enter in the field opens the first result.
    await user.keyboard('{Enter}');
    expect(screen.getByTestId('where')).toHaveTextContent('/chat?message=11');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Search chat' })).toHaveFocus();
  });
});

describe('highlighted', () => {
  it('marks each highlight and ignores offsets outside the snippet or overlapping', () => {
    render(
      <p data-testid="p">
        {highlighted('one two three', [
          { start: 8, end: 13 },
          { start: 0, end: 3 },
          { start: 2, end: 5 },
          { start: 10, end: 40 },
        ])}
      </p>,
    );
    const p = screen.getByTestId('p');
    expect(p).toHaveTextContent('one two three');
    expect(Array.from(p.querySelectorAll('mark'), (m) => m.textContent)).toEqual(['one', 'three']);
  });
});
