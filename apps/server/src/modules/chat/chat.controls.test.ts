// The chat's controls over real sockets and the real database: Stop (the model call ends, the part
// written so far is kept, marked stopped, in every tab), Regenerate and Retry (the same question
// answered again), and a tab that connects while an answer is being written (it gets the text so far).
import { type TChatMessage, type TServerEvent, ZChatHistoryPage } from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { waitFor } from '../../../../../tests/helpers/wait-for.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, sameBrowserOn, type TestApp, type TwoInstances, twoInstances } from '../../test/test-app.ts';
import { ANSWERED_SINCE, UNAVAILABLE } from './chat.service.ts';
import { type ChatApp, type Client, connect, startChatApp, type } from './chat.test-client.ts';

const SLOW = 'One. Two. Three. Four. Five. Six. Seven. Eight. Nine. Ten. Eleven. Twelve. Thirteen. Fourteen.';

let t: TestApp;
let fake: FakeOpenAI;
let wsBase = '';
let chatApp: ChatApp;

beforeAll(async () => {
  chatApp = await startChatApp();
  ({ t, fake, wsBase } = chatApp);
});
afterAll(() => chatApp.close());
beforeEach(() => {
  fake.onChat((req) =>
    /slow/i.test(String(req.messages.at(-1)?.content))
      ? { text: SLOW, chunks: 14, delayMs: 150 }
      : { text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3 },
  );
  fake.onJson(() => ({ text: '{"operations":[]}' }));
});

async function chatting(browser: Browser, base = wsBase) {
  const c = await connect(base, browser);
  await c.next(type('history'));
  return c;
}

const historyOf = async (browser: Browser) =>
  ZChatHistoryPage.parse((await browser.get('/api/chat/messages/?limit=100')).json()).results;

type Msg = TChatMessage;
const answerTo = (id: number) => (e: TServerEvent) => e.message_type === 'markdown' && e.reply_to === id;
const streamOf = (id: number) => (e: TServerEvent) => e.message_type === 'stream' && e.reply_to === id;
const echo = (text: string) => (e: TServerEvent) =>
  e.message_type === 'message' && e.author_type === 'human' && e.raw_text === text;

async function ask(c: Client, text: string) {
  c.say(text);
  const human = await c.next(echo(text));
  if (human.message_type !== 'message' || human.message_id === null) throw new Error('no echo');
  return human.message_id;
}

