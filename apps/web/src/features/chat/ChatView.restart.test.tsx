// The chat while the server restarts (1012, as a deploy or `docker compose up` does): it is back at
// once on another instance with no outage shown, and a message the stopping server did not take is
// sent again on the new connection.
import type { TChatMessage } from '@daybook/contracts';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { renderChatPage } from '../../test/chat.tsx';

const answer: TChatMessage = {
  author_type: 'assistant',
  message_type: 'markdown',
  raw_text: 'The whole answer',
  message_id: 2,
  timestamp: new Date(2025, 5, 2, 9, 30).toISOString(),
  reply_to: 1,
};

const setup = () => renderChatPage();

/** No banner says the chat is disconnected or failing. */
const noOutage = () => {
  expect(screen.queryByText(/You are disconnected\./)).not.toBeInTheDocument();
  expect(screen.queryByText(/connection error/i)).not.toBeInTheDocument();
};

describe('ChatView when the server restarts (1012)', () => {
  it('reconnects at once with no outage shown, and sends again what the server did not take', async () => {
    const { sockets, latest } = setup();
    latest().open();
    latest().receive({ message_type: 'history', messages: [answer], has_more: false });
    // Sent while the server shuts down: it takes no new message, then closes the socket with 1012.
    await userEvent.type(screen.getByRole('textbox', { name: 'Message' }), 'Still there?{Enter}');
    const [sent] = latest().sent as Array<{ client_id: string }>;
    latest().serverClose(1012);
    noOutage();
    // At once: no retry waits on a timer.
    expect(sockets).toHaveLength(2);
    expect(document.querySelector('.chat-status')).toHaveTextContent('Connecting...');

    latest().open();
    noOutage();
    expect(document.querySelector('.chat-status')).toHaveTextContent('Connected');
    latest().receive({ message_type: 'history', messages: [answer], has_more: false });
    expect(latest().sent).toEqual([
      { author_type: 'human', message_type: 'message', raw_text: 'Still there?', client_id: sent?.client_id },
    ]);
    const log = within(screen.getByRole('log', { name: 'Messages' }));
    expect(log.getByText('The whole answer')).toBeInTheDocument();
  });

  it('when no instance answers yet, it shows the disconnected outage (not a connection error) and retries', () => {
    const { sockets, latest, timers } = setup();
    latest().open();
    latest().receive({ message_type: 'history', messages: [answer], has_more: false });
    latest().serverClose(1012);
    // The one server is still restarting: the attempt at once fails.
    latest().fail();
    latest().serverClose(1006);
    expect(screen.getByText(/You are disconnected\./)).toBeInTheDocument();
    expect(screen.queryByText(/connection error/i)).not.toBeInTheDocument();
    const attempts = sockets.length;
    timers.advance(1_000);
    expect(sockets).toHaveLength(attempts + 1);
    latest().open();
    noOutage();
  });
});
