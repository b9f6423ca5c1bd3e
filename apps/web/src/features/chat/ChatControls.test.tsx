// The chat's controls: Stop while an answer is written, Copy (answers and code blocks), Regenerate on
// the latest answer, and an answer joined mid-way (from the history's `streams`).
import type { TChatMessage } from '@daybook/contracts';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { COPY_FAILED } from '../../components/CopyButton.tsx';
import { renderChatPage } from '../../test/chat.tsx';

let nextId = 500;
function message(fields: Partial<TChatMessage> = {}): TChatMessage {
  return {
    author_type: 'assistant',
    message_type: 'markdown',
    raw_text: 'Hello there',
    message_id: nextId++,
    timestamp: new Date(2025, 5, 2, 9, 30).toISOString(),
    ...fields,
  };
}
const human = (id: number, text: string) =>
  message({ author_type: 'human', message_type: 'message', raw_text: text, message_id: id });
const piece = (streamId: string, text: string, replyTo?: number) => ({
  message_type: 'stream',
  author_type: 'assistant',
  stream_id: streamId,
  raw_text: text,
  ...(replyTo === undefined ? {} : { reply_to: replyTo }),
});

function setup() {
  const chat = renderChatPage();
  const connect = (messages: TChatMessage[] = [], streams?: unknown[], answering?: number[]) =>
    chat.connect(messages, { ...(streams ? { streams } : {}), ...(answering ? { answering } : {}) });
  return { ...chat, connect };
}

const stopButton = () => screen.queryByRole('button', { name: 'Stop' });
const textbox = () => screen.getByRole('textbox', { name: 'Message' });

describe('Stop', () => {
  it('shows beside Send while an answer is written, stops that answer, and leaves a stopped answer', async () => {
    const { connect, log } = setup();
    const socket = connect([human(1, 'Tell me a story')]);
    expect(stopButton()).toBeNull();
    socket.receive(piece('s1', 'Once upon a ', 1));
    const stop = stopButton() as HTMLElement;
    expect(stop).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Send' })).toBeInTheDocument();
    stop.focus();
    await userEvent.keyboard('{Enter}');
    expect(socket.sent).toEqual([{ message_type: 'stop', reply_to: 1 }]);
    // Sent once: a second press waits for the answer to end.
    expect(stop).toHaveAttribute('aria-disabled', 'true');
    await userEvent.click(stop);
    expect(socket.sent).toHaveLength(1);

    socket.receive(message({ raw_text: 'Once upon a', stream_id: 's1', reply_to: 1, stopped: true }));
    const answer = log().getByRole('article', { name: 'Assistant said' });
    expect(answer).toHaveTextContent('Once upon a');
    expect(answer).toHaveTextContent('Stopped');
    expect(stopButton()).toBeNull();
    // Focus that was on Stop goes to the message box, not to the page.
    expect(textbox()).toHaveFocus();
  });

  it('stops with Escape in the message box, before the first word too', async () => {
    const { connect } = setup();
    const socket = connect();
    await userEvent.type(textbox(), 'Think about it{Enter}');
    socket.receive(human(7, 'Think about it'));
    expect(stopButton()).toBeInTheDocument();
    await userEvent.type(textbox(), '{Escape}');
    expect(socket.sent.at(-1)).toEqual({ message_type: 'stop' });
  });

  it('shows an answer stopped before its first word as such', () => {
    const { connect, log } = setup();
    connect([human(1, 'Hi'), message({ raw_text: '', reply_to: 1, stopped: true })]);
    expect(log().getByRole('article', { name: 'Assistant said' })).toHaveTextContent(
      'You stopped this answer before it began.',
    );
  });
});

