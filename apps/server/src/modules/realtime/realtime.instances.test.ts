// Two app instances on one PostgreSQL database with the PostgreSQL realtime bus, each listening for
// real sockets: a user's tabs on either instance see everything, sign-out on one closes sockets on
// the other, and a message resent to the other instance is stored once.
import { type TServerEvent, ZChatHistoryPage } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, sameBrowserOn, type TestApp, type TwoInstances, twoInstances } from '../../test/test-app.ts';
import { type Client, connect, type } from '../chat/chat.test-client.ts';

const API = '/_allauth/browser/v1';
const onPostgres = inject('testDb').kind === 'postgres';

let fake: FakeOpenAI;
let two: TwoInstances;
let a: TestApp;
let b: TestApp;
let wsA = '';
let wsB = '';

/** The same cookies, sent to instance B (sessions live in the shared database). */
const onB = (browser: Browser) => sameBrowserOn(b.app, browser);

async function chatting(base: string, browser: Browser) {
  const c = await connect(base, browser);
  await c.next(type('history'));
  return c;
}

/** The stored id an event carries (-1 for events without one). */
const idOf = (e: TServerEvent) => ('message_id' in e && typeof e.message_id === 'number' ? e.message_id : -1);

async function closeCode(c: Client, ms = 3000) {
  const timeout = new Promise<'open'>((r) => setTimeout(() => r('open'), ms));
  const result = await Promise.race([c.closed, timeout]);
  return result === 'open' ? result : result.code;
}

describe.runIf(onPostgres)('two instances on one database', () => {
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
    fake.onJson(() => ({ text: '{"operations":[]}' }));
    const env = { LLM_BASE_URL: fake.baseUrl, LLM_MODEL: 'fake-model', LLM_MAX_RETRIES: '0', REALTIME_BUS: 'postgres' };
    two = await twoInstances(env);
    ({ a, b } = two);
    wsA = (await a.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
    wsB = (await b.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
  });
  afterAll(async () => {
    await two?.close();
    await fake?.close();
  });

  it("sends a message from a tab on A to the user's tab on B, answer included, and to nobody else", async () => {
    const { browser } = await signedInUser(a);
    const other = await signedInUser(a);
    const tabA = await chatting(wsA, browser);
    const tabB = await chatting(wsB, onB(browser));
    const stranger = await chatting(wsB, onB(other.browser));
    tabA.say('hello from A');
    const echo = await tabB.next((e) => e.message_type === 'message' && e.raw_text === 'hello from A');
    const answerB = await tabB.next(type('markdown'));
    const answerA = await tabA.next(type('markdown'));
    expect(answerB).toEqual(answerA);
    expect(answerB).toMatchObject({ raw_text: 'You said: hello from A' });
    expect(await tabA.next(type('message'))).toEqual(echo);
    // B has delivered the answer to the user's tab; anything it sent the stranger with it arrives
    // before the pong to a ping sent now (a socket's frames keep their order).
    stranger.send({ message_type: 'ping' });
    await stranger.next(type('pong'));
    expect(stranger.events).toEqual([]);
    for (const c of [tabA, tabB, stranger]) c.ws.close();
  });

  it("closes the user's socket on B when the session signs out on A", async () => {
    const { browser } = await signedInUser(a);
    const tabB = await chatting(wsB, onB(browser));
    expect((await browser.delete(`${API}/auth/session`)).statusCode).toBe(401);
    expect(await closeCode(tabB)).toBe(1008);
  });

  it('stores a message resent to the other instance with the same client_id once', async () => {
    const { browser, userId } = await signedInUser(a);
    const tabA = await chatting(wsA, browser);
    tabA.say('did this arrive?', 'client-1');
    const stored = await tabA.next(type('message'));
    const answer = await tabA.next(type('markdown'));
    tabA.ws.close();
    // The echo never reached the tab, which reconnects through the other instance and resends.
    const tabB = await chatting(wsB, onB(browser));
    tabB.say('did this arrive?', 'client-1');
    expect(await tabB.next(type('message'))).toEqual(stored);
    // One answer at a time, in order: any answer to the resend would come before the next message's.
    tabB.say('and this one?', 'client-2');
    const next = await tabB.next((e) => e.message_type === 'message' && e.raw_text === 'and this one?');
    await tabB.next((e) => e.message_type === 'markdown' && 'reply_to' in e && e.reply_to === idOf(next));
    // The first answer may still reach B over the bus after the tab connected; no other answer does.
    const toFirst = tabB.events.filter(
      (e) => e.message_type === 'markdown' && 'reply_to' in e && e.reply_to === idOf(stored),
    );
    expect(toFirst.every((e) => idOf(e) === idOf(answer))).toBe(true);
    const answers = await a.database.db.prisma.chatMessage.count({ where: { userId, authorType: 'assistant' } });
    expect(answers).toBe(2);
    const history = ZChatHistoryPage.parse((await onB(browser).get('/api/chat/messages/')).json());
    expect(history.results.filter((m) => m.author_type === 'human').map((m) => m.raw_text)).toEqual([
      'did this arrive?',
      'and this one?',
    ]);
    const rows = await a.database.db.prisma.chatMessage.count({ where: { userId, authorType: 'human' } });
    expect(rows).toBe(2);
    tabB.ws.close();
  });
});