describe('Stop', () => {
  it('ends the model call and keeps the part written so far, marked stopped, in every tab', async () => {
    const { browser } = await signedInUser(t);
    const [tab, other] = await Promise.all([chatting(browser), chatting(browser)]);
    const id = await ask(tab, 'A slow question');
    await tab.next(streamOf(id));
    // The echo can come before the model has the request; the first streamed piece cannot.
    const request = fake.requests.findLastIndex((r) => r.stream && r.messages.at(-1)?.content === 'A slow question');
    expect(request).toBeGreaterThanOrEqual(0);
    tab.send({ message_type: 'stop', reply_to: id });

    const [here, there] = (await Promise.all([tab.next(answerTo(id)), other.next(answerTo(id))])) as [Msg, Msg];
    expect(here).toMatchObject({ author_type: 'assistant', stopped: true, reply_to: id });
    expect(there).toEqual(here);
    expect(here.raw_text.length).toBeGreaterThan(0);
    expect(SLOW.startsWith(here.raw_text)).toBe(true);
    expect(here.raw_text.length).toBeLessThan(SLOW.length);
    // The model's answer would have taken two seconds more: the request was cut off.
    expect(fake.timings[request]?.finishedAt).toBe(0);

    // Stored so: a reload shows it stopped.
    const stored = (await historyOf(browser)).find((m) => m.message_id === here.message_id);
    expect(stored).toMatchObject({ raw_text: here.raw_text, stopped: true, reply_to: id });
    // The next message is answered as usual (nothing is left stuck), in full.
    const next = await ask(tab, 'And now?');
    const nextAnswer = await tab.next(answerTo(next));
    expect(nextAnswer).toMatchObject({ raw_text: 'You said: And now?' });
    expect(nextAnswer).not.toHaveProperty('stopped');
  });

  it('without reply_to stops the answer being written; before its first word it keeps an empty stopped answer', async () => {
    // The model never starts answering.
    fake.onChat(() => ({ stall: true }));
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'Think hard');
    // The model has the request: stopping now ends it before anything was written.
    while (!fake.requests.some((r) => r.stream && r.messages.at(-1)?.content === 'Think hard'))
      await new Promise((r) => setTimeout(r, 10));
    tab.send({ message_type: 'stop' });
    expect(await tab.next(answerTo(id))).toMatchObject({ raw_text: '', stopped: true });
    expect(tab.events.filter(type('stream'))).toEqual([]);
  });

  it('pressed before the answer began stops that answer when it begins, and only that one', async () => {
    // The model never starts answering.
    fake.onChat(() => ({ stall: true }));
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const first = await ask(tab, 'Think about it');
    while (!fake.requests.some((r) => r.stream && r.messages.at(-1)?.content === 'Think about it'))
      await new Promise((r) => setTimeout(r, 10));
    // The second waits behind the first: its Stop comes before its answer has begun.
    const second = await ask(tab, 'And this too');
    tab.send({ message_type: 'stop', reply_to: second });
    tab.send({ message_type: 'stop', reply_to: first });
    expect(await tab.next(answerTo(first))).toMatchObject({ raw_text: '', stopped: true });
    expect(await tab.next(answerTo(second))).toMatchObject({ raw_text: '', stopped: true });
    // It was used up: the next answer is written whole.
    fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3 }));
    const next = await ask(tab, 'And now?');
    const answer = await tab.next(answerTo(next));
    expect(answer).toMatchObject({ raw_text: 'You said: And now?' });
    expect(answer).not.toHaveProperty('stopped');
  });

  it('sent just before the tab goes (a page change) still stops the answer; the message is kept', async () => {
    fake.onChat(() => ({ stall: true }));
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    tab.say('Before I go');
    tab.send({ message_type: 'stop' });
    tab.ws.close();
    const human = await waitFor('the message in the history', async () =>
      (await historyOf(browser)).find((m) => m.raw_text === 'Before I go'),
    );
    const answer = await waitFor('its stopped answer in the history', async () =>
      (await historyOf(browser)).find((m) => m.reply_to === human.message_id && m.author_type === 'assistant'),
    );
    expect(answer).toMatchObject({ raw_text: '', stopped: true });
  });

  it("is harmless for an answer that already ended, another user's answer, or none at all", async () => {
    const { browser } = await signedInUser(t);
    const stranger = await signedInUser(t);
    const tab = await chatting(browser);
    const theirs = await chatting(stranger.browser);
    const done = await ask(tab, 'Quick one');
    const answer = (await tab.next(answerTo(done))) as Msg;
    tab.send({ message_type: 'stop', reply_to: done });
    tab.send({ message_type: 'stop' });

    const id = await ask(tab, 'A slow question');
    await tab.next(streamOf(id));
    // Another user names this answer, or stops "theirs": nothing happens to it.
    theirs.send({ message_type: 'stop', reply_to: id });
    theirs.send({ message_type: 'stop' });
    const full = (await tab.next(answerTo(id), 10_000)) as Msg;
    expect(full.raw_text).toBe(SLOW);
    expect(full).not.toHaveProperty('stopped');
    expect((await historyOf(browser)).find((m) => m.message_id === answer.message_id)).not.toHaveProperty('stopped');
    // No error for anyone.
    expect([...tab.events, ...theirs.events].filter(type('error'))).toEqual([]);

    tab.send({ message_type: 'stop', reply_to: 'mine' });
    expect(await tab.next(type('error'))).toMatchObject({ code: 'invalid_message' });
  });
});