describe('Regenerate', () => {
  it('is offered on the latest answer only, and asks for another answer to its question', async () => {
    const { connect, log } = setup();
    const socket = connect([
      human(1, 'First'),
      message({ raw_text: 'One', reply_to: 1 }),
      human(3, 'Second'),
      message({ raw_text: 'Two', reply_to: 3 }),
    ]);
    const answers = log().getAllByRole('article', { name: 'Assistant said' });
    expect(within(answers[0] as HTMLElement).queryByRole('button', { name: 'Regenerate' })).toBeNull();
    await userEvent.click(within(answers[1] as HTMLElement).getByRole('button', { name: 'Regenerate' }));
    expect(socket.sent).toEqual([{ message_type: 'regenerate', reply_to: 3 }]);
    // While the new answer is written, it is not offered (Stop is).
    socket.receive(piece('s2', 'Anoth', 3));
    expect(log().queryByRole('button', { name: 'Regenerate' })).toBeNull();
    expect(stopButton()).toBeInTheDocument();
    // Focus went with the click to the message box (Escape stops from there), not to the page.
    expect(screen.getByRole('textbox', { name: 'Message' })).toHaveFocus();
    socket.receive(message({ raw_text: 'Another two', stream_id: 's2', reply_to: 3 }));
    const now = log().getAllByRole('article', { name: 'Assistant said' });
    expect(now).toHaveLength(3);
    expect(within(now[2] as HTMLElement).getByRole('button', { name: 'Regenerate' })).toBeInTheDocument();
    expect(within(now[1] as HTMLElement).queryByRole('button', { name: 'Regenerate' })).toBeNull();
  });
});

describe('answers to the same question', () => {
  it('are numbered once there are several, so a regenerated answer reads as one of them', () => {
    const { connect, log } = setup();
    connect([
      human(1, 'Name a colour'),
      message({ raw_text: 'Blue.', reply_to: 1 }),
      message({ raw_text: 'Teal.', reply_to: 1 }),
      human(4, 'Thanks'),
      message({ raw_text: 'Any time.', reply_to: 4 }),
    ]);
    const answers = log().getAllByRole('article', { name: 'Assistant said' });
    expect(answers[0]).toHaveTextContent('Answer 1 of 2');
    expect(answers[1]).toHaveTextContent('Answer 2 of 2');
    expect(answers[2]).not.toHaveTextContent(/Answer \d of/);
  });
});

describe('Copy', () => {
  it('copies an answer as markdown and a code block as its code, and says Copied', async () => {
    const writeText = vi.fn(async (_text: string) => {});
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const { connect, log } = setup();
    const text = 'Run this:\n\n```sh\nnpm start\n```\n\n**Done.**';
    connect([human(1, 'How?'), message({ raw_text: text, reply_to: 1 })]);
    const answer = log().getByRole('article', { name: 'Assistant said' });
    await userEvent.click(within(answer).getByRole('button', { name: 'Copy' }));
    expect(writeText).toHaveBeenLastCalledWith(text);
    expect(within(answer).getByRole('button', { name: 'Copied' })).toBeInTheDocument();
    expect(
      within(answer)
        .getAllByRole('status')
        .map((s) => s.textContent),
    ).toContain('Copied');

    await userEvent.click(within(answer).getByRole('button', { name: 'Copy code' }));
    expect(writeText).toHaveBeenLastCalledWith('npm start');
    vi.unstubAllGlobals();
  });

  it('falls back without navigator.clipboard, and says so when copying is impossible', async () => {
    vi.stubGlobal('navigator', { ...navigator, clipboard: undefined });
    const execCommand = vi.fn(() => true);
    Object.defineProperty(document, 'execCommand', { configurable: true, value: execCommand });
    const { connect, log } = setup();
    connect([human(1, 'Hi'), message({ raw_text: 'Plain answer', reply_to: 1 })]);
    const answer = log().getByRole('article', { name: 'Assistant said' });
    await userEvent.click(within(answer).getByRole('button', { name: 'Copy' }));
    expect(execCommand).toHaveBeenCalledWith('copy');
    expect(within(answer).getByRole('button', { name: 'Copied' })).toBeInTheDocument();

    execCommand.mockImplementation(() => {
      throw new Error('not allowed');
    });
    // A refused clipboard too: the page carries on and tells what to do.
    vi.stubGlobal('navigator', {
      ...navigator,
      clipboard: { writeText: () => Promise.reject(new DOMException('denied', 'NotAllowedError')) },
    });
    await userEvent.click(within(answer).getByRole('button', { name: 'Copied' }));
    expect(within(answer).getByRole('status')).toHaveTextContent(COPY_FAILED);
    vi.unstubAllGlobals();
    Reflect.deleteProperty(document, 'execCommand');
  });
});

