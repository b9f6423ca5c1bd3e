import type { TChatMessage } from '@daybook/contracts';
import { describe, expect, it } from 'vitest';
import { type ChatAction, type ChatState, chatReducer, initialChatState, oldestId } from './chat.state.ts';

const msg = (id: number, fields: Partial<TChatMessage> = {}): TChatMessage => ({
  author_type: 'assistant',
  message_type: 'markdown',
  raw_text: `message ${id}`,
  message_id: id,
  timestamp: '2025-06-02T10:00:00.000Z',
  ...fields,
});

const run = (...actions: ChatAction[]) => actions.reduce<ChatState>(chatReducer, initialChatState);
const texts = (state: ChatState) => state.items.map((i) => i.raw_text);

describe('chatReducer', () => {
  it('marks what arrives while the chat is open, never what a history brings, and keeps the mark on replacement', () => {
    const arrived = (state: ChatState) => state.items.map((i) => [i.key, Boolean(i.arrived)]);
    let state = run(
      { type: 'history', messages: [msg(10), msg(11)], hasMore: true },
      { type: 'older', messages: [msg(8), msg(9)], hasMore: false },
    );
    expect(arrived(state).every(([, a]) => !a)).toBe(true);
    state = [
      { type: 'send', key: 'local-1', text: 'hello' },
      { type: 'stream', streamId: 's1', delta: 'Hi', replyTo: 12 },
    ].reduce<ChatState>((s, a) => chatReducer(s, a as ChatAction), state);
    // The echo of the sent message and the final answer take the place of the local bubbles, marked still.
    state = chatReducer(state, {
      type: 'message',
      message: msg(12, { author_type: 'human', message_type: 'message', raw_text: 'hello' }),
    });
    state = chatReducer(state, {
      type: 'message',
      message: msg(13, { raw_text: 'Hi there', stream_id: 's1', reply_to: 12 }),
    });
    state = chatReducer(state, {
      type: 'message',
      message: msg(14, { author_type: 'system', message_type: 'system_message' }),
    });
    expect(arrived(state)).toEqual([
      ['m8', false],
      ['m9', false],
      ['m10', false],
      ['m11', false],
      ['local-1', true],
      ['stream-s1', true],
      ['m14', true],
    ]);
    // A reconnect's history brings them again, as history.
    state = chatReducer(state, { type: 'history', messages: [msg(12), msg(13), msg(14)], hasMore: true });
    expect(state.items.filter((i) => i.arrived)).toEqual([]);
  });

  it('merges an overlapping history by id and keeps older pages and their has_more', () => {
    const state = run(
      { type: 'history', messages: [msg(10), msg(11)], hasMore: true },
      { type: 'older', messages: [msg(8), msg(9)], hasMore: false },
      { type: 'history', messages: [msg(11, { raw_text: 'edited' }), msg(12)], hasMore: true },
    );
    expect(state.items.map((i) => i.message_id)).toEqual([8, 9, 10, 11, 12]);
    expect(texts(state)[3]).toBe('edited');
    expect(state.hasMore).toBe(false);
    expect(oldestId(state)).toBe(8);
  });

  it('replaces the list when a new history does not overlap (no gaps)', () => {
    const state = run(
      { type: 'history', messages: [msg(1), msg(2)], hasMore: false },
      { type: 'history', messages: [msg(80), msg(81)], hasMore: true },
    );
    expect(state.items.map((i) => i.message_id)).toEqual([80, 81]);
    expect(state.hasMore).toBe(true);
  });

  it('matches a history message to an unsent local one by trimmed text', () => {
    const state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'send', key: 'local-1', text: 'Hi there' },
      { type: 'send', key: 'local-2', text: 'Second' },
      {
        type: 'history',
        messages: [msg(1), msg(2, { author_type: 'human', message_type: 'message', raw_text: ' Hi there ' })],
        hasMore: false,
      },
    );
    expect(state.items.map((i) => [i.message_id, i.timestamp === null])).toEqual([
      [1, false],
      [2, false],
      [null, true],
    ]);
  });

  it('puts new stored messages before unsent ones and ignores duplicates', () => {
    const state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'send', key: 'local-1', text: 'pending' },
      { type: 'message', message: msg(2) },
      { type: 'message', message: msg(2) },
    );
    expect(texts(state)).toEqual(['message 1', 'message 2', 'pending']);
  });

  it('drops a live stream bubble once the history holds its final message', () => {
    const state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'stream', streamId: 's', delta: 'partial' },
      { type: 'history', messages: [msg(1), msg(2, { stream_id: 's', raw_text: 'complete' })], hasMore: false },
    );
    expect(texts(state)).toEqual(['message 1', 'complete']);
    expect(state.items.some((i) => i.streaming)).toBe(false);
  });

  it('drops a reply that was streaming when the connection dropped; the stored reply has no stream_id', () => {
    const state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'send', key: 'local-1', text: 'Tell me more' },
      {
        type: 'message',
        message: msg(2, { author_type: 'human', message_type: 'message', raw_text: 'Tell me more' }),
      },
      { type: 'stream', streamId: 's', delta: 'Half an ans' },
      // Reconnected: the new history holds the full stored reply, without its stream id.
      {
        type: 'history',
        messages: [
          msg(1),
          msg(2, { author_type: 'human', message_type: 'message', raw_text: 'Tell me more' }),
          msg(3, { raw_text: 'Half an answer, now complete.' }),
        ],
        hasMore: false,
      },
    );
    expect(texts(state)).toEqual(['message 1', 'Tell me more', 'Half an answer, now complete.']);
    expect(state.items.some((i) => i.streaming)).toBe(false);
  });

  it('drops the orphan bubble even before its reply is stored; the final message then arrives as new', () => {
    let state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'send', key: 'local-1', text: 'Still sending' },
      { type: 'stream', streamId: 's', delta: 'Half' },
      { type: 'history', messages: [msg(1)], hasMore: false },
    );
    // The unsent message stays; the streaming bubble of the dead connection does not.
    expect(state.items.map((i) => [i.raw_text, i.streaming ?? false])).toEqual([
      ['message 1', false],
      ['Still sending', false],
    ]);
    state = chatReducer(state, { type: 'message', message: msg(2, { raw_text: 'The whole reply', stream_id: 's' }) });
    expect(texts(state)).toEqual(['message 1', 'The whole reply', 'Still sending']);
    expect(state.items.filter((i) => i.raw_text === 'The whole reply')).toHaveLength(1);
  });

  it('starts a fresh bubble for a stream that begins after the reconnect', () => {
    const state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'stream', streamId: 'old', delta: 'Cut o' },
      { type: 'history', messages: [msg(1), msg(2, { raw_text: 'Cut off reply, stored' })], hasMore: false },
      { type: 'stream', streamId: 'new', delta: 'Fresh ' },
      { type: 'stream', streamId: 'new', delta: 'start' },
    );
    expect(texts(state)).toEqual(['message 1', 'Cut off reply, stored', 'Fresh start']);
    expect(state.items.filter((i) => i.streaming).map((i) => i.stream_id)).toEqual(['new']);
  });

  it('puts the unavailable notice in place of a half-streamed answer', () => {
    const state = run(
      { type: 'history', messages: [msg(1)], hasMore: false },
      { type: 'stream', streamId: 's', delta: 'Let me th' },
      {
        type: 'message',
        message: msg(2, {
          author_type: 'system',
          message_type: 'system_message',
          raw_text: 'Unavailable',
          stream_id: 's',
        }),
      },
    );
    expect(texts(state)).toEqual(['message 1', 'Unavailable']);
    expect(state.items.some((i) => i.streaming)).toBe(false);
  });
});
