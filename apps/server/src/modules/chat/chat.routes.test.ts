// The chat over real WebSockets against the real server, with an OpenAI-compatible fake model.
import { type TServerEvent, ZChatHistoryPage, ZServerEvent } from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { FakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, createTestApp, type TestApp, waitFor } from '../../test/test-app.ts';
import { UNAVAILABLE } from './chat.service.ts';
import { type ChatApp, startChatApp } from './chat.test-client.ts';

let t: TestApp;
let fake: FakeOpenAI;
let wsBase = '';

let chatApp: ChatApp;

beforeAll(async () => {
  chatApp = await startChatApp({ LLM_TIMEOUT_MS: '1500' });
  ({ t, fake, wsBase } = chatApp);
});
afterAll(() => chatApp.close());
beforeEach(() => {
  fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3 }));
  fake.onJson(() => ({ text: '{"operations":[]}' }));
});

interface Client {
  ws: WebSocket;
  events: TServerEvent[];
  next(match: (e: TServerEvent) => boolean, timeoutMs?: number): Promise<TServerEvent>;
  send(body: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

function connect(
  browser: Browser | null,
  path = '/ws/chat/',
  origin = 'http://daybook.test',
  base = wsBase,
): Promise<Client> {
  const cookie = browser ? [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  const ws = new WebSocket(`${base}${path}`, { headers: { cookie, origin } });
  const events: TServerEvent[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    events.push(ZServerEvent.parse(JSON.parse(data.toString())));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const client: Client = {
    ws,
    events,
    closed,
    send: (body) => ws.send(typeof body === 'string' ? body : JSON.stringify(body)),
    async next(match, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      let seen = 0;
      for (;;) {
        const found = events.slice(seen).find(match);
        if (found) {
          events.splice(events.indexOf(found), 1);
          return found;
        }
        seen = 0;
        if (Date.now() > until) throw new Error(`no matching event; got ${JSON.stringify(events)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
  };
  return new Promise((resolve) => {
    ws.on('open', () => resolve(client));
    ws.on('unexpected-response', () => resolve(client));
    ws.on('close', () => resolve(client));
  });
}

const say = (text: string) => ({
  author_type: 'human',
  message_type: 'message',
  raw_text: text,
  timestamp: new Date().toISOString(),
});
const type = (t: string) => (e: TServerEvent) => e.message_type === t;

/**
 * A ping's pong on `c`: frames reach a socket in the order the server sends them, so whatever the
 * server sent this socket before the ping has arrived.
 */
async function pong(c: Client) {
  c.send({ message_type: 'ping' });
  await c.next(type('pong'));
}

describe('connecting', () => {
  it('closes with 1008 without a session, or from a foreign origin', async () => {
    expect(await (await connect(null)).closed).toMatchObject({ code: 1008, reason: 'Authentication required' });
    const { browser } = await signedInUser(t);
    expect(await (await connect(browser, '/ws/chat/', 'https://evil.example')).closed).toMatchObject({ code: 1008 });
  });

  it('sends the recent history first', async () => {
    const { browser } = await signedInUser(t);
    const first = await connect(browser);
    const empty = await first.next(type('history'));
    expect(empty).toEqual({ message_type: 'history', messages: [], has_more: false });
    first.send(say('hello'));
    await first.next((e) => e.message_type === 'markdown');
    first.ws.close();

    const again = await connect(browser);
    const history = await again.next(type('history'));
    expect(history.message_type === 'history' && history.messages.map((m) => [m.author_type, m.raw_text])).toEqual([
      ['human', 'hello'],
      ['assistant', 'You said: hello'],
    ]);
    again.ws.close();
  });
});

describe('a turn', () => {
  it('stores and echoes the human message with an id, streams the reply, and ends with markdown', async () => {
    // The model sends its reply in three pieces, some time apart.
    fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}`, chunks: 3, delayMs: 30 }));
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    c.send(say('  What is on today?  '));
    const echo = await c.next((e) => e.message_type === 'message');
    expect(echo).toMatchObject({
      author_type: 'human',
      raw_text: 'What is on today?',
      message_id: expect.any(Number),
      timestamp: expect.any(String),
    });
    const deltas: string[] = [];
    let streamId = '';
    for (let i = 0; i < 3; i++) {
      const part = await c.next(type('stream'));
      if (part.message_type === 'stream') {
        deltas.push(part.raw_text);
        streamId = part.stream_id;
      }
    }
    const final = await c.next(type('markdown'));
    expect(final).toMatchObject({
      author_type: 'assistant',
      raw_text: 'You said: What is on today?',
      stream_id: streamId,
      message_id: expect.any(Number),
    });
    expect(deltas.join('')).toBe('You said: What is on today?');
    c.ws.close();
  });

  it('sends pieces the model delivers together as one stream frame', async () => {
    fake.onChat(() => ({ text: 'One two three four five six', chunks: 6 }));
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    c.send(say('Count to six'));
    await c.next((e) => e.message_type === 'message');
    const deltas: string[] = [];
    for (;;) {
      const event = await c.next((e) => e.message_type === 'stream' || e.message_type === 'markdown');
      if (event.message_type !== 'stream') break;
      deltas.push(event.raw_text);
    }
    expect(deltas.join('')).toBe('One two three four five six');
    expect(deltas.length).toBeLessThan(6);
    c.ws.close();
  });

  it("sends every message to all of the user's open tabs, and to nobody else", async () => {
    const { browser } = await signedInUser(t);
    const other = await signedInUser(t);
    const [a, b, stranger] = await Promise.all([connect(browser), connect(browser), connect(other.browser)]);
    for (const c of [a, b, stranger]) await c.next(type('history'));
    a.send(say('from tab A'));
    await b.next((e) => e.message_type === 'message' && e.raw_text === 'from tab A');
    await b.next(type('markdown'));
    await a.next(type('markdown'));
    // The answer is out to the user's tabs; anything sent to the stranger with it arrives before this.
    await pong(stranger);
    expect(stranger.events).toEqual([]);
    for (const c of [a, b, stranger]) c.ws.close();
  });

  it('stores a message resent with the same client_id once, on a new connection too', async () => {
    const { browser } = await signedInUser(t);
    const first = await connect(browser);
    await first.next(type('history'));
    first.send({ ...say('did this arrive?'), client_id: 'c-1' });
    const stored = await first.next(type('message'));
    await first.next(type('markdown'));
    first.ws.close();
    // The client never saw the echo (say the connection dropped) and resends after reconnecting:
    // it gets the echo of the stored message, and no second reply.
    const second = await connect(browser);
    await second.next(type('history'));
    second.send({ ...say('did this arrive?'), client_id: 'c-1' });
    expect(await second.next(type('message'))).toEqual(stored);
    second.send({ ...say('did this arrive?'), client_id: 'c-2' });
    const repeated = await second.next(type('message'));
    expect(repeated).toMatchObject({ raw_text: 'did this arrive?' });
    expect(repeated).not.toMatchObject({ message_id: (stored as { message_id: number }).message_id });
    // Messages are answered one at a time, in order: a second answer to the resend would come
    // before the answer to the message sent after it.
    const repeatedId = (repeated as { message_id: number }).message_id;
    await second.next((e) => e.message_type === 'markdown' && e.reply_to === repeatedId);
    expect(second.events.filter((e) => e.message_type === 'message' || e.message_type === 'markdown')).toEqual([]);
    const history = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/')).json());
    // The same text with a new client_id is a new message: people do repeat themselves.
    expect(history.results.filter((m) => m.author_type === 'human').map((m) => m.raw_text)).toEqual([
      'did this arrive?',
      'did this arrive?',
    ]);
    const other = await signedInUser(t);
    const stranger = await connect(other.browser);
    await stranger.next(type('history'));
    stranger.send({ ...say('my own message'), client_id: 'c-1' });
    await stranger.next((e) => e.message_type === 'message' && e.raw_text === 'my own message');
    for (const c of [second, stranger]) c.ws.close();
  });

  it('answers a model failure with a system message and keeps the human message', async () => {
    fake.onChat(() => ({ status: 500 }));
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    c.send(say('are you there?'));
    await c.next(type('message'));
    expect(await c.next(type('system_message'))).toMatchObject({ author_type: 'system', raw_text: UNAVAILABLE });
    const history = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/')).json());
    expect(history.results.map((m) => m.raw_text)).toEqual(['are you there?', UNAVAILABLE]);
    c.ws.close();
  });

  it('gives up on a model that stalls, after the timeout', async () => {
    fake.onChat(() => ({ stall: true }));
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    c.send(say('hello?'));
    expect(await c.next(type('system_message'), 8000)).toMatchObject({ raw_text: UNAVAILABLE });
    c.ws.close();
  });

  it('gives up on a model that goes quiet in the middle of its reply, keeping what it wrote', async () => {
    fake.onChat(() => ({ text: 'Let me think about that and', chunks: 3, stallAfterChunks: 1 }));
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    c.send(say('tell me a long story'));
    const part = await c.next(type('stream'));
    expect(part).toMatchObject({ raw_text: 'Let me th' });
    const question = part.message_type === 'stream' ? part.reply_to : undefined;
    // The text so far ends the stream as its answer (as Stop keeps it); the notice follows, to retry.
    expect(await c.next(type('markdown'), 8000)).toMatchObject({
      raw_text: 'Let me th',
      stream_id: part.message_type === 'stream' ? part.stream_id : 'none',
      reply_to: question,
    });
    const notice = await c.next(type('system_message'), 8000);
    expect(notice).toMatchObject({ raw_text: UNAVAILABLE, reply_to: question });
    expect(notice).not.toHaveProperty('stream_id');
    const history = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/')).json());
    expect(history.results.map((m) => m.raw_text)).toEqual(['tell me a long story', 'Let me th', UNAVAILABLE]);
    c.ws.close();
  });

  it('refuses bad frames with an error event and keeps the connection', async () => {
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    c.send('{not json');
    expect(await c.next(type('error'))).toMatchObject({ code: 'invalid_json' });
    c.send({ author_type: 'assistant', message_type: 'markdown', raw_text: 'x' });
    expect(await c.next(type('error'))).toMatchObject({ code: 'invalid_message' });
    c.send(say('   '));
    expect(await c.next(type('error'))).toMatchObject({ code: 'empty_message' });
    c.send(say('\u0000'));
    expect(await c.next(type('error'))).toMatchObject({ code: 'empty_message' });
    c.send(say('tea\u0000 time'));
    expect(await c.next(type('message'))).toMatchObject({ raw_text: 'tea time' });
    c.send(say('x'.repeat(8001)));
    expect(await c.next(type('error'))).toMatchObject({ code: 'message_too_long' });
    c.send(say('x'.repeat(8000)));
    expect(await c.next(type('message'))).toMatchObject({ author_type: 'human' });
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    c.ws.close();
  });

  it('closes with 1013 when a client floods the socket', async () => {
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    for (let i = 0; i < 25; i++) c.send('{');
    expect((await c.closed).code).toBe(1013);
  });
});

describe('connection limits', () => {
  it('turns away an eleventh socket of one user with 1013', async () => {
    const { browser } = await signedInUser(t);
    const open = await Promise.all(Array.from({ length: 10 }, () => connect(browser)));
    await Promise.all(open.map((c) => c.next(type('history'))));
    const extra = await connect(browser);
    expect(await extra.closed).toEqual({ code: 1013, reason: 'Too many connections' });
    for (const c of open) c.ws.close();
  });

  it('turns new sockets away with 1013 while the server is at capacity, and takes them again after', async () => {
    const small = await createTestApp({
      LLM_BASE_URL: fake.baseUrl,
      LLM_MODEL: 'fake-model',
      CHAT_MAX_CONNECTIONS: '2',
      // Its open sockets gauge tells when the server has let a closed socket go.
      METRICS_ENABLED: 'true',
      METRICS_TOKEN: 'metrics-token-for-the-capacity-test',
    });
    try {
      const base = (await small.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
      const [ana, ben] = await Promise.all([signedInUser(small), signedInUser(small)]);
      const first = await connect(ana.browser, '/ws/chat/', 'http://daybook.test', base);
      const second = await connect(ben.browser, '/ws/chat/', 'http://daybook.test', base);
      await Promise.all([first.next(type('history')), second.next(type('history'))]);
      const third = await connect(ben.browser, '/ws/chat/', 'http://daybook.test', base);
      expect(await third.closed).toEqual({ code: 1013, reason: 'Server busy' });
      first.ws.close();
      await first.closed;
      // The server forgets the closed socket as it closes, which may be just after the client saw it close.
      await waitFor('the server to count one open socket', async () =>
        /^daybook_chat_open_sockets 1$/m.test((await small.app.metrics?.render()) ?? ''),
      );
      const again = await connect(ben.browser, '/ws/chat/', 'http://daybook.test', base);
      expect(await again.next(type('history'))).toMatchObject({ message_type: 'history' });
      again.ws.close();
      second.ws.close();
    } finally {
      await small.close();
    }
  });
});

describe('history over HTTP', () => {
  it('pages backwards with ?before=, oldest first, and is owner-scoped', async () => {
    fake.onChat(() => ({ text: 'ok' }));
    const { browser } = await signedInUser(t);
    const c = await connect(browser);
    await c.next(type('history'));
    for (let i = 1; i <= 3; i++) {
      c.send(say(`message ${i}`));
      await c.next(type('markdown'));
    }
    c.ws.close();
    const last = ZChatHistoryPage.parse((await browser.get('/api/chat/messages/?limit=2')).json());
    expect(last.results.map((m) => m.raw_text)).toEqual(['message 3', 'ok']);
    expect(last.has_more).toBe(true);
    const before = ZChatHistoryPage.parse(
      (await browser.get(`/api/chat/messages/?limit=10&before=${last.results[0]?.message_id}`)).json(),
    );
    expect(before.results.map((m) => m.raw_text)).toEqual(['message 1', 'ok', 'message 2', 'ok']);
    expect(before.has_more).toBe(false);
    const other = await signedInUser(t);
    expect(ZChatHistoryPage.parse((await other.browser.get('/api/chat/messages/')).json()).results).toEqual([]);
    expect((await browser.get('/api/chat/messages/?limit=0')).statusCode).toBe(400);
  });

  it("gives the same messages as the socket's history, links and replies included, whatever their text", async () => {
    const { browser, userId } = await signedInUser(t);
    const texts = ['quotes " \\ and\nnew lines\t', 'emoji 🎉 ünïcödé 漢字', '</script>', 'plain'];
    const rows = await t.database.db.query<{ id: number }>(
      `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url)
       SELECT $1, 'chat', 'human', 'message', t, CASE WHEN n = 2 THEN 'https://example.org/?a="b"' END
       FROM unnest($2::text[]) WITH ORDINALITY AS x(t, n) RETURNING id`,
      [userId, texts],
    );
    await t.database.db.query(
      `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, reply_to_id)
       VALUES ($1, 'chat', 'assistant', 'markdown', '**answer**', $2)`,
      [userId, rows[0]?.id],
    );
    const c = await connect(browser);
    const history = (await c.next(type('history'))) as TServerEvent & { messages: unknown[] };
    c.ws.close();
    const res = await browser.get('/api/chat/messages/');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const page = ZChatHistoryPage.parse(res.json());
    expect(page.results).toHaveLength(5);
    expect(page.results).toEqual(history.messages);
    expect(page.results[1]).toMatchObject({ url: 'https://example.org/?a="b"' });
    expect(page.results[0]).not.toHaveProperty('url');
    expect(page.results[4]).toMatchObject({ reply_to: rows[0]?.id, raw_text: '**answer**' });
    expect(page.results[3]).not.toHaveProperty('reply_to');
  });
});

describe('the prompt', () => {
  it('holds the persona, the date, what the user said before, and relevant memories', async () => {
    const { browser } = await signedInUser(t);
    await browser.post('/api/memories/', { key: 'home city', data: 'Lives in Lisbon', memory_type: 'location' });
    await browser.post('/api/memories/', { key: 'sport', data: 'Plays padel on Thursdays', memory_type: 'activity' });
    const c = await connect(browser);
    await c.next(type('history'));
    c.send(say('Any tips for padel?'));
    await c.next(type('markdown'));
    const request = fake.requests.filter((r) => r.stream).at(-1);
    const system = (request?.messages ?? [])
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n');
    expect(request?.messages[0]?.content).toContain('You are Daybook');
    // The location memory names a city, which gives the time zone.
    expect(system).toMatch(/Current date and time for the user: .*\(Europe\/Lisbon\)/);
    expect(system).toContain('- home city: Lives in Lisbon (location)');
    expect(system).toContain('- sport: Plays padel on Thursdays (activity)');
    expect(request?.messages.at(-1)).toEqual({ role: 'user', content: 'Any tips for padel?' });
    c.ws.close();
  });
});