describe('an answer joined while it is written', () => {
  it('shows the text so far from the history, then goes on with the next pieces', () => {
    const { connect, log } = setup();
    const socket = connect([human(1, 'Tell me a story')], [{ stream_id: 's1', raw_text: 'Once upon a ', reply_to: 1 }]);
    const live = log().getByRole('article', { name: 'Assistant said' });
    expect(live).toHaveTextContent('Once upon a');
    expect(live.querySelector('.chat-bubble')).toHaveClass('is-streaming');
    expect(stopButton()).toBeInTheDocument();
    socket.receive(piece('s1', 'time', 1));
    expect(live).toHaveTextContent('Once upon a time');
    socket.receive(message({ raw_text: 'Once upon a time.', stream_id: 's1', reply_to: 1 }));
    expect(log().getAllByRole('article', { name: 'Assistant said' })).toHaveLength(1);
    expect(log().getByRole('article', { name: 'Assistant said' })).toHaveTextContent('Once upon a time.');
  });

  it('shows Daybook replying to a question asked elsewhere before its answer began, and the ones waiting', () => {
    const { connect, log } = setup();
    const socket = connect([human(1, 'Think hard'), human(2, 'And then?')], undefined, [1, 2]);
    expect(screen.getByRole('status', { name: 'Assistant is typing' })).toBeInTheDocument();
    const [first, second] = log().getAllByRole('article', { name: 'You said' }) as HTMLElement[];
    expect(first).not.toHaveTextContent('waiting');
    expect(second).toHaveTextContent('waiting for the answers before it...');
    expect(stopButton()).toBeInTheDocument();
    socket.receive(piece('s1', 'Hmm', 1));
    expect(screen.queryByRole('status', { name: 'Assistant is typing' })).toBeNull();
  });

  it('keeps one answer when the history already holds the final message of a live stream', () => {
    const { connect, log } = setup();
    const socket = connect(
      [human(1, 'Q'), message({ raw_text: 'Full answer', reply_to: 1, message_id: 2 })],
      [{ stream_id: 's1', raw_text: 'Full ans', reply_to: 1 }],
    );
    socket.receive(message({ raw_text: 'Full answer', reply_to: 1, message_id: 2, stream_id: 's1' }));
    const answers = log().getAllByRole('article', { name: 'Assistant said' });
    expect(answers).toHaveLength(1);
    expect(answers[0]?.querySelector('.is-streaming')).toBeNull();
  });

  it('shows no blinking cursor while disconnected, and takes the final answer from the next history', () => {
    const { connect, log, latest, timers } = setup();
    const socket = connect([human(1, 'Q')]);
    socket.receive(piece('s1', 'Half an ans', 1));
    socket.serverClose(1006);
    const live = log().getByRole('article', { name: 'Assistant said' });
    expect(live.querySelector('.chat-bubble')).not.toHaveClass('is-streaming');
    expect(stopButton()).toBeNull();
    timers.advance(1_000);
    const again = latest();
    again.open();
    again.receive({
      message_type: 'history',
      messages: [human(1, 'Q'), message({ raw_text: 'Half an answer, then the rest.', reply_to: 1 })],
      has_more: false,
    });
    const answers = log().getAllByRole('article', { name: 'Assistant said' });
    expect(answers).toHaveLength(1);
    expect(answers[0]).toHaveTextContent('Half an answer, then the rest.');
    expect(document.querySelector('.is-streaming')).toBeNull();
  });
});
