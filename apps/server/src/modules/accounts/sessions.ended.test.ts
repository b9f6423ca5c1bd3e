// A session ended by a password change elsewhere is told why at its next request: the account
// API's 401 carries meta.session_ended (additive), and nothing else about the account.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { SESSION_COOKIE } from './session.plugin.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const ENDED_BY_PASSWORD_CHANGE = {
  status: 401,
  data: { flows: [{ id: 'login' }, { id: 'signup' }] },
  meta: { is_authenticated: false, session_ended: 'password_changed' },
};
const SIGNED_OUT = {
  status: 401,
  data: { flows: [{ id: 'login' }, { id: 'signup' }] },
  meta: { is_authenticated: false },
};

/** The account signed in on a second browser too. */
async function twoBrowsers() {
  const first = await signedInUser(t);
  const second = new Browser(t.app, { ip: randomIp() });
  expect((await second.post(`${API}/auth/login`, { email: first.email, password: PASSWORD })).statusCode).toBe(200);
  return { ...first, second };
}

/** A session's id: the SHA-256 of the key its cookie holds. */
const hashOf = (key: string | undefined) =>
  createHash('sha256')
    .update(key ?? '')
    .digest('hex');

const rowOf = (browser: Browser) =>
  t.app.db.prisma.session.findUnique({ where: { id: hashOf(browser.cookies.get(SESSION_COOKIE)) } });

describe('a session ended by a password change', () => {
  it('answers its next session check with the reason, and the product API with a plain 401', async () => {
    const { browser, second } = await twoBrowsers();
    const changed = await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'a brand new password 4',
    });
    expect(changed.statusCode).toBe(200);

    const check = await second.get(`${API}/auth/session`);
    expect(check.statusCode).toBe(401);
    expect(check.json()).toEqual(ENDED_BY_PASSWORD_CHANGE);
    expect((await second.get('/api/users/me/')).statusCode).toBe(401);
    // What is left of it belongs to nobody and holds only the reason.
    expect(await rowOf(second)).toMatchObject({ userId: null, data: { ended: 'password_changed' } });
    // The device that changed it stays signed in, and is told nothing of the kind.
    expect((await browser.get(`${API}/auth/session`)).statusCode).toBe(200);
  });

  it('is told once it signs in again: the new session replaces it, and a later sign-out is plain', async () => {
    const { browser, second, email } = await twoBrowsers();
    await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'another new password 5',
    });
    expect((await second.get(`${API}/auth/session`)).json()).toEqual(ENDED_BY_PASSWORD_CHANGE);
    // The old password no longer works; the failed attempt keeps the reason.
    expect((await second.post(`${API}/auth/login`, { email, password: PASSWORD })).statusCode).toBe(400);
    expect((await second.get(`${API}/auth/session`)).json()).toEqual(ENDED_BY_PASSWORD_CHANGE);
    const tombstone = second.cookies.get(SESSION_COOKIE);
    expect((await second.post(`${API}/auth/login`, { email, password: 'another new password 5' })).statusCode).toBe(
      200,
    );
    expect(second.cookies.get(SESSION_COOKIE)).not.toBe(tombstone);
    expect(await t.app.db.prisma.session.count({ where: { id: hashOf(tombstone) } })).toBe(0);
    await second.delete(`${API}/auth/session`);
    expect((await second.get(`${API}/auth/session`)).json()).toEqual(SIGNED_OUT);
  });

  it('a password reset tells the account’s sessions the same', async () => {
    const { second, email } = await twoBrowsers();
    const before = t.smtp.messages.length;
    const stranger = new Browser(t.app, { ip: randomIp() });
    await stranger.post(`${API}/auth/password/request`, { email });
    const mail = await t.smtp.waitFor(email, { subject: /Reset your Daybook password/, after: before });
    const link = mail.links.find((l) => l.includes('/auth/reset-password/')) ?? '';
    const key = decodeURIComponent(link.split('/auth/reset-password/')[1] ?? '');
    const reset = await stranger.post(`${API}/auth/password/reset`, { key, password: 'reset to this one 6' });
    expect(reset.statusCode).toBe(401);
    expect(reset.json()).toEqual(SIGNED_OUT);
    expect((await second.get(`${API}/auth/session`)).json()).toEqual(ENDED_BY_PASSWORD_CHANGE);
  });

  it('other endings say nothing: a sign-out, a browser that never signed in', async () => {
    const { browser } = await signedInUser(t);
    await browser.delete(`${API}/auth/session`);
    expect((await browser.get(`${API}/auth/session`)).json()).toEqual(SIGNED_OUT);
    expect((await new Browser(t.app).get(`${API}/auth/session`)).json()).toEqual(SIGNED_OUT);
  });
});
