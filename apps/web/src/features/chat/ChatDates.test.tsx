// Day separators and full dates in the chat: grouping across older pages, streaming answers,
// onboarding, and the change of day at midnight on the injected timers.
import type { TChatMessage } from '@daybook/contracts';
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, reply } from '../../test/fetch.ts';
import { memoryRouter } from '../../test/render.tsx';
import { fakeTimers, fakeWebSocketClass } from '../../test/socket.ts';
import { ChatPage } from './ChatView.tsx';
import { HEARTBEAT_MS } from './useChatSocket.ts';

/** A local time as ISO, so the labels hold in any time zone. */
const local = (month: number, day: number, hours: number, minutes = 0, year = 2026) =>
  new Date(year, month, day, hours, minutes).toISOString();
/** "Now" in the tests: Wednesday 18 November 2026, one minute before midnight. */
const NOW = new Date(2026, 10, 18, 23, 59).getTime();

let nextId = 100;
function message(fields: Partial<TChatMessage> = {}): TChatMessage {
  return {
    author_type: 'human',
    message_type: 'message',
    raw_text: 'Hello there',
    message_id: nextId++,
    timestamp: local(10, 18, 9, 30),
    ...fields,
  };
}

function setup(path = '/chat') {
  const socketClass = fakeWebSocketClass();
  const timers = fakeTimers(NOW);
  const page = (channel: 'chat' | 'onboarding') => (
    <ChatPage
      channel={channel}
      title="Chat"
      subtitle="Talk"
      WebSocketImpl={socketClass.WebSocketImpl}
      timers={timers}
    />
  );
  const router = memoryRouter(
    [
      { path: '/chat', element: page('chat') },
      { path: '/onboarding', element: page('onboarding') },
    ],
    { initialEntries: [path] },
  );
  render(router.element);
  const log = () => within(screen.getByRole('log', { name: 'Messages' }));
  const connect = (messages: TChatMessage[], hasMore = false) => {
    const socket = socketClass.latest();
    socket.open();
    socket.receive({ message_type: 'history', messages, has_more: hasMore });
    return socket;
  };
  /** The day separators, top to bottom. */
  const days = () =>
    log()
      .queryAllByRole('heading', { level: 2 })
      .map((h) => h.textContent);
  /** The texts of each day, by its separator. */
  const byDay = () =>
    Array.from(document.querySelectorAll('.chat-day'), (day) => [
      day.querySelector('.chat-day-label')?.textContent,
      Array.from(day.querySelectorAll('.chat-bubble'), (b) => b.textContent),
    ]);
  return { timers, log, connect, days, byDay };
}