describe('Regenerate and Retry', () => {
  it('answers the same question again after the others, keeping the earlier answer', async () => {
    const { browser } = await signedInUser(t);
    const [tab, other] = await Promise.all([chatting(browser), chatting(browser)]);
    const first = await ask(tab, 'Name a colour');
    await Promise.all([tab.next(answerTo(first)), other.next(answerTo(first))]);
    fake.onChat(() => ({ text: 'Teal, this time.', chunks: 2 }));
    const before = fake.requests.length;
    other.events.length = 0;
    tab.send({ message_type: 'regenerate', reply_to: first });
    const again = (await other.next(answerTo(first))) as Msg;
    expect(again).toMatchObject({ raw_text: 'Teal, this time.', author_type: 'assistant' });
    // No new human message: the question is answered again, seeing what came before it only.
    expect(other.events.filter((e) => e.message_type === 'message')).toEqual([]);
    const prompt = fake.requests.slice(before).find((r) => r.stream)?.messages ?? [];
    expect(prompt.at(-1)).toEqual({ role: 'user', content: 'Name a colour' });
    expect(prompt.filter((m) => m.role === 'assistant')).toEqual([]);
    const stored = await historyOf(browser);
    expect(stored.map((m) => [m.author_type, m.raw_text, m.reply_to])).toEqual([
      ['human', 'Name a colour', undefined],
      ['assistant', 'You said: Name a colour', first],
      ['assistant', 'Teal, this time.', first],
    ]);
  });

  it('waits its turn behind an answer being written', async () => {
    let down = true;
    fake.onChat((req) => {
      const text = String(req.messages.at(-1)?.content);
      if (/slow/i.test(text)) return { text: SLOW, chunks: 14, delayMs: 150 };
      return down ? { status: 500, body: '{"error":{"message":"overloaded"}}' } : { text: `You said: ${text}` };
    });
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const first = await ask(tab, 'Hello');
    expect(await tab.next(type('system_message'))).toMatchObject({ raw_text: UNAVAILABLE, reply_to: first });
    down = false;
    // Retry on that note while a later question is being answered.
    const slow = await ask(tab, 'A slow question');
    await tab.next(streamOf(slow));
    tab.send({ message_type: 'regenerate', reply_to: first });
    expect(await tab.next(type('queued'))).toMatchObject({ message_id: first, ahead: 1 });
    const order: number[] = [];
    for (let i = 0; i < 2; i++) {
      const m = await tab.next((e) => e.message_type === 'markdown', 10_000);
      if (m.message_type === 'markdown') order.push(m.reply_to ?? 0);
    }
    expect(order).toEqual([slow, first]);
  });

  it('retries a failed answer, also from a tab opened after the failure', async () => {
    fake.onChat(() => ({ status: 500, body: '{"error":{"message":"overloaded"}}' }));
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'Plan my Sunday');
    expect(await tab.next(type('system_message'))).toMatchObject({ raw_text: UNAVAILABLE, reply_to: id });
    tab.ws.close();
    fake.onChat(() => ({ text: 'Brunch, then a walk.', chunks: 2 }));
    const later = await chatting(browser);
    later.send({ message_type: 'regenerate', reply_to: id });
    expect(await later.next(answerTo(id))).toMatchObject({ raw_text: 'Brunch, then a walk.' });
    expect((await historyOf(browser)).filter((m) => m.author_type === 'human')).toHaveLength(1);
  });

  it('does not answer again a question answered since, the conversation having gone on (a stale Retry)', async () => {
    fake.onChat(() => ({ status: 500, body: '{"error":{"message":"overloaded"}}' }));
    const { browser } = await signedInUser(t);
    const [tab, other] = await Promise.all([chatting(browser), chatting(browser)]);
    const id = await ask(tab, 'Plan my Sunday');
    await tab.next(type('system_message'));
    fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
    // Retried in the other tab, and the conversation goes on.
    other.send({ message_type: 'regenerate', reply_to: id });
    await tab.next(answerTo(id));
    const next = await ask(tab, 'Thanks');
    await tab.next(answerTo(next));
    const before = fake.requests.length;
    tab.send({ message_type: 'regenerate', reply_to: id });
    expect(await tab.next(type('error'))).toMatchObject({ code: 'already_answered', raw_text: ANSWERED_SINCE });
    expect(fake.requests.slice(before).filter((r) => r.stream)).toEqual([]);
    expect((await historyOf(browser)).filter((m) => m.reply_to === id).map((m) => m.author_type)).toEqual([
      'system',
      'assistant',
    ]);
    // The latest answer can still be answered again, and so can its question once more after that.
    tab.send({ message_type: 'regenerate', reply_to: next });
    await tab.next(answerTo(next));
    tab.send({ message_type: 'regenerate', reply_to: next });
    await tab.next(answerTo(next));
    expect((await historyOf(browser)).filter((m) => m.reply_to === next)).toHaveLength(3);
  });

  it('judges a Regenerate when it is sent: a message sent right after it does not make it stale', async () => {
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'Name a colour');
    await tab.next(answerTo(id));
    fake.onChat((req) => ({ text: `Again: ${req.messages.at(-1)?.content}`, chunks: 4, delayMs: 50 }));
    tab.send({ message_type: 'regenerate', reply_to: id });
    const next = await ask(tab, 'And a number?');
    expect(await tab.next(answerTo(id), 10_000)).toMatchObject({ raw_text: 'Again: Name a colour' });
    expect(await tab.next(answerTo(next), 10_000)).toMatchObject({ raw_text: 'Again: And a number?' });
    expect(tab.events.filter(type('error'))).toEqual([]);
  });

  it("refuses another user's message, or one that is not a question, and answers nothing", async () => {
    const { browser } = await signedInUser(t);
    const stranger = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'Mine');
    const answer = (await tab.next(answerTo(id))) as Msg;
    const theirs = await chatting(stranger.browser);
    const before = fake.requests.length;
    theirs.send({ message_type: 'regenerate', reply_to: id });
    expect(await theirs.next(type('error'))).toMatchObject({ code: 'invalid_message' });
    tab.send({ message_type: 'regenerate', reply_to: answer.message_id });
    expect(await tab.next(type('error'))).toMatchObject({ code: 'invalid_message' });
    expect(fake.requests.slice(before).filter((r) => r.stream)).toEqual([]);
    expect(await historyOf(stranger.browser)).toEqual([]);
  });
});

