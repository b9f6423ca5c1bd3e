import type { TResearchReport } from '@daybook/contracts';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { memoryRouter } from '../../test/render.tsx';
import { ChatMessage } from '../chat/ChatMessage.tsx';
import type { ChatItem } from '../chat/chat.state.ts';
import { OPEN_REPORT, REPORT_ERROR } from './ResearchReportView.tsx';

const REPORT: TResearchReport = {
  id: 7,
  query: 'best e-bikes for commuting',
  created: '2025-06-03T09:30:00.000Z',
  introduction: 'Three models stand out [1].',
  report: '## Findings\n\nThe lightest weighs 14 kg [2].',
  conclusion: 'Pick by range [1, 2].',
  sources: [
    { url: 'https://a.example/review', title: 'Review A' },
    { url: 'https://b.example/test', title: 'Test B' },
  ],
};

/** The real chat message, as the chat renders it, in a router with the report's page. */
function show(raw: string) {
  const item: ChatItem = {
    key: 'm1',
    author_type: 'assistant',
    message_type: 'research_report',
    raw_text: raw,
    message_id: 1,
    timestamp: '2025-06-03T09:33:00.000Z',
  };
  const router = memoryRouter(
    [
      { path: '/chat', element: <ChatMessage item={item} /> },
      { path: '/resources/research/:id', element: <h1>Report page</h1> },
    ],
    { initialEntries: ['/chat'] },
  );
  render(router.element);
  return router;
}

describe('The research report in the chat', () => {
  it('links to the report page when the report carries its id', async () => {
    const user = userEvent.setup();
    const router = show(JSON.stringify(REPORT));
    const report = screen.getByRole('region', { name: 'Best e-bikes for commuting' });
    const link = within(report).getByRole('link', { name: OPEN_REPORT });
    expect(link).toHaveAttribute('href', '/resources/research/7');
    await user.click(link);
    expect(router.state.location.pathname).toBe('/resources/research/7');
    expect(screen.getByRole('heading', { name: 'Report page' })).toBeInTheDocument();
  });

  it('links citations to their sources, in the introduction and, once opened, in the full report', async () => {
    const user = userEvent.setup();
    show(JSON.stringify(REPORT));
    const report = screen.getByRole('region', { name: 'Best e-bikes for commuting' });
    expect(within(report).getByRole('link', { name: '[1]' })).toHaveAttribute('href', 'https://a.example/review');
    await user.click(within(report).getByRole('button', { name: 'See the full report' }));
    expect(within(report).getByRole('heading', { level: 4, name: 'Findings' })).toBeInTheDocument();
    expect(within(report).getByRole('link', { name: '[2]' })).toHaveAttribute('href', 'https://b.example/test');
    expect(within(report).getByRole('link', { name: '1' })).toHaveAttribute('target', '_blank');
    expect(within(report).getByRole('list', { name: 'Sources' })).toBeInTheDocument();
  });

  it('has no Open report link without an id', () => {
    const { id: _id, ...withoutId } = REPORT;
    show(JSON.stringify(withoutId));
    expect(screen.getByRole('region', { name: 'Best e-bikes for commuting' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: OPEN_REPORT })).not.toBeInTheDocument();
  });

  it('shows Error displaying research report for a message that is not a report', () => {
    show(JSON.stringify({ query: 'x' }));
    expect(screen.getByText(REPORT_ERROR)).toBeInTheDocument();
  });
});
