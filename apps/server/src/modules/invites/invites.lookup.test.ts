// GET /api/auth/invite/?token=: what the signup page may know of the invite its link carries.
import { ZApiError, ZInviteLookupResponse } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvite, PASSWORD, randomIp, signedInUser, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { hashToken } from './invites.service.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const lookup = (token: string, ip = randomIp()) =>
  new Browser(t.app, { ip }).get(`/api/auth/invite/?token=${encodeURIComponent(token)}`);

describe('GET /api/auth/invite/', () => {
  it('tells the holder of a bound invite its address, and changes nothing', async () => {
    const { token, invite } = await createInvite(t, { email: 'Friend.Lookup@Example.com' });
    const res = await lookup(token);
    expect(res.statusCode).toBe(200);
    expect(ZInviteLookupResponse.parse(res.json())).toEqual({ valid: true, email: 'friend.lookup@example.com' });
    // The answer names an address: no cache keeps it.
    expect(res.headers['cache-control']).toBe('no-store');
    const row = await t.app.db.prisma.invite.findUniqueOrThrow({ where: { id: invite.id } });
    expect(row.uses).toBe(0);
  });

  it('answers email null for an invite any address may use', async () => {
    const { token } = await createInvite(t);
    expect((await lookup(` ${token} `)).json()).toEqual({ valid: true, email: null });
  });

  it('answers 404 in the /api error shape for unknown, used, expired and revoked tokens', async () => {
    const unknown = await lookup('no-such-invite-token');
    expect(unknown.statusCode).toBe(404);
    expect(ZApiError.parse(unknown.json())).toEqual({ error: 'This invite token is not valid.', code: 'not_found' });

    const used = await createInvite(t, { maxUses: 1 });
    const email = uniqueEmail();
    const signup = await new Browser(t.app, { ip: randomIp() }).post('/api/auth/signup/', {
      email,
      password1: PASSWORD,
      password2: PASSWORD,
      inviteToken: used.token,
    });
    expect(signup.statusCode).toBe(201);
    expect((await lookup(used.token)).json()).toEqual({
      error: 'This invite has already been used.',
      code: 'not_found',
    });

    const expired = await createInvite(t, { email: 'late@example.com', expiresInDays: 1 });
    await t.app.db.prisma.invite.update({
      where: { tokenHash: hashToken(expired.token) },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const late = await lookup(expired.token);
    expect(late.statusCode).toBe(404);
    // An invite that cannot be used any more does not say whom it was for.
    expect(late.json()).toEqual({ error: 'This invite has expired.', code: 'not_found' });

    const revoked = await createInvite(t);
    await t.app.invites.revoke(revoked.invite.id);
    expect((await lookup(revoked.token)).json()).toEqual({ error: 'This invite has been revoked.', code: 'not_found' });
  });

  it('answers 400 without a token, or with one longer than any invite token', async () => {
    const missing = await new Browser(t.app, { ip: randomIp() }).get('/api/auth/invite/');
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'validation_error', field_errors: { token: expect.any(Array) } });
    expect((await lookup('x'.repeat(201))).statusCode).toBe(400);
  });

  it('is public, and a signed-in browser gets the same answer', async () => {
    const { token } = await createInvite(t, { email: 'someone.else@example.com' });
    const { browser } = await signedInUser(t);
    expect((await browser.get(`/api/auth/invite/?token=${token}`)).json()).toEqual({
      valid: true,
      email: 'someone.else@example.com',
    });
  });

  it('limits look-ups per client address: 20 a minute, then 429; other addresses go on', async () => {
    const { token } = await createInvite(t);
    const ip = randomIp();
    for (let i = 0; i < 20; i++) expect((await lookup(i % 2 ? token : `guess-${i}`, ip)).statusCode).not.toBe(429);
    const limited = await lookup(token, ip);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({
      error: 'Too many attempts. Please wait a minute and try again.',
      code: 'rate_limited',
    });
    expect((await lookup(token)).statusCode).toBe(200);
  });
});
