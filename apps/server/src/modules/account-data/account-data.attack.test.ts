// Attacks on deleting an account: two administrators at once must not leave the others without
// one, a cross-site request deletes nothing, and deleting while the account's chat answer is still
// being written fails nothing afterwards.
import { ACCOUNT_DATA_MESSAGES } from '@daybook/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, signedInUser, uniqueEmail } from '../../test/factories.ts';
import { createTestApp, type TestApp, waitFor } from '../../test/test-app.ts';
import { LEARNING_DONE } from '../chat/chat.service.ts';
import { type ChatApp, captureLogs, connect, startChatApp, type } from '../chat/chat.test-client.ts';

describe('deleting administrators at the same moment', () => {
  // A database of its own for each: the rule counts every administrator of the installation.
  let solo: TestApp;
  beforeEach(async () => {
    solo = await createTestApp();
  });
  afterEach(() => solo.close());

  async function admin() {
    const user = await signedInUser(solo, uniqueEmail('admin'));
    await solo.app.db.prisma.user.update({ where: { id: user.userId }, data: { isAdmin: true } });
    return user;
  }

  it('keeps one active administrator while other accounts exist', async () => {
    const a = await admin();
    const b = await admin();
    await signedInUser(solo);
    const [delA, delB] = await Promise.all([
      a.browser.post('/api/users/me/delete/', { password: PASSWORD }),
      b.browser.post('/api/users/me/delete/', { password: PASSWORD }),
    ]);
    expect([delA.statusCode, delB.statusCode].sort()).toEqual([200, 409]);
    const refused = delA.statusCode === 409 ? delA : delB;
    expect(refused.json()).toEqual({ error: ACCOUNT_DATA_MESSAGES.lastAdmin, code: 'conflict' });
    expect(await solo.app.db.prisma.user.count({ where: { isAdmin: true, isActive: true } })).toBe(1);
  });

  it('keeps one when an administrator deletes their account while demoting the other', async () => {
    const a = await admin();
    const b = await admin();
    await signedInUser(solo);
    const [demote, del] = await Promise.all([
      a.browser.patch(`/api/admin/users/${b.userId}/`, { is_admin: false }),
      a.browser.post('/api/users/me/delete/', { password: PASSWORD }),
    ]);
    expect([demote.statusCode, del.statusCode]).not.toEqual([200, 200]);
    expect(await solo.app.db.prisma.user.count({ where: { isAdmin: true, isActive: true } })).toBe(1);
  });
});

describe('a cross-site delete', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('deletes nothing, even with the right password: no token, or a foreign origin', async () => {
    const user = await signedInUser(t);
    const cookie = [...user.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    for (const headers of [
      { cookie, origin: 'http://daybook.test' },
      { cookie, origin: 'https://evil.example', 'x-csrftoken': user.browser.cookies.get('csrftoken') ?? '' },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/users/me/delete/',
        payload: { password: PASSWORD },
        headers,
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('csrf_failed');
    }
    expect(await t.app.db.prisma.user.count({ where: { id: user.userId } })).toBe(1);
  });
});

describe('deleting while an answer is being written', () => {
  let chatApp: ChatApp;
  let logs: ReturnType<typeof captureLogs>;
  beforeEach(async () => {
    chatApp = await startChatApp({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json' });
    logs = captureLogs(chatApp.t.app);
  });
  afterEach(() => chatApp.close());

  it('ends the answer quietly: no error logged, and the app serves the others as before', async () => {
    const { t, fake, wsBase } = chatApp;
    // A slow model: the account is gone before its answer is stored.
    fake.onChat(() => ({ text: 'A long and careful answer to your question.', chunks: 6, delayMs: 150 }));
    fake.onJson(() => ({ text: '{"operations":[{"op":"add","key":"hobby","data":"Likes chess"}]}' }));
    const user = await signedInUser(t);
    const chat = await connect(wsBase, user.browser);
    await chat.next(type('history'));
    chat.say('I like chess. Tell me about openings.');
    await chat.next(type('stream'));
    const res = await user.browser.post('/api/users/me/delete/', { password: PASSWORD });
    expect(res.statusCode).toBe(200);
    expect((await chat.closed).code).toBe(1008);
    // The turn ends (stream, then the store that finds no account) and learning runs after it.
    await waitFor('the learning from the message to be over', () =>
      logs.some((l) => l.msg === LEARNING_DONE && l.userId === user.userId),
    );
    expect(fake.requests.some((r) => !r.stream)).toBe(true);

    expect(await t.app.db.prisma.chatMessage.count({ where: { userId: user.userId } })).toBe(0);
    expect(await t.app.db.prisma.memory.count({ where: { userId: user.userId } })).toBe(0);
    const errors = logs.filter((l) => l.level >= 50);
    expect(errors.map((l) => l.msg)).toEqual([]);

    fake.onChat((req) => ({ text: `You said: ${req.messages.at(-1)?.content}` }));
    const other = await signedInUser(t);
    const otherChat = await connect(wsBase, other.browser);
    await otherChat.next(type('history'));
    otherChat.say('still here');
    await otherChat.next(type('markdown'));
    otherChat.ws.close();
  });
});
