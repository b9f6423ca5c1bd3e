// Learning from chat messages, onboarding, and chat without a model, over real WebSockets.
import { type TServerEvent, ZChatHistoryPage, ZMemoryPage, ZServerEvent } from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type CompletionRequest,
  type FakeOpenAI,
  startFakeOpenAI,
  structuredName,
} from '../../../../../tests/helpers/fake-openai.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, createTestApp, type TestApp, waitFor } from '../../test/test-app.ts';
import { LEARNING_DONE, NOT_CONFIGURED } from './chat.service.ts';
import { type ChatApp, captureLogs, startChatApp } from './chat.test-client.ts';

let t: TestApp;
let fake: FakeOpenAI;
let wsBase = '';

let chatApp: ChatApp;
let logs: ReturnType<typeof captureLogs>;

beforeAll(async () => {
  // Debug logs say when a message's learning is over, which tests that expect nothing learned wait for.
  chatApp = await startChatApp({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json' });
  ({ t, fake, wsBase } = chatApp);
  logs = captureLogs(t.app);
});
afterAll(() => chatApp.close());
beforeEach(() => {
  fake.onChat(() => ({ text: 'Noted!' }));
  fake.onJson(() => ({ text: '{"operations":[]}' }));
});

async function open(browser: Browser, path = '/ws/chat/', base = wsBase) {
  const ws = new WebSocket(`${base}${path}`, {
    headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '), origin: 'http://daybook.test' },
  });
  const events: TServerEvent[] = [];
  ws.on('message', (d) => events.push(ZServerEvent.parse(JSON.parse(d.toString()))));
  await new Promise((r) => ws.on('open', r));
  const next = async (match: (e: TServerEvent) => boolean, timeoutMs = 5000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const i = events.findIndex(match);
      if (i >= 0) return events.splice(i, 1)[0] as TServerEvent;
      if (Date.now() > until) throw new Error(`no matching event in ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const say = (text: string) =>
    ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text }));
  /** Frames arrive in the order the server sent them: once the pong is in, so is all sent before the ping. */
  const pong = async () => {
    ws.send(JSON.stringify({ message_type: 'ping' }));
    await next((e) => e.message_type === 'pong');
  };
  return { ws, events, next, say, pong };
}

/** Waits until `count` of the user's messages have been learned from (learning takes them one at a time, in order). */
const learnedFrom = (userId: number, count: number) =>
  waitFor(
    `learning from ${count} message(s) of user ${userId} to be over`,
    () => logs.filter((l) => l.msg === LEARNING_DONE && l.userId === userId).length >= count,
  );

/** The user's chat messages, once there are any (the welcome after onboarding is written shortly after). */
async function chatOnceWritten(browser: Browser) {
  const until = Date.now() + 5000;
  for (;;) {
    const { results } = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/')).json());
    if (results.length || Date.now() > until) return results;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A memory extraction, whether asked as a forced tool call or as structured output (after a model ignored tools). */
const isExtraction = (r: CompletionRequest) => structuredName(r) === 'save_memory_changes';
const memoriesOf = async (browser: Browser) => ZMemoryPage.parse((await browser.get('/api/memories/')).json()).results;
const ops = (operations: unknown[]) => ({ text: JSON.stringify({ operations }) });
const add = (key: string, data: string, memory_type = 'text', frequency_description: string | null = null) => ({
  action: 'ADD',
  id: null,
  key,
  data,
  memory_type,
  frequency_description,
});

describe('learning', () => {
  it('saves what the user says as memories with provenance, and tells them', async () => {
    fake.onJson(() =>
      ops([
        add('home city', 'Lives in Lisbon', 'location'),
        add('climbing', 'Goes climbing every Saturday', 'activity', 'every Saturday'),
      ]),
    );
    const { browser } = await signedInUser(t);
    const c = await open(browser);
    c.say('I live in Lisbon and go climbing every Saturday');
    const echo = await c.next((e) => e.message_type === 'message');
    const note = await c.next((e) => e.message_type === 'task_notification_final');
    expect(note).toMatchObject({
      raw_text: 'Remembered: Lives in Lisbon; Goes climbing every Saturday',
      message_id: null,
    });
    const memories = await memoriesOf(browser);
    expect(memories.map((m) => [m.key, m.memory_type, m.frequency_description, m.source]).sort()).toEqual([
      ['climbing', 'activity', 'every Saturday', 'chat'],
      ['home city', 'location', null, 'chat'],
    ]);
    expect(memories.every((m) => echo.message_type === 'message' && m.source_message_id === echo.message_id)).toBe(
      true,
    );
    // The extraction made the model call the memory tool, and saw the message.
    const extraction = fake.requests.filter((r) => r.tools && !r.stream).at(-1);
    expect(extraction?.tools?.[0]?.function.name).toBe('save_memory_changes');
    expect(extraction?.tool_choice).toEqual({ type: 'function', function: { name: 'save_memory_changes' } });
    expect(extraction?.messages.at(-1)?.content).toContain('I live in Lisbon and go climbing every Saturday');
    c.ws.close();
  });

  it('updates and deletes existing memories by id, and never adds a duplicate', async () => {
    const { browser } = await signedInUser(t);
    const city = (
      await browser.post('/api/memories/', { key: 'home city', data: 'Lives in Lisbon', memory_type: 'location' })
    ).json();
    const job = (await browser.post('/api/memories/', { key: 'job', data: 'Works at Acme' })).json();
    fake.onJson(() =>
      ops([
        {
          action: 'UPDATE',
          id: city.id,
          key: 'home city',
          data: 'Lives in Porto',
          memory_type: 'location',
          frequency_description: null,
        },
        { action: 'DELETE', id: job.id, key: 'job', data: '', memory_type: 'text', frequency_description: null },
        add('home city', 'Lives in Porto', 'location'),
        { action: 'DELETE', id: 999999, key: 'x', data: '', memory_type: 'text', frequency_description: null },
      ]),
    );
    const c = await open(browser);
    c.say('I moved to Porto and left Acme');
    expect(await c.next((e) => e.message_type === 'task_notification_final')).toMatchObject({
      raw_text: 'Remembered: Lives in Porto · Forgot: Works at Acme',
    });
    const active = await memoriesOf(browser);
    expect(active.map((m) => [m.key, m.data])).toEqual([['home city', 'Lives in Porto']]);
    const deleted = ZMemoryPage.parse((await browser.get('/api/memories/?show_deleted=true')).json()).results;
    expect(deleted.map((m) => m.key)).toEqual(['job']);
    c.ws.close();
  });

  it('ignores malformed model output and still replies', async () => {
    const { browser, userId } = await signedInUser(t);
    const c = await open(browser);
    for (const [i, output] of [
      { garbage: 'not json at all' },
      { text: '```json\n{"operations": "nope"}\n```' },
      ops([{ action: 'EXPLODE' }, add('', '')]),
    ].entries()) {
      fake.onJson(() => output);
      c.say('I like jazz');
      await c.next((e) => e.message_type === 'markdown');
      // Learned from with this output before the next one is set.
      await learnedFrom(userId, i + 1);
    }
    // Learning from all three is over: the socket has everything sent before, once it has a later pong.
    await c.pong();
    expect(c.events.filter((e) => e.message_type === 'task_notification_final')).toEqual([]);
    expect(await memoriesOf(browser)).toEqual([]);
    c.ws.close();
  });

  it('reads JSON that a local model wrote in prose, in a code fence, instead of calling the tool', async () => {
    fake.onJson(() => ({
      text: `\`\`\`json\n${JSON.stringify({ operations: [add('music', 'Loves jazz', 'interest')] })}\n\`\`\``,
      ignoreTools: true,
    }));
    const { browser } = await signedInUser(t);
    const c = await open(browser);
    c.say('Remember that I love jazz');
    await c.next((e) => e.message_type === 'task_notification_final');
    expect((await memoriesOf(browser)).map((m) => m.data)).toEqual(['Loves jazz']);
    c.ws.close();
  });

  it('learns nothing when "Learn from my chats" is off', async () => {
    fake.onJson(() => ops([add('secret', 'Should not be saved')]));
    const { browser, userId } = await signedInUser(t);
    expect((await browser.patch('/api/users/me/', { learn_from_chats: false })).json().learn_from_chats).toBe(false);
    const before = fake.requests.length;
    const c = await open(browser);
    c.say('My secret is safe');
    await c.next((e) => e.message_type === 'markdown');
    await learnedFrom(userId, 1);
    expect(await memoriesOf(browser)).toEqual([]);
    expect(fake.requests.slice(before).some(isExtraction)).toBe(false);
    c.ws.close();
  });

  it('does not overwrite a fuller memory with a shorter version of the same fact', async () => {
    const { browser, userId } = await signedInUser(t);
    await browser.post('/api/memories/', {
      key: 'home city',
      data: 'Lives in Lisbon, Portugal (Alfama)',
      memory_type: 'location',
    });
    fake.onJson(() => ops([add('home city', 'lives in Lisbon', 'location')]));
    const c = await open(browser);
    await c.next((e) => e.message_type === 'history');
    const before = fake.requests.length;
    c.say('I live in Lisbon');
    await c.next((e) => e.message_type === 'markdown');
    // The extraction was asked and its answer applied (or not); the socket has all sent before.
    await learnedFrom(userId, 1);
    await c.pong();
    expect(fake.requests.slice(before).some(isExtraction)).toBe(true);
    expect((await memoriesOf(browser)).map((m) => m.data)).toEqual(['Lives in Lisbon, Portugal (Alfama)']);
    expect(c.events.some((e) => e.message_type === 'task_notification_final')).toBe(false);
    c.ws.close();
  });

  it('stops learning as soon as the setting is turned off, in tabs already open', async () => {
    fake.onJson(() => ops([add('secret', 'Should not be saved')]));
    const { browser, userId } = await signedInUser(t);
    const c = await open(browser);
    await c.next((e) => e.message_type === 'history');
    // Another tab (the profile page) turns learning off while this chat stays open.
    await browser.patch('/api/users/me/', { learn_from_chats: false });
    const before = fake.requests.length;
    c.say('My secret is safe');
    await c.next((e) => e.message_type === 'markdown');
    // Over before learning is turned on again, which would otherwise reach it.
    await learnedFrom(userId, 1);
    expect(await memoriesOf(browser)).toEqual([]);
    expect(fake.requests.slice(before).some(isExtraction)).toBe(false);
    // And on again.
    fake.onJson(() => ops([add('tea', 'Drinks green tea')]));
    await browser.patch('/api/users/me/', { learn_from_chats: true });
    c.say('I drink green tea');
    await c.next((e) => e.message_type === 'task_notification_final');
    expect((await memoriesOf(browser)).map((m) => m.data)).toEqual(['Drinks green tea']);
    c.ws.close();
  });
});

