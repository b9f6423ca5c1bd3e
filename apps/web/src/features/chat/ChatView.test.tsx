import {
  ANSWER_INTERRUPTED,
  ASSISTANT_UNAVAILABLE,
  DAILY_MESSAGES,
  type TChatMessage,
  type TDailyMessage,
} from '@daybook/contracts';
import { act, cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import {
  ALLAUTH,
  deferred,
  mockFetch,
  type Reply,
  reply,
  SESSION_ANONYMOUS,
  SESSION_SIGNED_IN,
  USER_ME,
} from '../../test/fetch.ts';
import { memoryRouter, renderRoutes, signedIn } from '../../test/render.tsx';
import { fakeTimers, fakeWebSocketClass } from '../../test/socket.ts';
import { fetchSession } from '../auth/auth-context.tsx';
import { ChatPage, type ChatViewProps } from './ChatView.tsx';
import { ONBOARDING_REDIRECT_MS } from './useRedirect.ts';
import { NOTIFICATION_FADE_MS, NOTIFICATION_HOLD_MS } from './useTaskNotifications.ts';

/** A local time today as ISO, so the 12-hour rendering is predictable in any time zone. */
const at = (hours: number, minutes: number) => new Date(2025, 5, 2, hours, minutes).toISOString();

let nextId = 100;
function message(fields: Partial<TChatMessage> = {}): TChatMessage {
  return {
    author_type: 'assistant',
    message_type: 'markdown',
    raw_text: 'Hello there',
    message_id: nextId++,
    timestamp: at(9, 30),
    ...fields,
  };
}

const history = (messages: TChatMessage[], has_more = false) => ({ message_type: 'history', messages, has_more });

function dailyMessage(fields: Partial<TDailyMessage> = {}): TDailyMessage {
  return {
    id: 7,
    delivery_date: '2025-06-02',
    message_text: 'Good morning, Sam.',
    research_reports: [],
    delivered: at(7, 0),
    chat_message_id: 50,
    ...fields,
  };
}

function setup({
  props = {},
  path = '/chat',
  sendThrows = false,
}: {
  props?: Partial<ChatViewProps>;
  path?: string;
  sendThrows?: boolean;
} = {}) {
  const socketClass = fakeWebSocketClass({ sendThrows });
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
            {...props}
          />
        ),
      },
      {
        path: '/onboarding',
        element: (
          <ChatPage
            channel="onboarding"
            title="Getting to know you"
            subtitle="Onboarding"
            WebSocketImpl={socketClass.WebSocketImpl}
            timers={timers}
            {...props}
          />
        ),
      },
      { path: '/resources/daily-message/:id', element: <h1>Daily message page</h1> },
      { path: '/memories', element: <h1>Memories page</h1> },
    ],
    { initialEntries: [path] },
  );
  render(router.element);
  const textbox = () => screen.getByRole('textbox', { name: 'Message' });
  const sendButton = () => screen.getByRole('button', { name: 'Send' });
  const log = () => within(screen.getByRole('log', { name: 'Messages' }));
  /** Opens the socket and delivers a history. */
  const connect = (messages: TChatMessage[] = [], hasMore = false) => {
    const socket = socketClass.latest();
    socket.open();
    socket.receive(history(messages, hasMore));
    return socket;
  };
  return { ...socketClass, timers, router, textbox, sendButton, log, connect };
}

const typing = () => screen.queryByRole('status', { name: 'Assistant is typing' });

/** Pretends the device's main pointer is a mouse (`fine`) or a finger (`coarse`). */
function pointer(kind: 'fine' | 'coarse') {
  vi.stubGlobal(
    'matchMedia',
    vi.fn((query: string) => ({ matches: query === `(pointer: ${kind})`, media: query }) as MediaQueryList),
  );
}

/** Gives the message list a height of content, as jsdom does no layout. */
function fakeScrollHeight(list: HTMLElement, height: number) {
  Object.defineProperty(list, 'scrollHeight', { configurable: true, get: () => height });
}
/** The connection state in the chat header. */
const pill = () => document.querySelector('.chat-status') as HTMLElement;

