// Turns over real sockets and the real database: one answer at a time per user, in order, within a
// per-user budget; no end marker on screen; interrupted answers noted after a restart; provenance
// that follows the last change; logs without what users said.
import { ZChatHistoryPage, ZMemoryPage } from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { buildApp } from '../../app.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, type TestApp, waitFor } from '../../test/test-app.ts';
import { FLOOD } from './chat.routes.ts';
import { INTERRUPTED, LEARNING_DONE } from './chat.service.ts';
import { type ChatApp, captureLogs, connect, startChatApp, type } from './chat.test-client.ts';

let t: TestApp;
let fake: FakeOpenAI;
let wsBase = '';
let logs: ReturnType<typeof captureLogs>;

let chatApp: ChatApp;

beforeAll(async () => {
  chatApp = await startChatApp({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json' });
  ({ t, fake, wsBase } = chatApp);
  logs = captureLogs(t.app);
});
afterAll(() => chatApp.close());
beforeEach(() => {
  fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3 }));
  fake.onJson(() => ({ text: '{"operations":[]}' }));
});

async function chatting(browser: Browser, path = '/ws/chat/') {
  const c = await connect(wsBase, browser, path);
  await c.next(type('history'));
  return c;
}

const ops = (operations: unknown[]) => ({ text: JSON.stringify({ operations }) });
const memoriesOf = async (browser: Browser) => ZMemoryPage.parse((await browser.get('/api/memories/')).json()).results;
const historyOf = async (browser: Browser, channel = 'chat') =>
  ZChatHistoryPage.parse((await browser.get(`/api/chat/messages/?channel=${channel}&limit=100`)).json()).results;

describe('one answer at a time per user', () => {
  it('never asks the model for two answers of one user at once, and answers in order', async () => {
    fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3, delayMs: 30 }));
    const { browser, userId } = await signedInUser(t);
    const tabs = await Promise.all([chatting(browser), chatting(browser), chatting(browser)]);
    const first = fake.requests.length;
    const texts = ['one', 'two', 'three', 'four', 'five', 'six'];
    for (const [i, text] of texts.entries()) tabs[i % 3]?.say(text);
    const watcher = tabs[0];
    if (!watcher) throw new Error('no tab');
    const answers: string[] = [];
    while (answers.length < texts.length) {
      const answer = await watcher.next(type('markdown'), 10_000);
      answers.push(answer.message_type === 'markdown' ? answer.raw_text : '');
    }
    // Messages that arrived while an answer was being written were told they wait their turn.
    expect(await watcher.next(type('queued'))).toMatchObject({ author_type: 'system', ahead: expect.any(Number) });

    const replies = fake.requests
      .map((r, i) => ({ r, timing: fake.timings[i] }))
      .slice(first)
      .filter(({ r }) => r.stream);
    expect(replies).toHaveLength(texts.length);
    for (let i = 1; i < replies.length; i++) {
      expect(replies[i]?.timing?.receivedAt).toBeGreaterThanOrEqual(replies[i - 1]?.timing?.finishedAt ?? Infinity);
    }
    // Each answer follows its own question, in the order the questions were stored.
    const stored = await historyOf(browser);
    const questions = stored.filter((m) => m.author_type === 'human');
    expect(answers).toEqual(questions.map((q) => `You said: ${q.raw_text}`));
    const replyTo = stored.filter((m) => m.author_type === 'assistant').map((m) => m.reply_to);
    expect(replyTo).toEqual(questions.map((q) => q.message_id));
    // A question that waited sees the answers given before it, not the questions after it.
    const last = replies.at(-1)?.r.messages ?? [];
    expect(last.at(-1)).toEqual({ role: 'user', content: questions.at(-1)?.raw_text });
    expect(last.filter((m) => m.role === 'assistant')).toHaveLength(texts.length - 1);
    // Nothing is left waiting for an answer.
    expect(await t.database.db.prisma.chatMessage.count({ where: { userId, answerPendingAt: { not: null } } })).toBe(0);
    for (const c of tabs) c.ws.close();
  });

  it('holds the flood budget across all sockets of a user and across reconnects', async () => {
    const { browser } = await signedInUser(t);
    const [a, b] = await Promise.all([chatting(browser), chatting(browser)]);
    // Frames that are refused still count: the budget is about frames, not answers.
    for (let i = 0; i < FLOOD.max / 2; i++) a.send('{');
    for (let i = 0; i < FLOOD.max / 2; i++) b.send('{');
    for (let i = 0; i < FLOOD.max / 2; i++) {
      await a.next(type('error'));
      await b.next(type('error'));
    }
    a.ws.close();
    b.ws.close();
    const again = await chatting(browser);
    again.send('{');
    expect(await again.closed).toMatchObject({ code: 1013, reason: 'Too many messages' });
    // Another user is not affected.
    const other = await signedInUser(t);
    const c = await chatting(other.browser);
    c.say('hello');
    await c.next(type('markdown'));
    c.ws.close();
  });

  it('answers every liveness ping with a pong, to that socket only, outside the flood budget', async () => {
    const { browser } = await signedInUser(t);
    const [a, b] = await Promise.all([chatting(browser), chatting(browser)]);
    const pings = FLOOD.max * 2;
    for (let i = 0; i < pings; i++) a.send({ message_type: 'ping' });
    for (let i = 0; i < pings; i++) await a.next(type('pong'));
    // The budget is untouched: a message after them is answered, and only the pinging tab got pongs.
    a.say('still here?');
    await a.next((e) => e.message_type === 'markdown' && e.raw_text === 'You said: still here?', 10_000);
    await b.next((e) => e.message_type === 'markdown' && e.raw_text === 'You said: still here?', 10_000);
    expect(b.events.filter((e) => e.message_type === 'pong')).toEqual([]);
    for (const c of [a, b]) c.ws.close();
  });
});