describe('chat dates', () => {
  it('separates days with Today, Yesterday, the date, and the year for other years', () => {
    const { connect, days, byDay, log } = setup();
    connect([
      message({ raw_text: 'A year ago', timestamp: local(10, 17, 10, 0, 2025) }),
      message({ raw_text: 'Monday', timestamp: local(10, 16, 9, 0) }),
      message({ raw_text: 'Late yesterday', timestamp: local(10, 17, 23, 30) }),
      message({ raw_text: 'This morning', timestamp: local(10, 18, 0, 10) }),
      message({
        raw_text: 'Just now',
        author_type: 'assistant',
        message_type: 'markdown',
        timestamp: local(10, 18, 23, 58),
      }),
    ]);
    expect(days()).toEqual(['Mon 17 November 2025', 'Mon 16 November', 'Yesterday', 'Today']);
    expect(byDay()).toEqual([
      ['Mon 17 November 2025', ['A year ago']],
      ['Mon 16 November', ['Monday']],
      ['Yesterday', ['Late yesterday']],
      ['Today', ['This morning', 'Just now']],
    ]);
    // The separator is a heading with the day as a machine-readable date, not a message.
    const today = log().getByRole('heading', { level: 2, name: 'Today' });
    expect(today.querySelector('time')).toHaveAttribute('datetime', '2026-11-18');
    expect(today.closest('article')).toBeNull();
    expect(log().getAllByRole('article')).toHaveLength(5);
  });

  it('shows the full date of a time stamp on hover and to screen readers', () => {
    const { connect, log } = setup();
    connect([message({ raw_text: 'Hi', timestamp: local(10, 17, 15, 7) })]);
    const time = log().getByRole('article', { name: 'You said' }).querySelector('time') as HTMLElement;
    expect(time).toHaveAttribute('datetime', local(10, 17, 15, 7));
    expect(time).toHaveAttribute('title', 'Tuesday 17 November 2026 at 3:07 PM');
    // Seen: the time; heard: the full date (the short time is hidden from screen readers).
    expect(within(time).getByText('3:07 PM')).toHaveAttribute('aria-hidden', 'true');
    expect(within(time).getByText('Tuesday 17 November 2026 at 3:07 PM')).toHaveClass('visually-hidden');
  });

  it('turns Today into Yesterday at midnight, on a chat left open', () => {
    const { connect, days, timers } = setup();
    connect([
      message({ raw_text: 'Tuesday', timestamp: local(10, 17, 12, 0) }),
      message({ raw_text: 'Wednesday', timestamp: local(10, 18, 12, 0) }),
    ]);
    expect(days()).toEqual(['Yesterday', 'Today']);
    // One timer, due at the next local midnight (the connection's heartbeat aside).
    expect(timers.delays().filter((ms) => ms !== HEARTBEAT_MS)).toEqual([60_000]);
    timers.advance(59_999);
    expect(days()).toEqual(['Yesterday', 'Today']);
    timers.advance(1);
    expect(days()).toEqual(['Tue 17 November', 'Yesterday']);
    // And the next night again.
    timers.advance(24 * 60 * 60_000);
    expect(days()).toEqual(['Tue 17 November', 'Wed 18 November']);
  });

  it('puts a message being sent and a streaming answer under Today, with no second separator when it arrives', async () => {
    const { connect, days, byDay, log } = setup();
    const socket = connect([message({ raw_text: 'Yesterday’s note', timestamp: local(10, 17, 20, 0) })]);
    await userEvent.type(screen.getByRole('textbox', { name: 'Message' }), 'New question{Enter}');
    expect(byDay()).toEqual([
      ['Yesterday', ['Yesterday’s note']],
      ['Today', ['New question']],
    ]);
    expect(log().getByText('sending...')).toBeInTheDocument();
    // The echo (matched to the message being sent), then the answer's first piece.
    const question = message({ raw_text: 'New question', timestamp: local(10, 18, 23, 59) });
    socket.receive(question);
    socket.receive({
      message_type: 'stream',
      author_type: 'assistant',
      stream_id: 's1',
      raw_text: 'Thinking',
      reply_to: question.message_id,
    });
    expect(byDay()).toEqual([
      ['Yesterday', ['Yesterday’s note']],
      ['Today', ['New question', 'Thinking']],
    ]);
    socket.receive(
      message({
        author_type: 'assistant',
        message_type: 'markdown',
        raw_text: 'Thinking done',
        stream_id: 's1',
        reply_to: question.message_id ?? undefined,
        timestamp: local(10, 18, 23, 59),
      }),
    );
    expect(days()).toEqual(['Yesterday', 'Today']);
    expect(byDay()[1]?.[1]).toEqual(['New question', 'Thinking done']);
  });

  it('adds older pages to their days: one separator for a day split across pages', async () => {
    mockFetch({
      'GET /api/chat/messages/': reply(200, {
        results: [
          message({ message_id: 5, raw_text: 'Last year', timestamp: local(10, 17, 9, 0, 2025) }),
          message({ message_id: 6, raw_text: 'Monday early', timestamp: local(10, 16, 8, 0) }),
        ],
        has_more: false,
      }),
    });
    const { connect, days, byDay } = setup();
    connect(
      [
        message({ message_id: 7, raw_text: 'Monday late', timestamp: local(10, 16, 21, 0) }),
        message({ message_id: 8, raw_text: 'Today', timestamp: local(10, 18, 8, 0) }),
      ],
      true,
    );
    expect(days()).toEqual(['Mon 16 November', 'Today']);
    await userEvent.click(screen.getByRole('button', { name: 'Load earlier messages' }));
    await waitFor(() => expect(days()).toEqual(['Mon 17 November 2025', 'Mon 16 November', 'Today']));
    expect(byDay()[1]).toEqual(['Mon 16 November', ['Monday early', 'Monday late']]);
  });

  it('separates days in the onboarding conversation too', () => {
    const { connect, days } = setup('/onboarding');
    connect([
      message({ author_type: 'assistant', raw_text: 'Welcome!', timestamp: local(10, 17, 18, 0) }),
      message({ raw_text: 'Back again', timestamp: local(10, 18, 9, 0) }),
    ]);
    expect(days()).toEqual(['Yesterday', 'Today']);
  });

  it('shows no separator and sets no timer for an empty conversation', () => {
    const { connect, days, timers } = setup();
    connect([]);
    expect(days()).toEqual([]);
    expect(timers.delays().filter((ms) => ms !== HEARTBEAT_MS)).toEqual([]);
  });
});