describe('ChatView', () => {
  it('connects to /ws/chat/ and renders the history with 12-hour times', () => {
    mockFetch({ 'GET /api/daily-messages/7/': reply(200, dailyMessage({ chat_message_id: null })) });
    const { latest, connect, log } = setup({ path: '/chat?dmid=7' });
    expect(latest().url).toMatch(/^ws:\/\/[^/]+\/ws\/chat\/\?dmid=7$/);
    connect([
      message({ author_type: 'human', message_type: 'message', raw_text: 'Hi!', timestamp: at(15, 7) }),
      message({ raw_text: 'Hello **Sam**', timestamp: at(0, 5) }),
    ]);
    const human = log().getByRole('article', { name: 'You said' });
    expect(human).toHaveTextContent('Hi!');
    expect(within(human).getByText('3:07 PM')).toBeInTheDocument();
    const assistant = log().getByRole('article', { name: 'Assistant said' });
    expect(within(assistant).getByText('Sam').tagName).toBe('STRONG');
    expect(within(assistant).getByText('12:05 AM')).toBeInTheDocument();
  });

  it('fades in only the messages that arrive while it is open, not the history', async () => {
    const { textbox, connect, log } = setup();
    const socket = connect([
      message({ author_type: 'human', message_type: 'message', raw_text: 'Earlier question' }),
      message({ raw_text: 'Earlier answer' }),
    ]);
    const rows = () => log().getAllByRole('article');
    expect(rows().map((row) => row.classList.contains('is-new'))).toEqual([false, false]);
    await userEvent.type(textbox(), 'New question{Enter}');
    socket.receive(message({ raw_text: 'From another tab' }));
    expect(rows().map((row) => row.classList.contains('is-new'))).toEqual([false, false, true, true]);
  });

  it('disables the textarea and Send until connected and the history is in', () => {
    const { textbox, sendButton, latest } = setup();
    expect(textbox()).toBeDisabled();
    expect(sendButton()).toBeDisabled();
    expect(textbox()).toHaveAttribute('rows', '3');
    expect(textbox()).toHaveAttribute('placeholder', 'Type your message...');
    expect(screen.getByText('Connecting...')).toBeInTheDocument();
    latest().open();
    expect(screen.getByText('Connected')).toBeInTheDocument();
    expect(textbox()).toBeDisabled();
    latest().receive(history([]));
    expect(textbox()).toBeEnabled();
    expect(sendButton()).toBeEnabled();
  });

  it('sends on Enter, shows sending... and the typing indicator, then the echo time', async () => {
    const { textbox, connect, log, timers } = setup();
    const socket = connect();
    await userEvent.type(textbox(), '  Hello assistant  {Enter}');
    expect(socket.sent).toEqual([
      {
        author_type: 'human',
        message_type: 'message',
        raw_text: 'Hello assistant',
        timestamp: new Date(timers.now()).toISOString(),
        client_id: expect.stringMatching(/^[0-9a-f]{24}$/),
      },
    ]);
    expect(textbox()).toHaveValue('');
    const mine = log().getByRole('article', { name: 'You said' });
    expect(mine).toHaveTextContent('Hello assistant');
    expect(within(mine).getByText('sending...')).toBeInTheDocument();
    expect(typing()).toBeInTheDocument();

    socket.receive(
      message({ author_type: 'human', message_type: 'message', raw_text: 'Hello assistant', timestamp: at(15, 7) }),
    );
    expect(log().getAllByRole('article', { name: 'You said' })).toHaveLength(1);
    expect(within(mine).queryByText('sending...')).not.toBeInTheDocument();
    expect(within(mine).getByText('3:07 PM')).toBeInTheDocument();
    expect(typing()).toBeInTheDocument();

    socket.receive(message({ raw_text: 'Hi! How can I help?' }));
    expect(typing()).not.toBeInTheDocument();
    expect(log().getByRole('article', { name: 'Assistant said' })).toHaveTextContent('Hi! How can I help?');
  });

  it('a second echo with a known id only updates the time; other-tab messages are appended', async () => {
    const { textbox, connect, log } = setup();
    const socket = connect();
    await userEvent.type(textbox(), 'One{Enter}');
    const echo = message({ author_type: 'human', message_type: 'message', raw_text: 'One', timestamp: at(8, 0) });
    socket.receive(echo);
    socket.receive({ ...echo, timestamp: at(8, 1) });
    socket.receive(message({ author_type: 'human', message_type: 'message', raw_text: 'From my phone' }));
    const mine = log().getAllByRole('article', { name: 'You said' });
    // Each once, with its time (and the full date for screen readers).
    expect(mine.map((m) => m.textContent)).toEqual([
      'One8:01 AMMonday 2 June 2025 at 8:01 AM',
      'From my phone9:30 AMMonday 2 June 2025 at 9:30 AM',
    ]);
  });

  it('keeps the unsent text across a reload of the page, per conversation, until it is sent', async () => {
    const first = setup();
    first.connect();
    await userEvent.type(first.textbox(), 'Half a thought');
    cleanup();
    const again = setup();
    const socket = again.connect();
    expect(again.textbox()).toHaveValue('Half a thought');
    await userEvent.type(again.textbox(), ', finished{Enter}');
    expect(socket.sent).toMatchObject([{ raw_text: 'Half a thought, finished' }]);
    cleanup();
    const later = setup();
    later.connect();
    expect(later.textbox()).toHaveValue('');
    cleanup();
    window.sessionStorage.setItem('daybook.draft.chat', 'For the chat only');
    const interview = setup({ path: '/onboarding' });
    interview.connect();
    expect(interview.textbox()).toHaveValue('');
  });

  it('does not send blank text; Shift+Enter makes a new line', async () => {
    const { textbox, connect } = setup();
    const socket = connect();
    await userEvent.type(textbox(), '   {Enter}');
    expect(socket.sent).toEqual([]);
    await userEvent.clear(textbox());
    await userEvent.type(textbox(), 'line one{Shift>}{Enter}{/Shift}line two');
    expect(textbox()).toHaveValue('line one\nline two');
    expect(socket.sent).toEqual([]);
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect(socket.sent).toMatchObject([{ raw_text: 'line one\nline two' }]);
  });

  it('builds one bubble from stream pieces, then the final markdown replaces it', async () => {
    const { textbox, connect, log } = setup();
    const socket = connect();
    await userEvent.type(textbox(), 'Tell me{Enter}');
    expect(typing()).toBeInTheDocument();
    socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: 'Here is ' });
    expect(typing()).not.toBeInTheDocument();
    socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: '**bold** news' });
    let bubbles = log().getAllByRole('article', { name: 'Assistant said' });
    expect(bubbles).toHaveLength(1);
    expect(bubbles[0]).toHaveTextContent('Here is bold news');
    expect(within(bubbles[0] as HTMLElement).getByText('bold').tagName).toBe('STRONG');

    socket.receive(message({ raw_text: 'Here is **bold** news, final.', stream_id: 's1', timestamp: at(10, 15) }));
    bubbles = log().getAllByRole('article', { name: 'Assistant said' });
    expect(bubbles).toHaveLength(1);
    expect(bubbles[0]).toHaveTextContent('Here is bold news, final.');
    expect(within(bubbles[0] as HTMLElement).getByText('10:15 AM')).toBeInTheDocument();
    // A late piece of a finished stream is dropped.
    socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: ' extra' });
    expect(log().getAllByRole('article', { name: 'Assistant said' })[0]).not.toHaveTextContent('extra');
  });

  it('keeps the last 2 task notifications and clears the stack after a final one fades', () => {
    const { connect, timers } = setup();
    const socket = connect();
    const note = (raw_text: string, final = false) =>
      socket.receive({
        author_type: 'system',
        message_type: final ? 'task_notification_final' : 'task_notification',
        raw_text,
        message_id: null,
        timestamp: at(9, 0),
      });
    note('Searching the web');
    note('Reading 4 pages');
    note('Remembered: lives in Lisbon');
    const stack = () => screen.queryByRole('list', { name: 'Assistant activity' });
    expect(
      within(stack() as HTMLElement)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['Reading 4 pages', 'Remembered: lives in Lisbon']);
    note('Done', true);
    expect(within(stack() as HTMLElement).getAllByRole('listitem')).toHaveLength(2);
    timers.advance(NOTIFICATION_HOLD_MS);
    expect(stack()).toHaveClass('is-fading');
    timers.advance(NOTIFICATION_FADE_MS);
    expect(stack()).not.toBeInTheDocument();
    // Notifications never enter the message list.
    expect(screen.queryByText('Searching the web')).not.toBeInTheDocument();
  });

  it('navigates on a redirect message', async () => {
    const { connect, router } = setup();
    const socket = connect();
    socket.receive(message({ message_type: 'redirect', raw_text: '', url: '/resources/daily-message/3' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/resources/daily-message/3'));
    expect(screen.getByRole('heading', { name: 'Daily message page' })).toBeInTheDocument();
  });

  it('renders a research report with introduction, body, conclusion and sources', async () => {
    const { connect, log } = setup();
    connect([
      message({
        message_type: 'research_report',
        raw_text: JSON.stringify({
          query: 'electric bikes in Lisbon',
          introduction: 'A short look at **e-bikes**.',
          report: 'Prices fell by 10%.',
          conclusion: 'A good time to buy.',
          sources: [{ url: 'https://news.example/ebikes', title: 'E-bike news' }, { url: 'https://b.example/x' }],
        }),
      }),
      message({ message_type: 'research_report', raw_text: 'not json {' }),
    ]);
    const report = log().getByRole('region', { name: 'Electric bikes in Lisbon' });
    expect(within(report).getByText('e-bikes').tagName).toBe('STRONG');
    expect(within(report).queryByText('Prices fell by 10%.')).not.toBeInTheDocument();
    await userEvent.click(within(report).getByRole('button', { name: 'See the full report' }));
    expect(within(report).getByText('Prices fell by 10%.')).toBeInTheDocument();
    expect(within(report).getByText('A good time to buy.')).toBeInTheDocument();
    const sources = within(report).getByRole('list', { name: 'Sources' });
    const links = within(sources).getAllByRole('link');
    expect(links.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('target')])).toEqual([
      ['E-bike news', 'https://news.example/ebikes', '_blank'],
      ['https://b.example/x', 'https://b.example/x', '_blank'],
    ]);
    await userEvent.click(within(report).getByRole('button', { name: 'Collapse' }));
    expect(within(report).queryByText('Prices fell by 10%.')).not.toBeInTheDocument();
    expect(log().getByText('Error displaying research report')).toBeInTheDocument();
  });

  it('collapses long assistant markdown with Read more... and Collapse', async () => {
    const { connect, log } = setup();
    const long = Array.from({ length: 14 }, (_, i) => `Line ${i + 1}`).join('\n');
    connect([message({ raw_text: long }), message({ raw_text: 'Short answer' })]);
    const [first, second] = log().getAllByRole('article', { name: 'Assistant said' }) as HTMLElement[];
    const more = within(first as HTMLElement).getByRole('button', { name: 'Read more...' });
    expect(more).toHaveAttribute('aria-expanded', 'false');
    await userEvent.click(more);
    expect(within(first as HTMLElement).getByRole('button', { name: 'Collapse' })).toHaveAttribute(
      'aria-expanded',
      'true',
    );
    expect(within(second as HTMLElement).queryByRole('button', { name: /Read more|Collapse/ })).not.toBeInTheDocument();
  });

  it('leaves a long answer open while it streams in, and offers Collapse once it is complete', async () => {
    const { connect, log } = setup();
    const socket = connect();
    const lines = Array.from({ length: 14 }, (_, i) => `Line ${i + 1}`);
    for (const line of lines) {
      socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: 's9', raw_text: `${line}\n` });
    }
    const answer = () => log().getByRole('article', { name: 'Assistant said' });
    expect(within(answer()).queryByRole('button')).not.toBeInTheDocument();
    expect(answer().querySelector('.is-collapsed')).toBeNull();
    socket.receive(message({ raw_text: lines.join('\n'), stream_id: 's9' }));
    const collapse = within(answer()).getByRole('button', { name: 'Collapse' });
    expect(answer().querySelector('.is-collapsed')).toBeNull();
    await userEvent.click(collapse);
    expect(within(answer()).getByRole('button', { name: 'Read more...' })).toBeInTheDocument();
    expect(answer().querySelector('.is-collapsed')).not.toBeNull();
  });

  it('folds the answer that streamed in open once the conversation moves on, as a reload would', async () => {
    const { connect, log, textbox } = setup();
    const socket = connect();
    const lines = Array.from({ length: 14 }, (_, i) => `Line ${i + 1}`).join('\n');
    const stream = (id: string) => {
      socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: id, raw_text: lines });
      socket.receive(message({ raw_text: lines, stream_id: id }));
    };
    stream('s1');
    const answers = () => log().getAllByRole('article', { name: 'Assistant said' });
    expect(within(answers()[0] as HTMLElement).getByRole('button', { name: 'Collapse' })).toBeInTheDocument();
    // The user's next message: the answer they were reading is no longer the latest, so it folds.
    await userEvent.type(textbox(), 'Thanks{Enter}');
    socket.receive(message({ author_type: 'human', message_type: 'message', raw_text: 'Thanks' }));
    expect(within(answers()[0] as HTMLElement).getByRole('button', { name: 'Read more...' })).toBeInTheDocument();
    expect((answers()[0] as HTMLElement).querySelector('.is-collapsed')).not.toBeNull();
    expect(log().getAllByRole('article', { name: 'You said' })).toHaveLength(1);

    // Opened by the user, it stays open when newer messages come.
    await userEvent.click(within(answers()[0] as HTMLElement).getByRole('button', { name: 'Read more...' }));
    stream('s2');
    expect(within(answers()[0] as HTMLElement).getByRole('button', { name: 'Collapse' })).toBeInTheDocument();
    // The second answer streamed in open; another tab's message moves past it, and it folds.
    expect(within(answers()[1] as HTMLElement).getByRole('button', { name: 'Collapse' })).toBeInTheDocument();
    socket.receive(message({ author_type: 'human', message_type: 'message', raw_text: 'From my phone' }));
    expect(within(answers()[1] as HTMLElement).getByRole('button', { name: 'Read more...' })).toBeInTheDocument();
    expect(within(answers()[0] as HTMLElement).getByRole('button', { name: 'Collapse' })).toBeInTheDocument();
  });

  it('shows system messages plainly and server errors in a dismissible banner', async () => {
    const { connect, textbox } = setup();
    const socket = connect();
    socket.receive(
      message({
        author_type: 'system',
        message_type: 'system_message',
        raw_text: 'The assistant is unavailable right now, please try again',
      }),
    );
    expect(screen.getByText('The assistant is unavailable right now, please try again')).toHaveClass('chat-system');
    socket.receive({
      message_type: 'error',
      author_type: 'system',
      code: 'rate_limited',
      raw_text: 'You are sending messages too fast.',
    });
    const alert = screen.getByRole('alert');
    expect(alert).toHaveTextContent('You are sending messages too fast.');
    expect(textbox()).toBeEnabled();
    await userEvent.click(within(alert).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByText('You are sending messages too fast.')).not.toBeInTheDocument();
  });

  it('ignores an unreadable server frame and says so', () => {
    const { connect, log } = setup();
    const socket = connect([message({ raw_text: 'Still here' })]);
    socket.receive('this is not json');
    socket.receive({ message_type: 'mystery' });
    expect(screen.getByRole('alert')).toHaveTextContent('Error processing message from server');
    expect(log().getByText('Still here')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  });

  it('says Failed to send message when the socket refuses the frame', async () => {
    const { connect, textbox, log } = setup({ sendThrows: true });
    connect();
    await userEvent.type(textbox(), 'Hello{Enter}');
    expect(screen.getByRole('alert')).toHaveTextContent('Failed to send message');
    expect(log().queryByRole('article')).not.toBeInTheDocument();
    expect(textbox()).toHaveValue('Hello');
  });

  it('shows a character counter near the 8000 limit, and keeps pasted text over it without sending it', async () => {
    const { connect, textbox, sendButton } = setup();
    const socket = connect();
    await userEvent.click(textbox());
    await userEvent.paste('x'.repeat(7_600));
    expect(screen.getByText('7,600 / 8,000')).toBeInTheDocument();
    expect(textbox()).not.toHaveAttribute('aria-invalid');
    await userEvent.paste('y'.repeat(500));
    expect(textbox()).toHaveValue(`${'x'.repeat(7_600)}${'y'.repeat(500)}`);
    expect(textbox()).toHaveAttribute('aria-invalid', 'true');
    expect(textbox()).toHaveAccessibleDescription('Messages can be at most 8,000 characters. 8,100 / 8,000');
    expect(sendButton()).toBeDisabled();
    await userEvent.type(textbox(), '{Enter}');
    expect(socket.sent).toEqual([]);
    expect(textbox()).toHaveValue(`${'x'.repeat(7_600)}${'y'.repeat(500)}`);
  });

  it('offers Reconnect when disconnected and retries with backoff, counting down live', async () => {
    const { connect, sockets, timers, textbox } = setup();
    const socket = connect();
    socket.serverClose(1006);
    const banner = () => screen.getByText(/You are disconnected\./);
    expect(banner()).toHaveTextContent('Trying again in 1 s.');
    expect(pill()).toHaveTextContent('Disconnected');
    expect(textbox()).toBeDisabled();
    timers.advance(999);
    expect(sockets).toHaveLength(1);
    timers.advance(1);
    expect(sockets).toHaveLength(2);
    // The attempt runs: the banner stays, saying so.
    expect(banner()).toHaveTextContent('Reconnecting...');
    expect(banner()).not.toHaveTextContent('Trying again');
    expect(pill()).toHaveTextContent('Reconnecting...');
    sockets[1]?.serverClose(1006);
    // 1.5 s: shown in whole seconds, rounded up, ticking down.
    expect(banner()).toHaveTextContent('Trying again in 2 s.');
    timers.advance(500);
    expect(banner()).toHaveTextContent('Trying again in 1 s.');
    await userEvent.click(screen.getByRole('button', { name: 'Reconnect' }));
    expect(sockets).toHaveLength(3);
    // The scheduled retry was dropped, and only one socket connects at a time.
    timers.advance(5_000);
    expect(sockets).toHaveLength(3);
    const reconnect = screen.getByRole('button', { name: 'Reconnect' });
    expect(reconnect).toHaveAttribute('aria-disabled', 'true');
    await userEvent.click(reconnect);
    expect(sockets).toHaveLength(3);
    sockets[2]?.open();
    expect(screen.queryByText(/You are disconnected\./)).not.toBeInTheDocument();
    expect(pill()).toHaveTextContent('Connected');
    sockets[2]?.receive(history([]));
    expect(textbox()).toBeEnabled();
    // Attempts were reset by the open.
    sockets[2]?.serverClose(1011);
    expect(banner()).toHaveTextContent('Trying again in 1 s.');
    timers.advance(1_000);
    expect(sockets).toHaveLength(4);
  });

  it('keeps the disconnected banner through an outage, even when the retries fail with errors', () => {
    const { connect, sockets, timers } = setup();
    connect().serverClose(1006);
    for (const [index, wait] of [
      [1, 1_000],
      [2, 1_500],
      [3, 2_250],
    ] as const) {
      timers.advance(wait);
      expect(sockets).toHaveLength(index + 1);
      expect(screen.getByText(/You are disconnected\./)).toHaveTextContent('Reconnecting...');
      // A browser fails a connection attempt with an error, then a close.
      sockets[index]?.fail();
      sockets[index]?.serverClose(1006);
      expect(screen.getByText(/You are disconnected\./)).toHaveTextContent(/Trying again in \d s\./);
      expect(screen.queryByText(/WebSocket connection error/)).not.toBeInTheDocument();
      expect(screen.queryByRole('alert')).not.toBeInTheDocument();
      expect(pill()).toHaveTextContent('Disconnected');
    }
    sockets[3]?.fail();
    timers.advance(3_375);
    sockets[4]?.open();
    expect(screen.queryByText(/You are disconnected\./)).not.toBeInTheDocument();
  });

  it('does not retry after a normal close', () => {
    const { connect, timers } = setup();
    connect().serverClose(1000);
    expect(screen.getByText(/You are disconnected\./)).not.toHaveTextContent('Trying again');
    expect(timers.delays()).toEqual([]);
    expect(screen.getByRole('button', { name: 'Reconnect' })).toBeInTheDocument();
  });

  it('retries 5 s after an unauthenticated close (1008) and 15 s after 1013, counting down each second', () => {
    const { latest, sockets, timers } = setup();
    latest().serverClose(1008);
    const banner = () => screen.getByText(/You are disconnected\./);
    expect(banner()).toHaveTextContent('Your session may have expired. Trying again in 5 s.');
    for (const left of [4, 3, 2, 1]) {
      timers.advance(1_000);
      expect(banner()).toHaveTextContent(`Trying again in ${left} s.`);
    }
    timers.advance(999);
    expect(sockets).toHaveLength(1);
    timers.advance(1);
    expect(sockets).toHaveLength(2);
    sockets[1]?.serverClose(1013);
    expect(banner()).toHaveTextContent('The assistant is busy right now. Trying again in 15 s.');
    timers.advance(14_999);
    expect(sockets).toHaveLength(2);
    timers.advance(1);
    expect(sockets).toHaveLength(3);
  });

  it('gives screen readers one steady sentence instead of the ticking countdown', () => {
    const { connect } = setup();
    connect().serverClose(1008);
    const banner = screen.getByRole('status');
    expect(within(banner).getByText('Trying again in 5 s.')).toHaveAttribute('aria-hidden', 'true');
    expect(within(banner).getByText('Trying again shortly.')).toHaveClass('visually-hidden');
  });

  it('shows WebSocket connection error with Retry, and keeps it through the retries', async () => {
    const { latest, sockets, timers } = setup();
    latest().fail();
    latest().serverClose(1006);
    const alert = () => screen.getByRole('alert');
    expect(alert()).toHaveTextContent('WebSocket connection error Trying again in 1 s.');
    expect(pill()).toHaveTextContent('Connection problem');
    timers.advance(1_000);
    expect(sockets).toHaveLength(2);
    expect(alert()).toHaveTextContent('WebSocket connection error Reconnecting...');
    // This attempt closes without an error event: still the same outage, still the error banner.
    sockets[1]?.serverClose(1006);
    expect(alert()).toHaveTextContent('WebSocket connection error Trying again in 2 s.');
    expect(screen.queryByText(/You are disconnected/)).not.toBeInTheDocument();
    await userEvent.click(within(alert()).getByRole('button', { name: 'Retry' }));
    expect(sockets).toHaveLength(3);
    sockets[2]?.open();
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows Connection error when the socket cannot be created', () => {
    const timers = fakeTimers();
    let attempts = 0;
    class Broken {
      constructor() {
        attempts++;
        throw new Error('blocked');
      }
    }
    render(
      memoryRouter(
        [
          {
            path: '/',
            element: (
              <ChatPage
                channel="chat"
                title="Chat"
                subtitle="Talk"
                WebSocketImpl={Broken as unknown as ChatViewProps['WebSocketImpl']}
                timers={timers}
              />
            ),
          },
        ],
        { initialEntries: ['/'] },
      ).element,
    );
    expect(screen.getByRole('alert')).toHaveTextContent('Connection error Trying again in 1 s.');
    timers.advance(1_000);
    expect(attempts).toBe(2);
    expect(screen.getByRole('alert')).toHaveTextContent('Connection error Trying again in 2 s.');
  });

  it('loads older messages from the API and keeps the newer ones', async () => {
    const network = mockFetch({
      'GET /api/chat/messages/': reply(200, {
        results: [message({ message_id: 5, raw_text: 'Older one' }), message({ message_id: 6, raw_text: 'Older two' })],
        has_more: false,
      }),
    });
    const { connect, log } = setup();
    connect([message({ message_id: 7, raw_text: 'Newest' })], true);
    await userEvent.click(screen.getByRole('button', { name: 'Load earlier messages' }));
    await waitFor(() => expect(log().getAllByRole('article')).toHaveLength(3));
    expect(
      log()
        .getAllByRole('article')
        .map((a) => a.querySelector('.chat-bubble')?.textContent),
    ).toEqual(['Older one', 'Older two', 'Newest']);
    expect(Object.fromEntries(new URLSearchParams(network.calls('GET /api/chat/messages/')[0]?.search))).toEqual({
      before: '7',
      limit: '50',
      channel: 'chat',
    });
    expect(screen.queryByRole('button', { name: 'Load earlier messages' })).not.toBeInTheDocument();
  });

  it('follows a link to an older message, loading earlier pages until it is there', async () => {
    const scrolled: string[] = [];
    // jsdom has no scrolling; record what would be brought into view.
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.id);
    };
    onTestFinished(() => {
      delete (Element.prototype as Partial<Element>).scrollIntoView;
    });
    const network = mockFetch({
      'GET /api/chat/messages/': (request) => {
        const before = Number(new URLSearchParams(request.search).get('before'));
        const results = [before - 2, before - 1].map((id) => message({ message_id: id, raw_text: `Message ${id}` }));
        return reply(200, { results, has_more: true });
      },
    });
    const { connect, log, router } = setup({ path: '/onboarding?message=4' });
    connect([message({ message_id: 10, raw_text: 'Newest' })], true);
    await waitFor(() => expect(scrolled).toEqual(['message-4']));
    // Shown once: the address drops it (a reload does not jump back), the highlight stays.
    await waitFor(() => expect(router.state.location.search).toBe(''));
    expect(router.state.location.pathname).toBe('/onboarding');
    expect(network.calls('GET /api/chat/messages/').map((r) => new URLSearchParams(r.search).get('before'))).toEqual([
      '10',
      '8',
      '6',
    ]);
    expect(log().getByText('Message 4').closest('.chat-row')).toHaveClass('is-highlighted');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('stops looking when earlier pages bring nothing older', async () => {
    const network = mockFetch({ 'GET /api/chat/messages/': reply(200, { results: [], has_more: true }) });
    const { connect } = setup({ path: '/chat?message=3' });
    connect([message({ message_id: 10, raw_text: 'Newest' })], true);
    expect(
      await screen.findByText('The message you followed a link to is not in this conversation.'),
    ).toBeInTheDocument();
    expect(network.calls('GET /api/chat/messages/')).toHaveLength(1);
  });

  it('says so when the linked message is not in this conversation', async () => {
    mockFetch({ 'GET /api/chat/messages/': reply(200, { results: [], has_more: false }) });
    const { connect, router } = setup({ path: '/chat?message=999' });
    connect([message({ message_id: 10, raw_text: 'Newest' })]);
    expect(
      await screen.findByText('The message you followed a link to is not in this conversation.'),
    ).toBeInTheDocument();
    await waitFor(() => expect(router.state.location.search).toBe(''));
  });

  it('resends a message the server never got once a new connection is up, and matches its echo', async () => {
    const { connect, textbox, sockets, timers, log } = setup();
    const socket = connect([message({ message_id: 1, raw_text: 'Earlier' })]);
    await userEvent.type(textbox(), 'Are you there?{Enter}');
    const [original] = socket.sent as Array<{ client_id: string }>;
    socket.serverClose(1006);
    timers.advance(1_000);
    const next = sockets[1];
    next?.open();
    expect(next?.sent).toEqual([]);
    next?.receive(history([message({ message_id: 1, raw_text: 'Earlier' })]));
    expect(log().getByRole('article', { name: 'You said' })).toHaveTextContent('sending...');
    expect(log().getAllByRole('article')).toHaveLength(2);
    expect(next?.sent).toEqual([
      { author_type: 'human', message_type: 'message', raw_text: 'Are you there?', client_id: original?.client_id },
    ]);
    expect(typing()).toBeInTheDocument();
    next?.receive(
      message({
        message_id: 2,
        author_type: 'human',
        message_type: 'message',
        raw_text: 'Are you there?',
        timestamp: at(10, 5),
      }),
    );
    expect(log().getByRole('article', { name: 'You said' })).toHaveTextContent('10:05 AM');
    expect(log().getAllByRole('article')).toHaveLength(2);
  });

  it('does not resend a message the new history already holds', async () => {
    const { connect, textbox, sockets, timers, log } = setup();
    const socket = connect();
    await userEvent.type(textbox(), 'Stored just before the drop{Enter}');
    socket.serverClose(1006);
    timers.advance(1_000);
    sockets[1]?.open();
    sockets[1]?.receive(
      history([
        message({
          message_id: 7,
          author_type: 'human',
          message_type: 'message',
          raw_text: 'Stored just before the drop',
        }),
      ]),
    );
    expect(sockets[1]?.sent).toEqual([]);
    expect(log().getByRole('article', { name: 'You said' })).toHaveTextContent('9:30 AM');
  });

  it('drops a reply that was streaming when the connection dropped, once the new history arrives', () => {
    const { connect, sockets, timers, log } = setup();
    const socket = connect([message({ message_id: 1, author_type: 'human', message_type: 'message', raw_text: 'Q' })]);
    socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: 's1', raw_text: 'Half an ans' });
    socket.serverClose(1006);
    timers.advance(1_000);
    sockets[1]?.open();
    sockets[1]?.receive(
      history([
        message({ message_id: 1, author_type: 'human', message_type: 'message', raw_text: 'Q' }),
        message({ message_id: 2, raw_text: 'Half an answer, stored in full.' }),
      ]),
    );
    const replies = log().getAllByRole('article', { name: 'Assistant said' });
    expect(replies.map((r) => r.querySelector('.chat-bubble')?.textContent)).toEqual([
      'Half an answer, stored in full.',
    ]);
    expect(log().getByText('Half an answer, stored in full.').closest('.chat-bubble')).not.toHaveClass('is-streaming');
  });

  it('opens a collapsed answer when focus moves into it, and Collapse still works', async () => {
    const { connect, log } = setup();
    const long = [...Array.from({ length: 14 }, (_, i) => `Line ${i + 1}`), 'See [the source](https://example.com/s).'];
    connect([message({ raw_text: long.join('\n') })]);
    const answer = log().getByRole('article', { name: 'Assistant said' });
    const body = answer.querySelector('.chat-collapsible-body') as HTMLElement;
    expect(body).toHaveClass('is-collapsed');
    // Focus reaches the hidden link (Tab): the answer opens instead of scrolling inside its clipped box.
    body.scrollTop = 40;
    act(() => within(answer).getByRole('link', { name: 'the source' }).focus());
    expect(body).not.toHaveClass('is-collapsed');
    expect(body.scrollTop).toBe(0);
    const collapse = within(answer).getByRole('button', { name: 'Collapse' });
    expect(collapse).toHaveAttribute('aria-expanded', 'true');
    await userEvent.click(collapse);
    expect(body).toHaveClass('is-collapsed');
    expect(within(answer).getByRole('button', { name: 'Read more...' })).toHaveFocus();
    // A collapsed box that gets scrolled anyway goes straight back to the top.
    body.scrollTop = 25;
    act(() => {
      body.dispatchEvent(new Event('scroll'));
    });
    expect(body.scrollTop).toBe(0);
  });

  it('focuses the message box once connected when nothing else has focus (mouse devices)', async () => {
    pointer('fine');
    const { connect, textbox, sockets, timers } = setup();
    expect(textbox()).not.toHaveFocus();
    const socket = connect();
    expect(textbox()).toHaveFocus();
    // Only the first time: a reconnect does not pull focus back.
    act(() => textbox().blur());
    socket.serverClose(1006);
    timers.advance(1_000);
    sockets[1]?.open();
    expect(textbox()).not.toHaveFocus();
  });

  it('does not focus the message box on phones, or when the user is already somewhere', () => {
    pointer('coarse');
    const phone = setup();
    phone.connect();
    expect(phone.textbox()).not.toHaveFocus();
    expect(document.activeElement).toBe(document.body);
  });

  it('leaves focus where the user put it before the chat connected', async () => {
    pointer('fine');
    const { connect, textbox } = setup();
    const older = screen.getByRole('link', { name: 'Skip to message box' });
    act(() => older.focus());
    connect();
    expect(older).toHaveFocus();
    expect(textbox()).not.toHaveFocus();
  });

  it('has a "Skip to message box" link first, which focuses the message box', async () => {
    const { connect, textbox } = setup();
    connect([message({ raw_text: 'Hello' })]);
    await userEvent.tab();
    const skip = screen.getByRole('link', { name: 'Skip to message box' });
    expect(skip).toHaveFocus();
    expect(skip).toHaveClass('skip-link');
    await userEvent.click(skip);
    expect(textbox()).toHaveFocus();
  });

  it('keeps the newest message in view while the notification stack takes room from the list', () => {
    const { connect, timers } = setup();
    const socket = connect([message({ raw_text: 'Noted, Lisbon it is.' })]);
    const list = screen.getByRole('log', { name: 'Messages' });
    fakeScrollHeight(list, 1_200);
    list.scrollTop = 1_200;
    // The stack appears under the list, which gets shorter: it scrolls on to the end again.
    list.scrollTop = 1_150;
    socket.receive({
      author_type: 'system',
      message_type: 'task_notification_final',
      raw_text: 'Remembered: lives in Lisbon',
      message_id: null,
      timestamp: at(9, 0),
    });
    expect(screen.getByRole('list', { name: 'Assistant activity' })).toBeInTheDocument();
    expect(list.scrollTop).toBe(1_200);
    fakeScrollHeight(list, 1_250);
    timers.advance(NOTIFICATION_HOLD_MS + NOTIFICATION_FADE_MS);
    expect(screen.queryByRole('list', { name: 'Assistant activity' })).not.toBeInTheDocument();
    expect(list.scrollTop).toBe(1_250);
  });

  it('keeps the newest message in view when the list gets shorter (a phone keyboard), without laying the page out as it opens', () => {
    let observed: (() => void) | undefined;
    vi.stubGlobal(
      'ResizeObserver',
      class {
        constructor(callback: () => void) {
          observed = callback;
        }
        observe() {}
        disconnect() {}
      },
    );
    let height = 600;
    const reads = vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(() => height);
    const { connect } = setup();
    // Nothing is read before the observer reports a layout.
    expect(reads).not.toHaveBeenCalled();
    connect([message({ raw_text: 'Noted, Lisbon it is.' })]);
    const list = screen.getByRole('log', { name: 'Messages' });
    fakeScrollHeight(list, 1_200);
    act(() => observed?.());
    list.scrollTop = 600;
    // The first report is the size it opened with; a later, smaller one scrolls on to the end.
    height = 300;
    act(() => observed?.());
    expect(list.scrollTop).toBe(1_200);
    reads.mockRestore();
  });

  it('greets an empty chat and points to the Memories page', async () => {
    const { connect, router } = setup();
    connect();
    expect(screen.getByText('Your chat with Daybook')).toBeInTheDocument();
    expect(screen.queryByText('No messages yet.')).not.toBeInTheDocument();
    expect(
      screen.getByText(/Ask anything, or tell me about your day\. I'll remember what matters; you can review it/),
    ).toBeInTheDocument();
    await userEvent.click(screen.getByRole('link', { name: 'Memories page' }));
    expect(router.state.location.pathname).toBe('/memories');
  });

  it('ends onboarding with a notice, then goes to the chat after 2.5 s', async () => {
    pointer('fine');
    const { connect, router, timers, log, textbox } = setup({ path: '/onboarding' });
    const socket = connect([message({ raw_text: 'Where do you live?' })]);
    expect(socket.url).toMatch(/\/ws\/onboarding\/$/);
    expect(textbox()).toHaveFocus();
    socket.receive(message({ raw_text: 'Thank you! You are all set.' }));
    socket.receive({
      author_type: 'system',
      message_type: 'redirect',
      raw_text: 'Onboarding complete',
      message_id: null,
      timestamp: at(9, 31),
      url: '/chat',
    });
    expect(screen.getByText("You're all set! Taking you to your chat...")).toHaveAttribute('role', 'status');
    // The closing message stays readable; the message box made way for the notice.
    expect(log().getByText('Thank you! You are all set.')).toBeInTheDocument();
    expect(screen.queryByRole('textbox', { name: 'Message' })).not.toBeInTheDocument();
    const goNow = screen.getByRole('button', { name: 'Go to chat now' });
    expect(goNow).toHaveAccessibleDescription("You're all set! Taking you to your chat...");
    // Focus was in the message box, which is gone: it moves to the button.
    expect(goNow).toHaveFocus();
    timers.advance(ONBOARDING_REDIRECT_MS - 1);
    expect(router.state.location.pathname).toBe('/onboarding');
    timers.advance(1);
    await waitFor(() => expect(router.state.location.pathname).toBe('/chat'));
    expect(screen.getByRole('heading', { level: 1, name: 'Chat' })).toBeInTheDocument();
  });

  it('lets a user who finished onboarding reread it, and points them to the chat for anything new', async () => {
    const { connect, log, router } = setup({ path: '/onboarding', props: { finished: true } });
    connect([message({ message_id: 1, raw_text: 'What should I call you?' })]);
    expect(log().getByRole('article', { name: 'Assistant said' })).toHaveTextContent('What should I call you?');
    expect(screen.queryByRole('textbox', { name: 'Message' })).not.toBeInTheDocument();
    expect(screen.getByText(/You've finished onboarding\./)).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Skip to message box' })).not.toBeInTheDocument();
    const toChat = screen.getByRole('link', { name: 'Go to chat' });
    expect(toChat).toHaveFocus();
    await userEvent.click(toChat);
    expect(router.state.location.pathname).toBe('/chat');
  });

  it('carries a message refused because onboarding finished elsewhere to the chat box', async () => {
    const { connect, textbox, log } = setup({ path: '/onboarding' });
    const socket = connect([message({ message_id: 1, raw_text: 'What should I call you?' })]);
    await userEvent.type(textbox(), 'Also, I love jazz{Enter}');
    socket.receive({
      message_type: 'error',
      author_type: 'system',
      code: 'onboarding_finished',
      raw_text: "You've finished onboarding. Tell Daybook more any time in your chat.",
    });
    expect(log().queryByRole('article', { name: 'You said' })).not.toBeInTheDocument();
    expect(
      screen.getByText("Onboarding is finished, so your message is waiting in the chat's message box."),
    ).toBeInTheDocument();
    expect(screen.queryByRole('textbox', { name: 'Message' })).not.toBeInTheDocument();
    expect(window.sessionStorage.getItem('daybook.draft.chat')).toBe('Also, I love jazz');
    expect(typing()).not.toBeInTheDocument();
  });

  it('goes to the chat at once from "Go to chat now", and only once', async () => {
    const { connect, router, timers } = setup({ path: '/onboarding' });
    connect().receive({
      author_type: 'system',
      message_type: 'redirect',
      raw_text: 'Onboarding complete',
      message_id: null,
      timestamp: at(9, 31),
      url: '/chat',
    });
    await userEvent.click(screen.getByRole('button', { name: 'Go to chat now' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/chat'));
    const arrival = router.state.location.key;
    timers.advance(ONBOARDING_REDIRECT_MS);
    // The pending timer went with the onboarding screen: no second navigation.
    expect(router.state.location.key).toBe(arrival);
  });

  it('shows Something went wrong with Try again when the chat crashes', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const timers = fakeTimers();
    const { WebSocketImpl } = fakeWebSocketClass();
    let broken = true;
    const flaky = {
      ...timers,
      now: () => {
        if (broken) throw new Error('clock broke');
        return timers.now();
      },
    };
    render(
      memoryRouter(
        [
          {
            path: '/',
            element: (
              <ChatPage channel="chat" title="Chat" subtitle="Talk" WebSocketImpl={WebSocketImpl} timers={flaky} />
            ),
          },
        ],
        { initialEntries: ['/'] },
      ).element,
    );
    expect(await screen.findByRole('heading', { name: 'Something went wrong' })).toBeInTheDocument();
    broken = false;
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(screen.getByRole('textbox', { name: 'Message' })).toBeInTheDocument();
  });
});

