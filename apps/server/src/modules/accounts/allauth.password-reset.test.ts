// behaviours.md "Password reset" items (link mode) and the product's reset call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
let offsetMs = 0;
beforeAll(async () => {
  t = await createTestApp({}, { clock: { now: () => new Date(Date.now() + offsetMs) } });
});
afterAll(() => t.close());

const INVALID = {
  status: 400,
  errors: [{ param: 'key', code: 'invalid_password_reset', message: 'The password reset token was invalid.' }],
};

async function resetKey(email: string) {
  const before = t.smtp.messages.length;
  const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email });
  expect(res.json()).toEqual({ status: 200 });
  const mail = await t.smtp.waitFor(email, { subject: /Reset your Daybook password/, after: before });
  const link = mail.links.find((l) => l.includes('/auth/reset-password/')) ?? '';
  expect(link.startsWith('http://daybook.test/auth/reset-password/')).toBe(true);
  return decodeURIComponent(link.split('/auth/reset-password/')[1] ?? '');
}

describe('password reset', () => {
  it('refuses a new password too similar to the email address (issue 10)', async () => {
    const { email } = await signedInUser(t);
    const key = await resetKey(email);
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/reset`, {
      key,
      password: `${email.split('@')[0]?.replace('-', '_')}5`,
    });
    expect(res.json()).toEqual({
      status: 400,
      errors: [
        {
          code: 'password_too_similar',
          message: 'The password is too similar to the email address.',
          param: 'password',
        },
      ],
    });
  });

  it('behaviour 25: unknown addresses get the same 200 and an "unknown account" mail', async () => {
    const email = 'stranger@example.com';
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email });
    expect(res.json()).toEqual({ status: 200 });
    await t.smtp.waitFor(email, { subject: /Password reset request/ });
    const invalid = await new Browser(t.app).post(`${API}/auth/password/request`, { email: 'bad' });
    expect(invalid.json()).toEqual({
      status: 400,
      errors: [{ message: 'Enter a valid email address.', code: 'invalid', param: 'email' }],
    });
  });

  it('behaviour 25: 5 requests a minute per address, then 429', async () => {
    const email = 'flood@example.com';
    for (let i = 0; i < 5; i++)
      expect(
        (await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email })).statusCode,
      ).toBe(200);
    expect(
      (await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email })).json(),
    ).toEqual({ status: 429 });
  });

  it('behaviour 26/27: the emailed key works once; signs every session out; the old password stops working', async () => {
    const { email, browser } = await signedInUser(t);
    const key = await resetKey(email);
    const check = await new Browser(t.app).get(`${API}/auth/password/reset`, { 'x-password-reset-key': key });
    expect(check.json()).toMatchObject({ status: 200, data: { user: { email } } });

    const weak = await new Browser(t.app).post(`${API}/auth/password/reset`, { key, password: 'short' });
    expect(weak.json().errors[0]).toMatchObject({ param: 'password', code: 'password_too_short' });

    const before = t.smtp.messages.length;
    const done = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/reset`, {
      key,
      password: 'a new good password',
    });
    expect(done.statusCode).toBe(401);
    await t.smtp.waitFor(email, { subject: /password was reset/, after: before });
    expect((await browser.get(`${API}/auth/session`)).statusCode).toBe(401);

    expect(
      (await new Browser(t.app).post(`${API}/auth/password/reset`, { key, password: 'yet another password' })).json(),
    ).toEqual(INVALID);
    expect(
      (await new Browser(t.app).get(`${API}/auth/password/reset`, { 'x-password-reset-key': key })).json(),
    ).toEqual(INVALID);
    expect(
      (await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD }))
        .statusCode,
    ).toBe(400);
    expect(
      (
        await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
          email,
          password: 'a new good password',
        })
      ).statusCode,
    ).toBe(200);
  });

  it('behaviour 26: keys expire after 3 days and die when the password changes', async () => {
    const { email, browser } = await signedInUser(t);
    const key = await resetKey(email);
    offsetMs = 3 * 24 * 3600 * 1000 + 60_000;
    try {
      expect(
        (await new Browser(t.app).get(`${API}/auth/password/reset`, { 'x-password-reset-key': key })).json(),
      ).toEqual(INVALID);
    } finally {
      offsetMs = 0;
    }
    await browser.post(`${API}/account/password/change`, {
      current_password: PASSWORD,
      new_password: 'changed it myself',
    });
    expect(
      (await new Browser(t.app).get(`${API}/auth/password/reset`, { 'x-password-reset-key': key })).json(),
    ).toEqual(INVALID);
    expect(
      (await new Browser(t.app).get(`${API}/auth/password/reset`, { 'x-password-reset-key': 'garbage' })).json(),
    ).toEqual(INVALID);
  });

  it('behaviour 27: 20 key submissions a minute per IP, then 429', async () => {
    const ip = randomIp();
    for (let i = 0; i < 20; i++)
      await new Browser(t.app, { ip }).post(`${API}/auth/password/reset`, { key: 'x-y-z', password: 'whatever 123' });
    expect(
      (
        await new Browser(t.app, { ip }).post(`${API}/auth/password/reset`, { key: 'x-y-z', password: 'whatever 123' })
      ).json(),
    ).toEqual({ status: 429 });
  });

  it('the product call /api/auth/password/reset/ mails the same link and validates the address', async () => {
    const { email } = await signedInUser(t);
    const before = t.smtp.messages.length;
    const res = await new Browser(t.app, { ip: randomIp() }).post('/api/auth/password/reset/', { email });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ detail: 'Password reset email sent. Please check your inbox.' });
    await t.smtp.waitFor(email, { subject: /Reset your Daybook password/, after: before });
    const unknown = await new Browser(t.app, { ip: randomIp() }).post('/api/auth/password/reset/', {
      email: 'ghost@example.com',
    });
    expect(unknown.json()).toEqual(res.json());
    const bad = await new Browser(t.app).post('/api/auth/password/reset/', { email: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field_errors).toEqual({ email: ['Email is required'] });
  });
});