describe('the end of the onboarding interview', () => {
  it('never streams the end marker, not even its first characters', async () => {
    const text = 'Thanks, that is all I need! [[ONBOARDING_COMPLETE]]';
    // Pieces of 4 characters, each sent on its own: the marker arrives split over many of them.
    fake.onChat(() => ({ text, chunks: Math.ceil(text.length / 4), delayMs: 15 }));
    const { browser } = await signedInUser(t);
    const c = await chatting(browser, '/ws/onboarding/');
    c.say('Lisbon, and I like sailing');
    const final = await c.next(type('markdown'));
    expect(final).toMatchObject({ raw_text: 'Thanks, that is all I need!' });
    const streamed = c.events.filter((e) => e.message_type === 'stream').map((e) => e.raw_text);
    expect(streamed.length).toBeGreaterThan(3);
    expect(streamed.join('')).toBe('Thanks, that is all I need! ');
    expect(streamed.some((piece) => piece.includes('['))).toBe(false);
    await c.next(type('redirect'));
    c.ws.close();
  });
});

describe('an answer interrupted by a crash or restart', () => {
  it('gets a note that offers to ask again when an instance starts, and the question is learned from', async () => {
    const { browser, userId } = await signedInUser(t);
    const insert = async (text: string, pendingSince: string) => {
      const [row] = await t.database.db.query<{ id: number }>(
        `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, answer_pending_at)
         VALUES ($1, 'chat', 'human', 'message', $2, (now() AT TIME ZONE 'UTC') - $3::interval) RETURNING id`,
        [userId, text, pendingSince],
      );
      return row?.id as number;
    };
    // Its instance died ten minutes ago; another instance is still answering the second one.
    const lost = await insert('I started rowing on Mondays', '10 minutes');
    const live = await insert('What should I cook tonight?', '5 seconds');
    fake.onJson((req) =>
      req.messages.at(-1)?.content.includes('rowing')
        ? ops([
            {
              action: 'ADD',
              id: null,
              key: 'rowing',
              data: 'Rows on Mondays',
              memory_type: 'activity',
              frequency_description: 'every Monday',
            },
          ])
        : ops([]),
    );
    const restarted = await buildApp(t.config, { db: t.database.db });
    try {
      await restarted.ready();
      const messages = await historyOf(browser);
      const notes = messages.filter((m) => m.raw_text === INTERRUPTED);
      expect(notes).toEqual([
        expect.objectContaining({ author_type: 'system', message_type: 'system_message', reply_to: lost }),
      ]);
      expect(messages.some((m) => m.reply_to === live)).toBe(false);
      const until = Date.now() + 5000;
      while (!(await memoriesOf(browser)).length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await memoriesOf(browser)).toEqual([
        expect.objectContaining({ key: 'rowing', source: 'chat', source_message_id: lost }),
      ]);
      // Noted once: another instance (or this one again) does not repeat it.
      const again = await buildApp(t.config, { db: t.database.db });
      await again.ready();
      await again.close();
      expect((await historyOf(browser)).filter((m) => m.raw_text === INTERRUPTED)).toHaveLength(1);
    } finally {
      await restarted.close();
    }
  });
});