describe('answers one at a time', () => {
  it('marks a message that waits for earlier answers, until its answer starts', () => {
    const { connect, log } = setup();
    const socket = connect([
      message({ author_type: 'human', message_type: 'message', raw_text: 'First', message_id: 1 }),
    ]);
    socket.receive(message({ author_type: 'human', message_type: 'message', raw_text: 'Second', message_id: 2 }));
    socket.receive({ message_type: 'queued', author_type: 'system', message_id: 2, ahead: 1, raw_text: 'Waiting' });
    const second = log().getAllByRole('article', { name: 'You said' })[1] as HTMLElement;
    expect(second).toHaveTextContent('waiting for the answers before it...');
    // The answer to the first message does not end the wait of the second; its own answer does.
    socket.receive(message({ raw_text: 'One', message_id: 3, reply_to: 1 }));
    expect(second).toHaveTextContent('waiting for the answers before it...');
    expect(typing()).toBeInTheDocument();
    socket.receive({ message_type: 'stream', author_type: 'assistant', stream_id: 's2', raw_text: 'Tw', reply_to: 2 });
    expect(second).not.toHaveTextContent('waiting');
  });

  it('offers Retry on an interrupted answer, which asks the server to answer the question again, once', async () => {
    const { connect, log } = setup();
    const socket = connect([
      message({ author_type: 'human', message_type: 'message', raw_text: 'What is on today?', message_id: 10 }),
      message({
        author_type: 'system',
        message_type: 'system_message',
        raw_text: ANSWER_INTERRUPTED,
        message_id: 11,
        reply_to: 10,
      }),
    ]);
    const retry = log().getByRole('button', { name: 'Retry' });
    expect(retry).toHaveClass('btn');
    await userEvent.click(retry);
    expect(socket.sent).toEqual([{ message_type: 'regenerate', reply_to: 10 }]);
    expect(retry).toHaveAttribute('aria-disabled', 'true');
    expect(typing()).toBeInTheDocument();
    await userEvent.click(retry);
    expect(socket.sent).toHaveLength(1);
    // A plain system note has nothing to ask again.
    socket.receive(message({ author_type: 'system', message_type: 'system_message', raw_text: 'FYI', message_id: 12 }));
    expect(log().getAllByRole('button', { name: /Retry/ })).toHaveLength(1);
  });

  it('takes Retry away once the question is answered (another tab retried), also after a reload', async () => {
    const question = message({ author_type: 'human', message_type: 'message', raw_text: 'Weather?', message_id: 20 });
    const note = message({
      author_type: 'system',
      message_type: 'system_message',
      raw_text: ASSISTANT_UNAVAILABLE,
      message_id: 21,
      reply_to: 20,
    });
    const answer = message({ raw_text: 'Sunny.', message_id: 22, reply_to: 20 });
    const { connect, log } = setup();
    const socket = connect([question, note]);
    expect(log().getByRole('button', { name: 'Retry' })).toBeInTheDocument();
    // Answered through another tab's Retry: this note has nothing left to retry.
    socket.receive(answer);
    expect(log().queryByRole('button', { name: 'Retry' })).not.toBeInTheDocument();
    // As the history loads after a reload.
    socket.receive(history([question, note, answer]));
    expect(log().queryByRole('button', { name: 'Retry' })).not.toBeInTheDocument();
    // A note that is the latest reply of a question answered before it (a failed Regenerate) keeps it.
    const again = { ...note, message_id: 23 };
    socket.receive(history([question, answer, again]));
    expect(log().getByRole('button', { name: 'Retry' })).toBeInTheDocument();
  });
});