describe('a tab that connects while an answer is being written', () => {
  it('gets the text so far with its history, then the rest: never an answer starting mid-sentence', async () => {
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'A slow question');
    await tab.next(streamOf(id));
    await tab.next(streamOf(id));

    const late = await connect(wsBase, browser);
    const history = await late.next(type('history'));
    if (history.message_type !== 'history') throw new Error('no history');
    expect(history.streams).toHaveLength(1);
    const live = history.streams?.[0];
    expect(live).toMatchObject({ reply_to: id, stream_id: expect.any(String) });
    expect(live?.raw_text.length).toBeGreaterThan(0);
    expect(SLOW.startsWith(live?.raw_text ?? '-')).toBe(true);
    const final = (await late.next(answerTo(id), 10_000)) as Msg;
    const rest = late.events
      .map((e) => (e.message_type === 'stream' && e.stream_id === live?.stream_id ? e.raw_text : ''))
      .join('');
    expect(`${live?.raw_text}${rest}`).toBe(final.raw_text);
    expect(final.stream_id).toBe(live?.stream_id);

    // Once it ended, a new tab has no live answer.
    const after = await connect(wsBase, browser);
    const next = await after.next(type('history'));
    expect(next).not.toHaveProperty('streams');
  });
});

describe('a tab that connects before an answer has begun', () => {
  it('is told which questions are being answered or wait their turn, until their answers begin', async () => {
    fake.onChat((req) =>
      /think/i.test(String(req.messages.at(-1)?.content)) ? { stall: true } : { text: 'Later.', chunks: 1 },
    );
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const thinking = await ask(tab, 'Think hard');
    const next = await ask(tab, 'And then?');
    await tab.next(type('queued'));
    const late = await connect(wsBase, browser);
    expect(await late.next(type('history'))).toMatchObject({ answering: [thinking, next] });
    // Stopped: the first has its answer, the second's is written.
    tab.send({ message_type: 'stop', reply_to: thinking });
    await tab.next(answerTo(next));
    const after = await connect(wsBase, browser);
    expect(await after.next(type('history'))).not.toHaveProperty('answering');
  });

  it('is told of a question being answered again (Regenerate, Retry) until its answer ends', async () => {
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'Name a colour');
    await tab.next(answerTo(id));
    // The second answer never gets its first word.
    fake.onChat(() => ({ stall: true }));
    const before = fake.requests.length;
    tab.send({ message_type: 'regenerate', reply_to: id });
    while (!fake.requests.slice(before).some((r) => r.stream)) await new Promise((r) => setTimeout(r, 10));
    const late = await connect(wsBase, browser);
    expect(await late.next(type('history'))).toMatchObject({ answering: [id] });
    // Stopped before its first word: it has its (empty) answer, and nothing is being answered.
    tab.send({ message_type: 'stop', reply_to: id });
    expect(await tab.next(answerTo(id))).toMatchObject({ raw_text: '', stopped: true });
    const after = await connect(wsBase, browser);
    expect(await after.next(type('history'))).not.toHaveProperty('answering');
  });

  it('is not told of a question that could not be answered again', async () => {
    const { browser } = await signedInUser(t);
    const tab = await chatting(browser);
    const id = await ask(tab, 'Mine');
    const answer = (await tab.next(answerTo(id))) as Msg;
    // An answer is not a question.
    tab.send({ message_type: 'regenerate', reply_to: answer.message_id });
    expect(await tab.next(type('error'))).toMatchObject({ code: 'invalid_message' });
    const after = await connect(wsBase, browser);
    expect(await after.next(type('history'))).not.toHaveProperty('answering');
  });
});

const onPostgres = inject('testDb').kind === 'postgres';