describe('provenance', () => {
  it('follows the chat message that last changed a memory learned in onboarding', async () => {
    const { browser } = await signedInUser(t);
    fake.onChat(() => ({ text: 'Nice! What do you like to do?' }));
    fake.onJson(() =>
      ops([
        {
          action: 'ADD',
          id: null,
          key: 'home city',
          data: 'Lives in Lisbon',
          memory_type: 'location',
          frequency_description: null,
        },
      ]),
    );
    const onboarding = await chatting(browser, '/ws/onboarding/');
    onboarding.say('I live in Lisbon');
    const said = await onboarding.next(type('message'));
    await onboarding.next(type('task_notification_final'));
    onboarding.ws.close();
    const [learned] = await memoriesOf(browser);
    expect(learned).toMatchObject({
      source: 'onboarding',
      source_message_id: said.message_type === 'message' ? said.message_id : -1,
    });

    fake.onJson(() =>
      ops([
        {
          action: 'UPDATE',
          id: learned?.id,
          key: 'home city',
          data: 'Lives in Porto',
          memory_type: 'location',
          frequency_description: null,
        },
      ]),
    );
    const chat = await chatting(browser);
    chat.say('I moved to Porto last week');
    const moved = await chat.next(type('message'));
    await chat.next(type('task_notification_final'));
    chat.ws.close();
    const [updated] = await memoriesOf(browser);
    expect(updated).toMatchObject({
      id: learned?.id,
      data: 'Lives in Porto',
      source: 'chat',
      source_message_id: moved.message_type === 'message' ? moved.message_id : -1,
    });
  });
});

describe('logs', () => {
  it('keep what users said and what the model learned out of every line above debug', async () => {
    const { browser, userId } = await signedInUser(t);
    const from = logs.length;
    const c = await chatting(browser);
    for (const [i, output] of [
      { text: 'My private note: Alex is allergic to peanuts' },
      ops([{ action: 'ADD', key: 'health', data: 'Alex is allergic to peanuts', memory_type: 'nonsense', id: 'x' }]),
    ].entries()) {
      fake.onJson(() => output);
      c.say('Alex is allergic to peanuts');
      await c.next(type('markdown'));
      // Extraction runs after the answer and sends nothing when it applies nothing, so its (debug)
      // end is the signal; the next script is set only once it has asked the model with this one.
      // A loaded CI machine has taken over 3 s.
      await waitFor(
        `learning from message ${i + 1} to be over`,
        () => logs.filter((l) => l.msg === LEARNING_DONE && l.userId === userId).length > i,
        { timeoutMs: 15_000 },
      );
    }
    // Prose in every form asked for fails the call; a malformed operation is skipped.
    const logged = (l: (typeof logs)[number]) =>
      l.msg === 'learning from a message failed' || l.msg === 'memory extraction: malformed operation, ignored';
    const lines = logs.slice(from);
    expect(lines.filter(logged).map((l) => [l.msg, l.level, l.error ?? l.fields])).toEqual([
      ['learning from a message failed', 40, 'ModelOutputError'],
      ['memory extraction: malformed operation, ignored', 40, ['id']],
    ]);
    const visible = JSON.stringify(lines.filter((l) => l.level >= 30));
    expect(visible).not.toContain('peanuts');
    c.ws.close();
  });

  it("keep a failing model's error text (which can echo the prompt) out of every line above debug", async () => {
    const { browser } = await signedInUser(t);
    const from = logs.length;
    const c = await chatting(browser);
    const echo = (req: { messages: Array<{ content: string }> }) =>
      `{"error":{"message":"upstream echo: ${req.messages
        .map((m) => m.content)
        .join(' ')
        .replace(/["\\\n]/g, ' ')}"}}`;
    fake.onChat((req) => ({ status: 500, body: echo(req) }));
    fake.onJson((req) => ({ status: 500, body: echo(req) }));
    c.say('My sister Jo has diabetes');
    await c.next((m) => m.message_type === 'system_message');
    // Extraction runs after the answer and sends nothing when it applies nothing, so
    // its log lines are the only signal; a loaded CI machine has taken over 3 s.
    const until = Date.now() + 15_000;
    while (!logs.slice(from).some((l) => l.msg === 'learning from a message failed') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    const lines = logs.slice(from);
    expect(lines.find((l) => l.msg === 'model request failed')).toMatchObject({ level: 40, status: 500 });
    expect(lines.find((l) => l.msg === 'learning from a message failed')).toMatchObject({ level: 40, status: 500 });
    expect(JSON.stringify(lines.filter((l) => l.level >= 30))).not.toContain('diabetes');
    // The whole error is still there for whoever turns debug on.
    expect(JSON.stringify(lines.filter((l) => l.level === 20))).toContain('diabetes');
    c.ws.close();
  });
});