describe('the chat routes', () => {
  it('goes to sign in when the server ends the socket with the session (1008), without retrying', async () => {
    mockFetch({
      [`GET ${ALLAUTH}/auth/session`]: (_request, calls) => (calls === 0 ? SESSION_SIGNED_IN : SESSION_ANONYMOUS),
    });
    const { WebSocketImpl, sockets } = fakeWebSocketClass();
    vi.stubGlobal('WebSocket', WebSocketImpl);
    const { router } = renderRoutes(routes, { path: '/chat', loadSession: fetchSession });
    expect(await screen.findByRole('heading', { level: 1, name: 'Chat' }, { timeout: 10_000 })).toBeInTheDocument();
    await waitFor(() => expect(sockets[0]).toBeDefined());
    act(() => {
      sockets[0]?.open();
      sockets[0]?.receive(history([]));
    });
    // Signed out in another tab: the server closes this socket.
    sockets[0]?.serverClose(1008);
    await waitFor(() => expect(router.state.location.pathname).toBe('/auth/login'));
    expect(router.state.location.search).toBe('?next=%2Fchat');
    expect(sockets).toHaveLength(1);
  });

  it('/chat and /onboarding use their own sockets and titles', async () => {
    mockFetch({ 'GET /api/users/me/': reply(200, USER_ME) });
    const { WebSocketImpl, sockets } = fakeWebSocketClass();
    vi.stubGlobal('WebSocket', WebSocketImpl);
    const chat = renderRoutes(routes, { path: '/chat', auth: signedIn });
    // The chat screens load on demand: on a busy machine the first import takes a while.
    expect(await screen.findByRole('heading', { level: 1, name: 'Chat' }, { timeout: 10_000 })).toBeInTheDocument();
    // The socket opens once the screen has mounted.
    await waitFor(() => expect(sockets[0]?.url).toMatch(/^ws:\/\/[^/]+\/ws\/chat\/$/));
    chat.unmount();
    expect(sockets[0]?.closedWith).toBe(1000);

    renderRoutes(routes, { path: '/onboarding', auth: signedIn });
    expect(
      await screen.findByRole('heading', { level: 1, name: 'Getting to know you' }, { timeout: 10_000 }),
    ).toBeInTheDocument();
    await waitFor(() => expect(sockets[1]?.url).toMatch(/\/ws\/onboarding\/$/));
    act(() => {
      sockets[1]?.open();
      sockets[1]?.receive(history([]));
    });
    await waitFor(() => expect(screen.getByRole('textbox', { name: 'Message' })).toBeEnabled());
  });
});

