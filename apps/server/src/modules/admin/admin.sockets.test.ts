// Deactivating an account closes its open chat sockets at once, like signing out does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser, uniqueEmail } from '../../test/factories.ts';
import type { TestApp } from '../../test/test-app.ts';
import { type ChatApp, connect, startChatApp, type } from '../chat/chat.test-client.ts';

let chatApp: ChatApp;
let t: TestApp;
beforeAll(async () => {
  chatApp = await startChatApp();
  t = chatApp.t;
});
afterAll(() => chatApp.close());

describe('deactivation', () => {
  it("closes the user's chat sockets with 1008", async () => {
    const admin = await signedInUser(t, uniqueEmail('admin'));
    await t.app.db.prisma.user.update({ where: { id: admin.userId }, data: { isAdmin: true } });
    const user = await signedInUser(t);
    const socket = await connect(chatApp.wsBase, user.browser);
    await socket.next(type('history'));

    const res = await admin.browser.patch(`/api/admin/users/${user.userId}/`, { is_active: false });
    expect(res.statusCode).toBe(200);
    const closed = await Promise.race([socket.closed, new Promise((r) => setTimeout(() => r('open'), 3000))]);
    expect(closed).toMatchObject({ code: 1008 });
  });
});