describe.runIf(onPostgres)('across two instances', () => {
  const answersAB: Parameters<FakeOpenAI['onChat']>[0] = (req) =>
    /slow/i.test(String(req.messages.at(-1)?.content))
      ? { text: SLOW, chunks: 14, delayMs: 150 }
      : { text: `You said: ${req.messages.at(-1)?.content}` };
  let fakeAB: FakeOpenAI;
  let two: TwoInstances;
  let a: TestApp;
  let b: TestApp;
  let wsA = '';
  let wsB = '';
  beforeAll(async () => {
    fakeAB = await startFakeOpenAI();
    fakeAB.onChat(answersAB);
    fakeAB.onJson(() => ({ text: '{"operations":[]}' }));
    const env = {
      LLM_BASE_URL: fakeAB.baseUrl,
      LLM_MODEL: 'fake-model',
      LLM_MAX_RETRIES: '0',
      REALTIME_BUS: 'postgres',
    };
    two = await twoInstances(env);
    ({ a, b } = two);
    wsA = (await a.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
    wsB = (await b.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
  });
  afterAll(async () => {
    await two?.close();
    await fakeAB?.close();
  });

  it('a tab on B joins an answer written on A with its text so far, and stops it', async () => {
    const { browser } = await signedInUser(a);
    const tabA = await chatting(browser, wsA);
    const id = await ask(tabA, 'A slow question');
    await tabA.next(streamOf(id));
    await tabA.next(streamOf(id));

    const tabB = await connect(wsB, sameBrowserOn(b.app, browser));
    const history = await tabB.next(type('history'));
    if (history.message_type !== 'history') throw new Error('no history');
    const live = history.streams?.[0];
    expect(live).toMatchObject({ reply_to: id });
    expect(SLOW.startsWith(live?.raw_text ?? '-') && (live?.raw_text.length ?? 0) > 0).toBe(true);

    tabB.send({ message_type: 'stop', reply_to: id });
    const [onA, onB] = (await Promise.all([tabA.next(answerTo(id)), tabB.next(answerTo(id))])) as [Msg, Msg];
    expect(onA).toMatchObject({ stopped: true });
    expect(onB).toEqual(onA);
    expect(onA.raw_text.length).toBeLessThan(SLOW.length);
    const rest = tabB.events
      .map((e) => (e.message_type === 'stream' && e.stream_id === live?.stream_id ? e.raw_text : ''))
      .join('');
    // What B showed before the stop is where the stopped answer begins.
    expect(onB.raw_text.startsWith(`${live?.raw_text}`)).toBe(true);
    expect(`${live?.raw_text}${rest}`.length).toBeLessThanOrEqual(onB.raw_text.length);
  });

  it('a tab on B is told of a question being answered again on A before its answer begins', async () => {
    const { browser } = await signedInUser(a);
    const onB = sameBrowserOn(b.app, browser);
    const tabA = await chatting(browser, wsA);
    const tabB = await chatting(onB, wsB);
    const id = await ask(tabA, 'Name a colour');
    await tabA.next(answerTo(id));
    const before = fakeAB.requests.length;
    // The second answer to it never gets its first word.
    fakeAB.onChat((req) => (req.messages.at(-1)?.content === 'Name a colour' ? { stall: true } : answersAB(req)));
    try {
      tabA.send({ message_type: 'regenerate', reply_to: id });
      // A question asked after it: once its echo is on B, so is everything A sent before it.
      const next = await ask(tabA, 'And then?');
      await tabB.next(echo('And then?'));
      const late = await connect(wsB, onB);
      expect(await late.next(type('history'))).toMatchObject({ answering: [id, next] });
      while (!fakeAB.requests.slice(before).some((r) => r.stream)) await new Promise((r) => setTimeout(r, 10));
      tabB.send({ message_type: 'stop', reply_to: id });
      await Promise.all([tabA.next(answerTo(id)), tabA.next(answerTo(next), 10_000)]);
    } finally {
      fakeAB.onChat(answersAB);
    }
  });

  it('a stop that arrives late (a bus replay after a reconnect) does not end an answer begun after it was asked', async () => {
    const { browser, userId } = await signedInUser(a);
    const tabA = await chatting(browser, wsA);
    const id = await ask(tabA, 'A slow question');
    await tabA.next(streamOf(id));
    // The stop B would have sent a minute ago, without a target, delivered only now.
    const stale = { type: 'chat-stop', userId, channel: 'chat', at: Date.now() - 60_000 };
    const [row] = await two.database.db.query<{ id: string }>(
      `INSERT INTO realtime_events (origin, payload) VALUES ('elsewhere', $1::jsonb) RETURNING id::text AS id`,
      [JSON.stringify(stale)],
    );
    await two.database.db.query(`SELECT pg_notify('daybook_realtime', $1)`, [`elsewhere:${row?.id}`]);
    const answer = (await tabA.next(answerTo(id))) as Msg;
    expect(answer.stopped).toBeUndefined();
    expect(answer.raw_text).toBe(SLOW);
  });
});
