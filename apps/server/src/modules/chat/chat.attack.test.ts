// Attacks on the chat over real sockets: one user's client_id must never reach another user's
// message, odd client ids and model output PostgreSQL text refuses must not fail the turn.
import type { TServerEvent } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import type { TestApp } from '../../test/test-app.ts';
import { type ChatApp, type Client, captureLogs, connect, startChatApp, type } from './chat.test-client.ts';

let chatApp: ChatApp;
let t: TestApp;
let logs: ReturnType<typeof captureLogs>;
beforeAll(async () => {
  chatApp = await startChatApp({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
  t = chatApp.t;
  chatApp.fake.onJson(() => ({ text: '{"operations":[]}' }));
  logs = captureLogs(t.app);
});
afterAll(() => chatApp.close());

async function chatting() {
  const user = await signedInUser(t);
  const socket = await connect(chatApp.wsBase, user.browser);
  await socket.next(type('history'));
  return { ...user, socket };
}

const echoOf = (text: string) => (e: TServerEvent) =>
  e.message_type === 'message' && e.author_type === 'human' && e.raw_text === text;
const answered = (c: Client) => c.next(type('markdown'));
const errorsLogged = () => logs.filter((l) => l.level >= 50).map((l) => l.msg);

describe('client ids', () => {
  it("are each user's own: the same id from another user is a new message, echoed only to them", async () => {
    chatApp.fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
    const alice = await chatting();
    const bob = await chatting();
    alice.socket.say('alice secret', 'shared-id-1');
    await alice.socket.next(echoOf('alice secret'));
    await answered(alice.socket);
    bob.socket.say('bob text', 'shared-id-1');
    const echo = await bob.socket.next(echoOf('bob text'));
    await answered(bob.socket);
    expect(JSON.stringify(bob.socket.events)).not.toContain('alice secret');
    expect(JSON.stringify(alice.socket.events)).not.toContain('bob text');
    const rows = await t.app.db.prisma.chatMessage.findMany({
      where: { userId: { in: [alice.userId, bob.userId] }, authorType: 'human' },
      select: { userId: true, rawText: true, id: true },
    });
    expect(rows.map((r) => [r.userId, r.rawText])).toEqual([
      [alice.userId, 'alice secret'],
      [bob.userId, 'bob text'],
    ]);
    expect((echo as { message_id: number }).message_id).toBe(rows[1]?.id);
    // A fresh socket of Bob's (no memory of the id on this instance's fast path for it) resends it.
    const again = await connect(chatApp.wsBase, bob.browser);
    await again.next(type('history'));
    again.say('bob text', 'shared-id-1');
    const resent = await again.next(echoOf('bob text'));
    expect((resent as { message_id: number }).message_id).toBe(rows[1]?.id);
    for (const c of [alice.socket, bob.socket, again]) c.ws.close();
  });

  it('longer than 64 characters are refused; a NUL in one is no failure', async () => {
    chatApp.fake.onChat(() => ({ text: 'Fine.' }));
    const { socket, userId } = await chatting();
    socket.say('too long an id', 'x'.repeat(65));
    expect(await socket.next(type('error'))).toMatchObject({ code: 'invalid_message' });
    logs.length = 0;
    socket.say('a NUL in the id', 'id-\u0000-nul');
    await socket.next(echoOf('a NUL in the id'));
    await answered(socket);
    expect(errorsLogged()).toEqual([]);
    // Resent: stored once.
    socket.say('a NUL in the id', 'id-\u0000-nul');
    await socket.next(echoOf('a NUL in the id'));
    // Messages are stored one after another, in the order they came: once a later one is echoed,
    // a second copy of the resent one would be stored.
    socket.say('and then this');
    await socket.next(echoOf('and then this'));
    expect(await t.app.db.prisma.chatMessage.count({ where: { userId, rawText: 'a NUL in the id' } })).toBe(1);
    socket.ws.close();
  });
});

describe('model output', () => {
  it('with a NUL character is stored and shown without it, like any answer', async () => {
    chatApp.fake.onChat(() => ({ text: 'Hello\u0000 there, friend.', chunks: 3 }));
    const { socket, userId } = await chatting();
    logs.length = 0;
    socket.say('hi');
    const answer = await answered(socket);
    expect(answer).toMatchObject({ raw_text: 'Hello there, friend.' });
    expect(errorsLogged()).toEqual([]);
    const stored = await t.app.db.prisma.chatMessage.findMany({ where: { userId, authorType: 'assistant' } });
    expect(stored.map((m) => m.rawText)).toContain('Hello there, friend.');
    socket.ws.close();
  });
});
