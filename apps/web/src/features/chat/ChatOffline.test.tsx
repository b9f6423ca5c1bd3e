import { act, cleanup, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { renderChatPage } from '../../test/chat.tsx';
import { SENDING, WAITING_FOR_CONNECTION } from './ChatMessage.tsx';
import { OFFLINE_NOTICE } from './ConnectionBanners.tsx';
import { HEARTBEAT_MS, PONG_TIMEOUT_MS } from './useChatSocket.ts';
import { OFFLINE } from './useConnectionState.ts';

afterEach(cleanup);

function setup() {
  const chat = renderChatPage();
  const badge = () => screen.getByText(/^(Connected|Disconnected|Reconnecting\.\.\.|Connecting\.\.\.|Offline)$/);
  const typing = () => screen.queryByRole('status', { name: 'Assistant is typing' });
  return { ...chat, badge, typing };
}

const setOnLine = (onLine: boolean) => {
  Object.defineProperty(window.navigator, 'onLine', { configurable: true, get: () => onLine });
  act(() => {
    window.dispatchEvent(new Event(onLine ? 'online' : 'offline'));
  });
};
afterEach(() => {
  Object.defineProperty(window.navigator, 'onLine', { configurable: true, get: () => true });
});

describe('a connection that dies quietly', () => {
  it('a message sent into it waits for the connection, then goes out once on the next one', async () => {
    const { connect, badge, log, typing, timers, sockets } = setup();
    const first = connect();
    first.stalled = true;
    await userEvent.type(screen.getByRole('textbox', { name: 'Message' }), 'Are you there?{Enter}');
    expect(log().getByText(SENDING)).toBeInTheDocument();
    const sent = first.sent[0] as { client_id: string };

    // Nothing comes back: within seconds the chat says the connection is lost.
    timers.advance(PONG_TIMEOUT_MS - 1);
    expect(badge()).toHaveTextContent('Connected');
    timers.advance(1);
    expect(badge()).toHaveTextContent(/Disconnected|Reconnecting/);
    expect(first.closedWith).toBe(4000);
    expect(log().getByText(WAITING_FOR_CONNECTION)).toBeInTheDocument();
    expect(typing()).toBeNull();

    // The next connection's history does not have it: it is sent again, with the same id, once.
    timers.advance(1_000);
    const second = sockets.at(-1);
    expect(second).not.toBe(first);
    second?.open();
    second?.receive({ message_type: 'history', messages: [], has_more: false });
    expect(second?.sent).toEqual([expect.objectContaining({ raw_text: 'Are you there?', client_id: sent.client_id })]);
    second?.receive({
      author_type: 'human',
      message_type: 'message',
      raw_text: 'Are you there?',
      message_id: 41,
      timestamp: new Date(timers.now()).toISOString(),
    });
    expect(log().queryByText(WAITING_FOR_CONNECTION)).toBeNull();
    expect(log().getAllByText('Are you there?')).toHaveLength(1);
    expect(typing()).not.toBeNull();
  });

  it('asks after a quiet spell: a live one answers and stays, a dead one is given up', () => {
    const { connect, badge, timers } = setup();
    const socket = connect();
    timers.advance(HEARTBEAT_MS);
    expect(socket.pings).toBe(1);
    timers.advance(PONG_TIMEOUT_MS * 2);
    expect(badge()).toHaveTextContent('Connected');
    socket.stalled = true;
    timers.advance(HEARTBEAT_MS);
    expect(socket.pings).toBe(2);
    timers.advance(PONG_TIMEOUT_MS);
    expect(badge()).not.toHaveTextContent('Connected');
  });
});

describe('a browser that goes offline', () => {
  it('says Offline at once, tries nothing while offline, and reconnects as soon as it is back', () => {
    const { connect, badge, timers, sockets } = setup();
    const socket = connect();
    setOnLine(false);
    expect(badge()).toHaveTextContent(OFFLINE);
    expect(screen.getByText(OFFLINE_NOTICE)).toBeInTheDocument();
    expect(socket.closedWith).toBe(4000);
    expect(screen.getByRole('textbox', { name: 'Message' })).toBeDisabled();
    const opened = sockets.length;
    timers.advance(60_000);
    expect(sockets).toHaveLength(opened);

    setOnLine(true);
    expect(sockets).toHaveLength(opened + 1);
    connect();
    expect(badge()).toHaveTextContent('Connected');
    expect(screen.queryByText(OFFLINE_NOTICE)).toBeNull();
  });
});
