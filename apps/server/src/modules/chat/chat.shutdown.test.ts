// The chat at shutdown (issue 30, S7), with fakes for the database and the model: the drain lets
// answers finish, then cuts short those still being written (what was written is kept, with the
// interrupted note), gives waiting messages the note, and takes no new message; the hub then closes
// every socket with 1012. tests/deploy/shutdown.test.ts does the same to the real server.
import { ANSWER_INTERRUPTED, CLOSE_CODES, type TServerEvent } from '@daybook/contracts';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { LearningService } from '../assistant/learning.service.ts';
import type { MemoriesService } from '../memories/memories.service.ts';
import type { Llm } from '../model/model.types.ts';
import { createChatHub, type Subscriber } from './chat.hub.ts';
import type { ChatMessageRow, ChatRepo } from './chat.repo.ts';
import { createChatService } from './chat.service.ts';

/** A model that streams `pieces`, then (with `hang`) waits until its call is aborted. */
function fakeLlm(pieces: string[], { hang = false } = {}): Llm {
  return {
    model: 'fake',
    async *stream(_messages, signal) {
      for (const piece of pieces) {
        await new Promise((r) => setTimeout(r, 5));
        yield piece;
      }
      if (hang)
        await new Promise((_, reject) =>
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true }),
        );
    },
    structured: async () => {
      throw new Error('not used');
    },
    refuses: () => true,
    refusals: () => [],
  };
}

function setup(llm: Llm) {
  const stored: ChatMessageRow[] = [];
  const create = async (row: Partial<ChatMessageRow>) => {
    const saved = { url: null, replyToId: null, stopped: false, ...row, id: stored.length + 1, createdAt: new Date() };
    stored.push(saved as ChatMessageRow);
    return saved as ChatMessageRow;
  };
  const repo = {
    create,
    startTurn: async (data: Partial<ChatMessageRow>) => ({
      human: await create({ ...data, authorType: 'human', messageType: 'message' }),
      before: [],
      extra: [],
    }),
    turnContext: async () => ({ before: [], extra: [] }),
  } as unknown as ChatRepo;
  const hub = createChatHub();
  const published: TServerEvent[] = [];
  const user = { id: 1, learnFromChats: false, onboarded: true };
  hub.add(user.id, { channel: 'chat', user, sessionId: 's1', send: (event) => published.push(event), close: () => {} });
  const chat = createChatService({
    repo,
    hub,
    llm,
    learning: { learn: async () => [] } as unknown as LearningService,
    memories: {
      selectionQuery: () => ({ sql: '', params: [] }),
      selectionFromJson: () => ({ core: [], relevant: [], recent: [] }),
    } as unknown as MemoriesService,
    users: { markOnboarded: async () => true },
    clock: { now: () => new Date() },
    log: pino({ level: 'silent' }),
  });
  const frame = (text: string, clientId?: string) =>
    JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text, client_id: clientId });
  const answers = (id: number) =>
    stored.filter((m) => m.replyToId === id).map((m) => ({ type: m.messageType, text: m.rawText }));
  return { chat, user, stored, published, frame, answers };
}

const until = async (check: () => boolean) => {
  for (let i = 0; !check(); i++) {
    if (i > 400) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the chat drain at shutdown', () => {
  it('lets an answer that ends in time finish, and returns 0', async () => {
    const { chat, user, frame, answers } = setup(fakeLlm(['All ', 'done.']));
    const turn = chat.receive(user, 'chat', frame('Hello', 'a1'));
    expect(await chat.drain(5_000)).toBe(0);
    await turn;
    expect(answers(1)).toEqual([{ type: 'markdown', text: 'All done.' }]);
  });

  it('keeps what an answer that outlasts it wrote, with the interrupted note, and notes the message waiting behind it', async () => {
    const { chat, user, frame, answers, published } = setup(fakeLlm(['Once upon ', 'a time'], { hang: true }));
    const first = chat.receive(user, 'chat', frame('A long story', 'b1'));
    await until(() => published.some((e) => e.message_type === 'stream' && e.raw_text.includes('a time')));
    const second = chat.receive(user, 'chat', frame('And another', 'b2'));
    await until(() => published.some((e) => e.message_type === 'queued'));
    const started = Date.now();
    expect(await chat.drain(50)).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_000);
    await Promise.all([first, second]);
    expect(answers(1)).toEqual([
      { type: 'markdown', text: 'Once upon a time' },
      { type: 'system_message', text: ANSWER_INTERRUPTED },
    ]);
    expect(answers(2)).toEqual([{ type: 'system_message', text: ANSWER_INTERRUPTED }]);
    // The tabs got them too: the answer's stream ends with its final message.
    const final = published.find((e) => e.message_type === 'markdown');
    const stream = published.find((e) => e.message_type === 'stream');
    expect(final && 'stream_id' in final && stream && final.stream_id === stream.stream_id).toBe(true);
  });

  it('takes no new message once it has begun: the client sends it again after reconnecting', async () => {
    const { chat, user, frame, stored } = setup(fakeLlm(['Hi']));
    await chat.drain(5_000);
    expect(await chat.receive(user, 'chat', frame('Too late', 'c1'))).toBeNull();
    expect(stored).toEqual([]);
  });
});

describe('the hub at shutdown', () => {
  function subscriber(onClose: (code: number) => void = () => {}) {
    const user = { id: 1, learnFromChats: false, onboarded: true };
    return {
      channel: 'chat' as const,
      user,
      sessionId: 's1',
      send: () => {},
      close: vi.fn(onClose),
      terminate: vi.fn(),
    } satisfies Subscriber;
  }

  it('closes every socket with 1012, drops those that do not answer, and closes late joiners at once', async () => {
    const hub = createChatHub();
    const removers: Array<() => void> = [];
    const answering = subscriber(() => removers[0]?.());
    const silent = subscriber();
    removers.push(hub.add(1, answering), hub.add(2, silent));
    const started = Date.now();
    await hub.closeAll(CLOSE_CODES.serviceRestart, 'Server restarting', 100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(answering.close).toHaveBeenCalledWith(1012, 'Server restarting');
    expect(silent.close).toHaveBeenCalledWith(1012, 'Server restarting');
    expect(answering.terminate).not.toHaveBeenCalled();
    expect(silent.terminate).toHaveBeenCalledOnce();
    const late = subscriber();
    hub.add(3, late);
    expect(late.close).toHaveBeenCalledWith(1012, 'Server restarting');
  });

  it('waits no longer than it takes every socket to go', async () => {
    const hub = createChatHub();
    let remove = () => {};
    remove = hub.add(
      1,
      subscriber(() => setTimeout(() => remove(), 10)),
    );
    const started = Date.now();
    await hub.closeAll(CLOSE_CODES.serviceRestart, 'Server restarting', 5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(hub.total()).toBe(0);
  });
});
