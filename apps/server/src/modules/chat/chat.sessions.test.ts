// A chat socket lives as long as its session and its connection: signing out, a password change or
// reset, expiry and deactivation close it with 1008; a connection that stops answering pings is
// dropped and frees its slot; malformed frames are the client's fault in the logs.
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { FakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { PASSWORD, randomIp, signedInUser } from '../../test/factories.ts';
import { Browser, type TestApp, waitFor } from '../../test/test-app.ts';
import { MAX_SOCKETS_PER_USER } from './chat.routes.ts';
import { type ChatApp, type Client, captureLogs, connect, startChatApp, type } from './chat.test-client.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
let fake: FakeOpenAI;
let wsBase = '';
let offsetMs = 0;
let logs: ReturnType<typeof captureLogs>;

let chatApp: ChatApp;

beforeAll(async () => {
  chatApp = await startChatApp(
    { CHAT_PING_INTERVAL_MS: '150', LOG_LEVEL: 'debug', LOG_FORMAT: 'json' },
    { clock: { now: () => new Date(Date.now() + offsetMs) } },
  );
  ({ t, fake, wsBase } = chatApp);
  logs = captureLogs(t.app);
});
afterAll(() => chatApp.close());
beforeEach(() => {
  offsetMs = 0;
  fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
  fake.onJson(() => ({ text: '{"operations":[]}' }));
});

async function chatting(browser: Browser, path = '/ws/chat/') {
  const c = await connect(wsBase, browser, path);
  await c.next(type('history'));
  return c;
}

/** The close code, or 'open' if the socket is still open after `ms`. */
async function closeCode(c: Client, ms = 3000) {
  const timeout = new Promise<'open'>((r) => setTimeout(() => r('open'), ms));
  const result = await Promise.race([c.closed, timeout]);
  return result === 'open' ? result : result.code;
}

/** Still open once it has answered a ping: the server checked its session for that frame and found it live. */
async function answersPing(c: Client) {
  c.send({ message_type: 'ping' });
  await c.next(type('pong'));
  return c.ws.readyState === c.ws.OPEN;
}

/** Resolves once the server has pinged `c` `count` more times (the client answers each). */
function pingedTimes(c: Client, count: number) {
  return new Promise<void>((resolve) => {
    let seen = 0;
    c.ws.on('ping', () => {
      if (++seen === count) resolve();
    });
  });
}

async function secondDevice(email: string, password = PASSWORD) {
  const browser = new Browser(t.app, { ip: randomIp() });
  const login = await browser.post(`${API}/auth/login`, { email, password });
  expect(login.statusCode).toBe(200);
  return browser;
}

const humanMessages = (userId: number) =>
  t.database.db.prisma.chatMessage.findMany({ where: { userId, authorType: 'human' } });

describe('a socket and its session', () => {
  it("closes with 1008 when its session signs out, and gets none of the account's messages after", async () => {
    const { browser, email } = await signedInUser(t);
    const laptop = await secondDevice(email);
    const chat = await chatting(browser);
    const onboarding = await chatting(browser, '/ws/onboarding/');
    const other = await chatting(laptop);

    expect((await browser.delete(`${API}/auth/session`)).statusCode).toBe(401);
    expect(await closeCode(chat)).toBe(1008);
    expect(await closeCode(onboarding)).toBe(1008);
    // The account's other session keeps its socket, and its messages reach nobody signed out.
    other.say('still here');
    await other.next(type('markdown'));
    expect(chat.events.filter((e) => e.message_type !== 'history')).toEqual([]);
    expect(await answersPing(other)).toBe(true);
    other.ws.close();
  });

  it('closes every other session on a password change; this device carries on with a new socket', async () => {
    const { browser, email } = await signedInUser(t);
    const laptop = await secondDevice(email);
    const here = await chatting(browser);
    const there = await chatting(laptop);
    const changed = await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'a brand new password 7',
    });
    expect(changed.statusCode).toBe(200);
    expect(await closeCode(there)).toBe(1008);
    // This device got a new session key: its old socket ends too, and a new one works.
    expect(await closeCode(here)).toBe(1008);
    const again = await chatting(browser);
    again.say('new password, same chat');
    await again.next(type('markdown'));
    again.ws.close();
  });

  it('closes every socket of the account on a password reset', async () => {
    const { browser, email, userId } = await signedInUser(t);
    const chat = await chatting(browser);
    const before = t.smtp.messages.length;
    await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email });
    const mail = await t.smtp.waitFor(email, { subject: /Reset your Daybook password/, after: before });
    const key = decodeURIComponent(
      mail.links.find((l) => l.includes('/auth/reset-password/'))?.split('/auth/reset-password/')[1] ?? '',
    );
    const reset = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/reset`, {
      key,
      password: 'a reset password 42',
    });
    expect(reset.statusCode).toBe(401);
    expect(await closeCode(chat)).toBe(1008);
    expect(await humanMessages(userId)).toEqual([]);
  });

  it('closes with 1008 once the session has expired, and stores nothing sent after', async () => {
    const { browser, userId } = await signedInUser(t);
    const chat = await chatting(browser);
    offsetMs = 15 * 24 * 3600 * 1000;
    chat.say('am I still signed in?');
    expect(await closeCode(chat)).toBe(1008);
    expect(await humanMessages(userId)).toEqual([]);
  });

  it('closes with 1008 when the account is deactivated', async () => {
    const { browser, userId } = await signedInUser(t);
    const chat = await chatting(browser);
    await t.database.db.prisma.user.update({ where: { id: userId }, data: { isActive: false } });
    expect(await closeCode(chat)).toBe(1008);
  });
});

// Frames ask the session cache when it is on (PostgreSQL): its copy must end with the session.
describe.runIf(inject('testDb').kind === 'postgres')('a socket and its session, with the session cache on', () => {
  let cached: ChatApp;
  beforeAll(async () => {
    cached = await startChatApp(
      { SESSION_CACHE_SECONDS: '60', CHAT_PING_INTERVAL_MS: '60000' },
      { clock: { now: () => new Date(Date.now() + offsetMs) } },
    );
    cached.fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
    cached.fake.onJson(() => ({ text: '{"operations":[]}' }));
  });
  afterAll(() => cached.close());

  /** A socket whose session this instance has cached: a first message was answered. */
  async function warm() {
    const { browser, userId } = await signedInUser(cached.t);
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    // A read answers from the cached copy while there is one: 401 once the copy is gone.
    const status = async () => (await cached.t.app.inject({ url: '/api/users/me/', headers: { cookie } })).statusCode;
    const c = await connect(cached.wsBase, browser, '/ws/chat/');
    await c.next(type('history'));
    c.say('first');
    await c.next(type('markdown'));
    const human = () => cached.t.database.db.prisma.chatMessage.count({ where: { userId, authorType: 'human' } });
    expect(await human()).toBe(1);
    expect(await status()).toBe(200);
    return { c, userId, human, status };
  }

  // Written straight to the database, as another instance's sign-out or deactivation would be.
  it.each([
    ['another process deleted the session', 'DELETE FROM sessions WHERE user_id = $1'],
    ['the account is deactivated elsewhere', 'UPDATE users SET is_active = false WHERE id = $1'],
  ])('refuses the next frame once %s, and stores nothing', async (_what, sql) => {
    const { c, userId, human, status } = await warm();
    await cached.t.database.db.query(sql, [userId]);
    // The notice reaches this instance's copy within milliseconds; a frame after it must not pass.
    await waitFor(
      "the database's notice to end this instance's copy of the session",
      async () => (await status()) === 401,
    );
    c.say('after the change');
    expect(await closeCode(c)).toBe(1008);
    expect(await human()).toBe(1);
  });

  it('refuses the next frame once the cached session has expired, without any notice', async () => {
    const { c, human } = await warm();
    offsetMs = 15 * 24 * 3600 * 1000;
    c.say('am I still signed in?');
    expect(await closeCode(c)).toBe(1008);
    expect(await human()).toBe(1);
  });
});

describe('pings', () => {
  it('drops connections that stop answering, which frees their slots; live ones stay', async () => {
    const { browser } = await signedInUser(t);
    const dead = await Promise.all(
      Array.from({ length: MAX_SOCKETS_PER_USER }, () => connect(wsBase, browser, '/ws/chat/', { autoPong: false })),
    );
    await Promise.all(dead.map((c) => c.next(type('history'))));
    for (const c of dead) expect(await closeCode(c)).toBe(1006);
    const alive = await chatting(browser);
    // A ping comes only after the one before was answered (else the socket is dropped): three more
    // pings mean it passed the check twice.
    await pingedTimes(alive, 3);
    expect(await answersPing(alive)).toBe(true);
    alive.ws.close();
  });
});

describe('malformed frames', () => {
  it('are logged as a warning without their content, and close that socket', async () => {
    const { browser } = await signedInUser(t);
    const c = await chatting(browser);
    const from = logs.length;
    // A masked text frame whose payload is not UTF-8 (0xff), around words that must stay private.
    const payload = Buffer.concat([Buffer.from('my secret diary '), Buffer.from([0xff, 0xfe])]);
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
    const raw = (c.ws as unknown as { _socket: { write(b: Buffer): void } })._socket;
    raw.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
    expect(await closeCode(c)).not.toBe('open');
    const until = Date.now() + 2000;
    while (!logs.slice(from).some((l) => l.msg === 'malformed websocket frame') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    const lines = logs.slice(from);
    expect(lines.find((l) => l.msg === 'malformed websocket frame')).toMatchObject({ level: 40 });
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain('secret diary');
  });
});