describe('/chat?dmid=<id>: a daily message to ask about', () => {
  const DAILY = 'GET /api/daily-messages/7/';

  /** Records what would be brought into view (jsdom has no scrolling). */
  function recordScrolls() {
    const scrolled: string[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.id);
    };
    onTestFinished(() => {
      delete (Element.prototype as Partial<Element>).scrollIntoView;
    });
    return scrolled;
  }

  const chatHistory = () => [
    message({ message_id: 49, raw_text: 'Yesterday' }),
    message({ message_id: 50, raw_text: 'Good morning, Sam.' }),
    message({ message_id: 51, author_type: 'human', message_type: 'message', raw_text: 'Thanks!' }),
  ];

  it('brings the message that carries it into view and highlights it, once the lookup answers', async () => {
    const scrolled = recordScrolls();
    const answer = deferred<Reply>();
    const network = mockFetch({ [DAILY]: () => answer.promise });
    const { connect, log } = setup({ path: '/chat?dmid=7' });
    connect(chatHistory());
    // While it loads: nothing extra.
    expect(document.querySelector('.chat-banners')?.children).toHaveLength(0);
    expect(log().getByText('Good morning, Sam.').closest('.chat-row')).not.toHaveClass('is-highlighted');
    answer.resolve(reply(200, dailyMessage()));
    await waitFor(() => expect(scrolled).toEqual(['message-50']));
    expect(log().getByText('Good morning, Sam.').closest('.chat-row')).toHaveClass('is-highlighted');
    expect(log().getByText('Yesterday').closest('.chat-row')).not.toHaveClass('is-highlighted');
    expect(document.querySelector('.chat-banners')?.children).toHaveLength(0);
    expect(network.calls(DAILY)).toHaveLength(1);
  });

  it('loads earlier pages until the daily message is there, as a ?message= link does', async () => {
    const scrolled = recordScrolls();
    const network = mockFetch({
      [DAILY]: reply(200, dailyMessage({ chat_message_id: 6 })),
      'GET /api/chat/messages/': (request) => {
        const before = Number(new URLSearchParams(request.search).get('before'));
        const results = [before - 2, before - 1].map((id) => message({ message_id: id, raw_text: `Message ${id}` }));
        return reply(200, { results, has_more: true });
      },
    });
    const { connect, log } = setup({ path: '/chat?dmid=7' });
    connect([message({ message_id: 10, raw_text: 'Newest' })], true);
    await waitFor(() => expect(scrolled).toEqual(['message-6']));
    expect(network.calls('GET /api/chat/messages/')).toHaveLength(2);
    expect(log().getByText('Message 6').closest('.chat-row')).toHaveClass('is-highlighted');
  });

  it('a second daily message asked about on the same screen is brought into view too', async () => {
    const scrolled = recordScrolls();
    mockFetch({
      [DAILY]: reply(200, dailyMessage()),
      'GET /api/daily-messages/8/': reply(200, dailyMessage({ id: 8, chat_message_id: 49 })),
    });
    const { connect, router, log, latest } = setup({ path: '/chat?dmid=7' });
    connect(chatHistory());
    await waitFor(() => expect(scrolled).toEqual(['message-50']));
    await act(() => router.navigate('/chat?dmid=8'));
    // The socket follows the new dmid; its history comes again.
    act(() => {
      latest().open();
      latest().receive(history(chatHistory()));
    });
    await waitFor(() => expect(scrolled).toEqual(['message-50', 'message-49']));
    expect(log().getByText('Yesterday').closest('.chat-row')).toHaveClass('is-highlighted');
    expect(log().getByText('Good morning, Sam.').closest('.chat-row')).not.toHaveClass('is-highlighted');
  });

  it('a message not posted to the chat yet highlights nothing and says nothing', async () => {
    const scrolled = recordScrolls();
    const network = mockFetch({ [DAILY]: reply(200, dailyMessage({ chat_message_id: null, delivered: null })) });
    const { connect, log } = setup({ path: '/chat?dmid=7' });
    connect(chatHistory());
    await waitFor(() => expect(network.calls(DAILY)).toHaveLength(1));
    // Let the answer land, then look.
    await act(async () => {});
    expect(scrolled).toEqual([]);
    expect(
      log()
        .queryAllByRole('article')
        .filter((a) => a.closest('.is-highlighted')),
    ).toEqual([]);
    expect(document.querySelector('.chat-banners')?.children).toHaveLength(0);
  });

  it('says Daily message not found for an unknown id, in a note that can be dismissed; the chat still works', async () => {
    mockFetch({ [DAILY]: reply(404, { error: 'Not found', code: 'not_found' }) });
    const { connect, textbox, log } = setup({ path: '/chat?dmid=7' });
    const socket = connect(chatHistory());
    const note = await screen.findByText(DAILY_MESSAGES.notFound);
    expect(note.closest('.banner')).toHaveAttribute('role', 'status');
    expect(log().getByText('Good morning, Sam.').closest('.chat-row')).not.toHaveClass('is-highlighted');
    await userEvent.type(textbox(), 'What about today?{Enter}');
    expect(socket.sent).toMatchObject([{ raw_text: 'What about today?' }]);
    await userEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByText(DAILY_MESSAGES.notFound)).not.toBeInTheDocument();
  });

  it.each(['abc', '0', '-2', '7.5'])('an id like %s is not found without asking', async (dmid) => {
    const network = mockFetch({});
    const { connect } = setup({ path: `/chat?dmid=${encodeURIComponent(dmid)}` });
    connect(chatHistory());
    expect(await screen.findByText(DAILY_MESSAGES.notFound)).toBeInTheDocument();
    expect(network.requests.filter((r) => r.path.startsWith('/api/daily-messages/'))).toEqual([]);
  });

  it('says the daily message could not be loaded when the lookup fails otherwise', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    mockFetch({ [DAILY]: reply(500, { error: 'Boom', code: 'internal' }) });
    const { connect, textbox } = setup({ path: '/chat?dmid=7' });
    connect(chatHistory());
    expect(await screen.findByRole('alert')).toHaveTextContent(DAILY_MESSAGES.loadFailed);
    expect(textbox()).toBeEnabled();
  });

  it('the onboarding chat ignores dmid', async () => {
    const network = mockFetch({ [DAILY]: reply(404, { error: 'Not found', code: 'not_found' }) });
    const { connect, latest } = setup({ path: '/onboarding?dmid=7' });
    connect();
    expect(latest().url).toMatch(/\/ws\/onboarding\/$/);
    await act(async () => {});
    expect(network.calls(DAILY)).toHaveLength(0);
    expect(screen.queryByText(DAILY_MESSAGES.notFound)).not.toBeInTheDocument();
  });
});
