// The chat page over a fake socket and hand-driven timers, for the chat's component tests.
import type { TChatMessage } from '@daybook/contracts';
import { render, screen, within } from '@testing-library/react';
import type { RouteObject } from 'react-router-dom';
import { ChatPage } from '../features/chat/ChatView.tsx';
import { memoryRouter } from './render.tsx';
import { fakeTimers, fakeWebSocketClass } from './socket.ts';

/** What a history event may carry besides its messages (streams, answering, researches). */
export type HistoryExtras = Record<string, unknown>;

/** /chat rendered alone (plus `routes`, for links it follows). */
export function renderChatPage({ routes = [] }: { routes?: RouteObject[] } = {}) {
  const socketClass = fakeWebSocketClass();
  const timers = fakeTimers();
  const router = memoryRouter(
    [
      {
        path: '/chat',
        element: (
          <ChatPage
            channel="chat"
            title="Chat"
            subtitle="Talk"
            WebSocketImpl={socketClass.WebSocketImpl}
            timers={timers}
          />
        ),
      },
      ...routes,
    ],
    { initialEntries: ['/chat'] },
  );
  render(router.element);
  /** Opens the latest socket and delivers a history. */
  const connect = (messages: TChatMessage[] = [], extras: HistoryExtras = {}) => {
    const socket = socketClass.latest();
    socket.open();
    socket.receive({ message_type: 'history', messages, has_more: false, ...extras });
    return socket;
  };
  const log = () => within(screen.getByRole('log', { name: 'Messages' }));
  return { ...socketClass, timers, router, connect, log };
}
