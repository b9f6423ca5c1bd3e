// The first-run invite (logged when an installation has no accounts) makes its account an
// administrator; nothing else does.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.close());

async function signUpWith(token: string, email = uniqueEmail()) {
  const browser = new Browser(t.app, { ip: randomIp() });
  const res = await browser.post('/api/auth/signup/', {
    email,
    password1: PASSWORD,
    password2: PASSWORD,
    inviteToken: token,
  });
  expect(res.statusCode).toBe(201);
  return (await browser.get('/api/users/me/')).json() as { is_admin: boolean };
}

describe('the first-run invite', () => {
  it('makes the first account an administrator, and a leftover one makes a plain account', async () => {
    const first = await t.app.accounts.bootstrapInvite();
    // The server restarted before anyone signed up: a second first-run invite was logged.
    const leftover = await t.app.accounts.bootstrapInvite();
    if (!first || !leftover) throw new Error('no first-run invite');
    expect((await signUpWith(first.token)).is_admin).toBe(true);
    expect(await t.app.accounts.bootstrapInvite()).toBeNull();
    expect((await signUpWith(leftover.token)).is_admin).toBe(false);
  });

  it('is the only way in to administration: the first account made with any other invite is not one', async () => {
    const { token } = await t.app.invites.create({ maxUses: 1 });
    expect((await signUpWith(token)).is_admin).toBe(false);
  });
});
