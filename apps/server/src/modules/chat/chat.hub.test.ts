// What the hub remembers for tabs that connect later (answers being written, questions whose answer
// has not begun), kept apart per user, and forgotten once the instance writing them is gone.
import type { TServerEvent } from '@daybook/contracts';
import { describe, expect, it } from 'vitest';
import { createChatHub, STREAM_STALE_MS } from './chat.hub.ts';

const human = (id: number): TServerEvent => ({
  message_type: 'message',
  author_type: 'human',
  message_id: id,
  raw_text: `Question ${id}`,
  timestamp: '2026-11-25T04:00:00.000Z',
});
const piece = (streamId: string, replyTo: number, text: string): TServerEvent => ({
  message_type: 'stream',
  author_type: 'assistant',
  stream_id: streamId,
  raw_text: text,
  reply_to: replyTo,
});
const final = (id: number, replyTo: number, extra: { stream_id?: string } = {}): TServerEvent => ({
  message_type: 'markdown',
  author_type: 'assistant',
  message_id: id,
  raw_text: 'Done.',
  reply_to: replyTo,
  timestamp: '2026-11-25T04:00:01.000Z',
  ...extra,
});

function hubAt() {
  let clock = 1_000_000;
  const hub = createChatHub(undefined, () => clock);
  return { hub, pass: (ms: number) => (clock += ms) };
}

describe('the chat hub', () => {
  it("keeps each user's answers and questions apart, even under the same stream id", () => {
    const { hub } = hubAt();
    hub.publish(1, 'chat', human(10));
    hub.publish(2, 'chat', human(20));
    hub.publish(1, 'chat', piece('same', 10, 'Hel'));
    hub.publish(2, 'chat', piece('same', 20, 'Bon'));
    hub.publish(1, 'chat', piece('same', 10, 'lo'));
    expect(hub.liveStreams(1, 'chat')).toEqual([{ stream_id: 'same', raw_text: 'Hello', reply_to: 10 }]);
    expect(hub.liveStreams(2, 'chat')).toEqual([{ stream_id: 'same', raw_text: 'Bon', reply_to: 20 }]);
    expect(hub.answering(1, 'chat')).toEqual([]);
    // Another user's answer to a message with the same id ends nothing of theirs.
    hub.publish(2, 'chat', final(21, 10));
    expect(hub.liveStreams(1, 'chat')).toHaveLength(1);
    // The final message ends the stream (by its stream id, or by the question it answers).
    hub.publish(1, 'chat', final(11, 10));
    expect(hub.liveStreams(1, 'chat')).toEqual([]);
    hub.publish(2, 'chat', final(22, 20, { stream_id: 'same' }));
    expect(hub.liveStreams(2, 'chat')).toEqual([]);
  });

  it('counts a question answered again as awaiting until its first piece, or until it will not come', () => {
    const { hub } = hubAt();
    hub.awaitAnswer(1, 'chat', 10);
    hub.awaitAnswer(1, 'chat', 12);
    expect(hub.answering(1, 'chat')).toEqual([10, 12]);
    expect(hub.answering(1, 'onboarding')).toEqual([]);
    expect(hub.answering(2, 'chat')).toEqual([]);
    hub.publish(1, 'chat', piece('s', 10, 'Teal'));
    expect(hub.answering(1, 'chat')).toEqual([12]);
    // Said for another channel: not this one.
    hub.answerNotComing(1, 'onboarding', 12);
    expect(hub.answering(1, 'chat')).toEqual([12]);
    hub.answerNotComing(1, 'chat', 12);
    expect(hub.answering(1, 'chat')).toEqual([]);
  });

  it('forgets what an instance that is gone left behind', () => {
    const { hub, pass } = hubAt();
    hub.publish(1, 'chat', human(10));
    hub.publish(2, 'chat', piece('s', 20, 'Half an'));
    pass(STREAM_STALE_MS / 2);
    hub.publish(1, 'chat', human(11));
    pass(STREAM_STALE_MS / 2 + 1);
    expect(hub.answering(1, 'chat')).toEqual([11]);
    expect(hub.liveStreams(2, 'chat')).toEqual([]);
    // A piece after that starts what a tab that connects is shown.
    hub.publish(2, 'chat', piece('s', 20, ' answer'));
    expect(hub.liveStreams(2, 'chat')).toEqual([{ stream_id: 's', raw_text: ' answer', reply_to: 20 }]);
  });
});
