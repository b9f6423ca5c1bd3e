// The service's own rules where the database has to misbehave: a message that failed to be stored
// is taken again when the client resends it.
import type { TServerEvent } from '@daybook/contracts';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { LearningService } from '../assistant/learning.service.ts';
import type { MemoriesService } from '../memories/memories.service.ts';
import { createChatHub } from './chat.hub.ts';
import type { ChatMessageRow, ChatRepo } from './chat.repo.ts';
import { createChatService, shownSoFar } from './chat.service.ts';

function setup() {
  const stored: ChatMessageRow[] = [];
  let failNext = false;
  const repo = {
    async create(row: Omit<ChatMessageRow, 'id' | 'createdAt'>) {
      if (failNext) {
        failNext = false;
        throw new Error('connection terminated');
      }
      const saved = { ...row, id: stored.length + 1, createdAt: new Date() } as ChatMessageRow;
      stored.push(saved);
      return saved;
    },
  } as unknown as ChatRepo;
  const hub = createChatHub();
  const published: TServerEvent[] = [];
  const user = { id: 1, learnFromChats: false, onboarded: true };
  hub.add(user.id, { channel: 'chat', user, sessionId: 's1', send: (event) => published.push(event), close: () => {} });
  const chat = createChatService({
    repo,
    hub,
    llm: null,
    learning: { learn: async () => [] } as unknown as LearningService,
    memories: {} as MemoriesService,
    users: { markOnboarded: async () => true },
    clock: { now: () => new Date() },
    log: pino({ level: 'silent' }),
  });
  const frame = (text: string, clientId: string) =>
    JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text, client_id: clientId });
  return { chat, user, stored, published, frame, failOnce: () => (failNext = true) };
}

describe('a resent message (same client_id)', () => {
  it('is stored when the first attempt failed to be stored', async () => {
    const { chat, user, stored, frame, failOnce } = setup();
    failOnce();
    await expect(chat.receive(user, 'chat', frame('Try me', 'a1'))).rejects.toThrow('connection terminated');
    expect(stored).toHaveLength(0);
    await chat.receive(user, 'chat', frame('Try me', 'a1'));
    expect(stored.filter((m) => m.authorType === 'human').map((m) => m.rawText)).toEqual(['Try me']);
  });

  it('is stored once, and the resending tab gets the echo again', async () => {
    const { chat, user, stored, frame } = setup();
    expect(await chat.receive(user, 'chat', frame('Only once', 'b1'))).toBeNull();
    const again = await chat.receive(user, 'chat', frame('Only once', 'b1'));
    expect(again).toMatchObject({ author_type: 'human', raw_text: 'Only once', message_id: 1 });
    expect(stored.filter((m) => m.authorType === 'human')).toHaveLength(1);
  });
});

describe('a streamed reply', () => {
  it('never shows the end marker, nor a tail that may be its start', () => {
    const marker = '[[ONBOARDING_COMPLETE]]';
    expect(shownSoFar('Thanks!', marker)).toBe('Thanks!');
    expect(shownSoFar('Thanks! [', marker)).toBe('Thanks! ');
    expect(shownSoFar('Thanks! [[ONBOARD', marker)).toBe('Thanks! ');
    expect(shownSoFar('Thanks! [[ONBOARDING_COMPLETE]', marker)).toBe('Thanks! ');
    expect(shownSoFar(`Thanks! ${marker}`, marker)).toBe('Thanks! ');
    // A bracket that turns out not to start the marker is shown once that is known.
    expect(shownSoFar('See [1] and', marker)).toBe('See [1] and');
    expect(shownSoFar(`a ${marker} b [[x`, marker)).toBe('a  b [[x');
  });
});