describe('onboarding', () => {
  it('greets, interviews, and redirects to /chat when the assistant has enough', async () => {
    const { browser, userId } = await signedInUser(t);
    const c = await open(browser, '/ws/onboarding/');
    const history = await c.next((e) => e.message_type === 'history');
    expect(history.message_type === 'history' && history.messages[0]?.raw_text).toMatch(/What should I call you\?/);
    fake.onChat(() => ({ text: 'Nice to meet you, Sam! Where do you live?' }));
    c.say('Call me Sam');
    await c.next((e) => e.message_type === 'markdown');
    const onboardingPrompt = fake.requests.filter((r) => r.stream).at(-1)?.messages[0]?.content;
    expect(onboardingPrompt).toContain('Interview them');
    // "Call me Sam" is learned from (nothing, as the fake answers) before the next answer's facts are set.
    await learnedFrom(userId, 1);
    fake.onChat(() => ({ text: 'Thanks, that is all I need!\n[[ONBOARDING_COMPLETE]]' }));
    // The last answer's facts are still being learned when the interview ends.
    fake.onJson(() => ({ ...ops([add('home city', 'Lives in Lisbon', 'location')]), delayMs: 150 }));
    c.say('Lisbon, Europe/Lisbon');
    const final = await c.next((e) => e.message_type === 'markdown');
    expect(final.message_type === 'markdown' && final.raw_text).toBe('Thanks, that is all I need!');
    expect(await c.next((e) => e.message_type === 'redirect')).toMatchObject({ url: '/chat' });
    expect((await browser.get('/api/users/me/')).json().onboarded).toBe(true);
    c.ws.close();

    // The chat opens with what Daybook learned, the last answer included.
    const [welcome] = await chatOnceWritten(browser);
    expect(welcome?.raw_text).toContain('Welcome to your chat!');
    expect(welcome?.raw_text).toContain('- Lives in Lisbon');
    // Its provenance points into the interview, where it was said.
    const [learned] = ZMemoryPage.parse((await browser.get('/api/memories/')).json()).results;
    const interview = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/?channel=onboarding')).json());
    const answer = interview.results.find((m) => m.raw_text === 'Lisbon, Europe/Lisbon');
    expect(learned).toMatchObject({ key: 'home city', source: 'onboarding', source_message_id: answer?.message_id });
  });

  it('welcomes a user who skipped the interview without listing anything', async () => {
    const { browser } = await signedInUser(t);
    const c = await open(browser, '/ws/onboarding/');
    await c.next((e) => e.message_type === 'history');
    c.say('later');
    await c.next((e) => e.message_type === 'redirect');
    c.ws.close();
    const results = await chatOnceWritten(browser);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ author_type: 'assistant' });
    expect(results[0]?.raw_text).toMatch(/^\*\*Welcome to your chat!\*\* Ask me anything/);
  });

  it('stops when the user asks to', async () => {
    const { browser } = await signedInUser(t);
    const c = await open(browser, '/ws/onboarding/');
    await c.next((e) => e.message_type === 'history');
    c.say('skip for now');
    expect(await c.next((e) => e.message_type === 'redirect')).toMatchObject({ url: '/chat' });
    expect((await browser.get('/api/users/me/')).json().onboarded).toBe(true);
    // Once finished, the interview takes no more messages, on this socket or a new one.
    c.say('one more thing');
    expect(await c.next((e) => e.message_type === 'error')).toMatchObject({ code: 'onboarding_finished' });
    c.ws.close();
    const again = await open(browser, '/ws/onboarding/');
    await again.next((e) => e.message_type === 'history');
    again.say('and another');
    expect(await again.next((e) => e.message_type === 'error')).toMatchObject({
      code: 'onboarding_finished',
      raw_text: "You've finished onboarding. Tell Daybook more any time in your chat.",
    });
    again.ws.close();
    const interview = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/?channel=onboarding')).json());
    expect(interview.results.map((m) => m.raw_text)).not.toContain('one more thing');
    expect(interview.results.map((m) => m.raw_text)).not.toContain('and another');
  });
});

