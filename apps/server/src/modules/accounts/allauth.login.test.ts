// behaviours.md "Login" items.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PASSWORD, randomIp, signedInUser, signUp, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { argon2id } from './passwords.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function verifiedAccount() {
  const user = await signedInUser(t);
  await user.browser.delete(`${API}/auth/session`);
  return user;
}

describe('login', () => {
  it('behaviour 12: a wrong password gives email_password_mismatch on param password', async () => {
    const { email } = await verifiedAccount();
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email,
      password: 'wrong password',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      status: 400,
      errors: [
        {
          param: 'password',
          code: 'email_password_mismatch',
          message: 'The email address and/or password you specified are not correct.',
        },
      ],
    });
  });

  it('an unknown address gives the same answer as a wrong password', async () => {
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email: 'nobody@example.com',
      password: 'whatever it is',
    });
    expect(res.json().errors[0].code).toBe('email_password_mismatch');
  });

  it('logs in case-insensitively on the address', async () => {
    const { email } = await verifiedAccount();
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email: email.toUpperCase(),
      password: PASSWORD,
    });
    expect(res.statusCode).toBe(200);
  });

  it('behaviour 13: after 5 failures per address even the right password is refused, without a param', async () => {
    const { email } = await verifiedAccount();
    for (let i = 0; i < 5; i++) {
      const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
        email,
        password: `wrong-${i}-password`,
      });
      expect(res.json().errors[0].code).toBe('email_password_mismatch');
    }
    const blocked = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email,
      password: PASSWORD,
    });
    expect(blocked.statusCode).toBe(400);
    expect(blocked.json()).toEqual({
      status: 400,
      errors: [{ code: 'too_many_login_attempts', message: 'Too many failed login attempts. Try again later.' }],
    });
  });

  it('behaviour 13: 10 failures a minute from one IP block that IP for every account', async () => {
    const ip = randomIp();
    for (let i = 0; i < 10; i++) {
      await new Browser(t.app, { ip }).post(`${API}/auth/login`, {
        email: `someone-${i}@example.com`,
        password: 'wrong password',
      });
    }
    const { email } = await verifiedAccount();
    const blocked = await new Browser(t.app, { ip }).post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(blocked.json().errors[0].code).toBe('too_many_login_attempts');
    expect(
      (await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD }))
        .statusCode,
    ).toBe(200);
  });

  it('behaviour 13: a successful login does not count; a password reset clears the count', async () => {
    const { email } = await verifiedAccount();
    for (let i = 0; i < 4; i++)
      await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: 'wrong password' });
    for (let i = 0; i < 3; i++) {
      expect(
        (await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD }))
          .statusCode,
      ).toBe(200);
    }
    await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: 'wrong password' });
    const blocked = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email,
      password: PASSWORD,
    });
    expect(blocked.json().errors[0].code).toBe('too_many_login_attempts');

    const before = t.smtp.messages.length;
    await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email });
    const mail = await t.smtp.waitFor(email, { subject: /Reset your Daybook password/, after: before });
    const key = decodeURIComponent(mail.links[0]?.split('/auth/reset-password/')[1] ?? '');
    expect(
      (
        await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/reset`, {
          key,
          password: 'fresh password 99',
        })
      ).statusCode,
    ).toBe(401);
    expect(
      (await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: 'fresh password 99' }))
        .statusCode,
    ).toBe(200);
  });

  it('behaviour 14: 30 logins a minute from one IP, then 429; logging in while signed in gives 409', async () => {
    const ip = randomIp();
    const { email } = await verifiedAccount();
    for (let i = 0; i < 30; i++) {
      const res = await new Browser(t.app, { ip }).post(`${API}/auth/login`, { email, password: PASSWORD });
      expect(res.statusCode).toBe(200);
    }
    const limited = await new Browser(t.app, { ip }).post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ status: 429 });

    const { browser } = await signedInUser(t);
    expect((await browser.post(`${API}/auth/login`, { email, password: PASSWORD })).json()).toEqual({ status: 409 });
  });

  it('behaviour 15: an inactive user with the right password gets 401, not 400', async () => {
    const { email, userId } = await verifiedAccount();
    await t.app.db.prisma.user.update({ where: { id: userId }, data: { isActive: false } });
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(res.statusCode).toBe(401);
    expect(res.json().data.flows.some((f: { is_pending?: boolean }) => f.is_pending)).toBe(false);
  });

  it('behaviour 16: an unverified address gets 401 with verify_email pending and a new verification mail', async () => {
    const { email } = await signUp(t);
    const before = t.smtp.messages.length;
    // Wait out the 180 s mail cooldown of the signup mail by clearing it, as time would.
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${email}` } });
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(res.statusCode).toBe(401);
    expect(res.json().data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
    const mail = await t.smtp.waitFor(email, { subject: /Confirm your email/, after: before });
    expect(mail.links[0]).toMatch(/^http:\/\/daybook\.test\/auth\/verify-email\//);
  });

  it('behaviour 16: within the cooldown a second unverified login sends no second mail', async () => {
    const { email } = await signUp(t);
    await t.smtp.waitFor(email, { subject: /Confirm your email/ });
    const before = t.smtp.messages.length;
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(res.statusCode).toBe(401);
    // Past the cooldown (cleared, as time would) the next login mails a link; once it has arrived
    // and nothing else is on its way, a second mail for the login within the cooldown would have come before it.
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${email}` } });
    const again = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD });
    expect(again.statusCode).toBe(401);
    const later = await t.smtp.waitFor(email, { subject: /Confirm your email/, after: before });
    await t.mailSettled();
    expect(t.smtp.messages.slice(before).filter((m) => m.to === email)).toEqual([later]);
  });
});

describe('login hardening (issue 10)', () => {
  const verifications = () => vi.spyOn(argon2id, 'verify');
  afterEach(() => vi.restoreAllMocks());

  it('an unknown address costs one password check, like a known one', async () => {
    const { email } = await verifiedAccount();
    const verify = verifications();
    await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: 'wrong password' });
    expect(verify).toHaveBeenCalledTimes(1);
    verify.mockClear();
    const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email: uniqueEmail('nobody'),
      password: 'wrong password',
    });
    expect(res.json().errors[0].code).toBe('email_password_mismatch');
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('100 parallel wrong passwords for one address get 5 password checks; the rest are refused unchecked', async () => {
    const { email } = await verifiedAccount();
    const verify = verifications();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: `wrong-${i}-password` }),
      ),
    );
    const codes = results.map((r) => r.json().errors?.[0]?.code);
    expect(verify).toHaveBeenCalledTimes(5);
    expect(codes.filter((c) => c === 'email_password_mismatch')).toHaveLength(5);
    expect(codes.filter((c) => c === 'too_many_login_attempts')).toHaveLength(95);
  });

  it('the right password arriving while 5 wrong ones are being checked is refused', async () => {
    const { email } = await verifiedAccount();
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const real = argon2id.verify.bind(argon2id);
    const verify = vi.spyOn(argon2id, 'verify').mockImplementation(async (...args) => {
      await gate;
      return real(...args);
    });
    const wrong = Array.from({ length: 5 }, (_, i) =>
      new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: `wrong-${i}-password` }),
    );
    await vi.waitFor(() => expect(verify).toHaveBeenCalledTimes(5));
    const right = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, { email, password: PASSWORD });
    open();
    await Promise.all(wrong);
    expect(right.statusCode).toBe(400);
    expect(right.json().errors).toEqual([
      { code: 'too_many_login_attempts', message: 'Too many failed login attempts. Try again later.' },
    ]);
    expect(verify).toHaveBeenCalledTimes(5);
  });

  it('100 parallel logins from one IP: 30 are let through to the failure limit, the rest answer 429', async () => {
    const ip = randomIp();
    const verify = verifications();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        new Browser(t.app, { ip }).post(`${API}/auth/login`, {
          email: uniqueEmail(`x${i}`),
          password: 'wrong password',
        }),
      ),
    );
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 429)).toHaveLength(70);
    // 10 failures a minute per IP are checked; the other 20 stop at that limit.
    expect(verify).toHaveBeenCalledTimes(10);
  });
});