describe('without a model', () => {
  it('answers with a system message that explains how to configure one', async () => {
    const bare = await createTestApp();
    try {
      const base = (await bare.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
      const { browser } = await signedInUser(bare);
      const c = await open(browser, '/ws/chat/', base);
      c.say('hello');
      expect(await c.next((e) => e.message_type === 'system_message')).toMatchObject({ raw_text: NOT_CONFIGURED });
      c.ws.close();
    } finally {
      await bare.close();
    }
  });
});

describe('shutting down', () => {
  it('lets learning under way finish before the database closes', async () => {
    const own = await startFakeOpenAI();
    own.onChat(() => ({ text: 'Have fun!' }));
    // The extraction answers well after the reply: the server is closing by then.
    own.onJson(() => ({ ...ops([add('sailing', 'Goes sailing in summer', 'activity')]), delayMs: 400 }));
    const closing = await createTestApp({ LLM_BASE_URL: own.baseUrl, LLM_MODEL: 'fake-model', LLM_MAX_RETRIES: '0' });
    try {
      const base = (await closing.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
      const { browser, userId } = await signedInUser(closing);
      const c = await open(browser, '/ws/chat/', base);
      c.say('I go sailing every summer');
      await c.next((e) => e.message_type === 'markdown');
      await closing.app.close();
      const saved = await closing.database.db.prisma.memory.findMany({ where: { userId } });
      expect(saved.map((m) => m.data)).toEqual(['Goes sailing in summer']);
    } finally {
      await closing.close();
      await own.close();
    }
  });
});
