// behaviours.md "Email verification" items (link mode).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, randomIp, signedInUser, signUp, verificationKey } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

const API = '/_allauth/browser/v1';
let t: TestApp;
let offsetMs = 0;
beforeAll(async () => {
  // A clock the tests can move forward, to see keys expire.
  t = await createTestApp({}, { clock: { now: () => new Date(Date.now() + offsetMs) } });
});
afterAll(() => t.close());

const KEY_ERROR = {
  status: 400,
  errors: [{ message: 'Invalid or expired key.', code: 'invalid_or_expired_key', param: 'key' }],
};

describe('email verification', () => {
  it('behaviour 21: GET reads the key header; a bad or missing key is 400 on param key', async () => {
    const { email } = await signUp(t);
    const key = await verificationKey(t, email);
    const browser = new Browser(t.app, { ip: randomIp() });
    const ok = await browser.get(`${API}/auth/email/verify`, { 'x-email-verification-key': key });
    expect(ok.json()).toMatchObject({
      status: 200,
      data: { email, user: { email } },
      meta: { is_authenticating: false },
    });
    expect((await browser.get(`${API}/auth/email/verify`, { 'x-email-verification-key': `${key}x` })).json()).toEqual(
      KEY_ERROR,
    );
    expect((await browser.get(`${API}/auth/email/verify`)).json()).toEqual({
      status: 400,
      errors: [{ message: 'This field is required.', code: 'required', param: 'key' }],
    });
  });

  it('behaviour 22: POST verifies; a signed-out caller gets 401 (success), a signed-in one 200 as themselves', async () => {
    const first = await signUp(t);
    const key = await verificationKey(t, first.email);
    const other = await signedInUser(t);
    const res = await other.browser.post(`${API}/auth/email/verify`, { key });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.email).toBe(other.email);
    // The key was used: nothing is pending any more (409, as allauth answers a used code).
    expect((await new Browser(t.app).post(`${API}/auth/email/verify`, { key })).json()).toEqual({ status: 409 });
    expect(
      (
        await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
          email: first.email,
          password: PASSWORD,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('behaviour 23: keys are signed (tampering fails) and expire after 3 days', async () => {
    const { email } = await signUp(t);
    const key = await verificationKey(t, email);
    const [id, ts, sig] = key.split('-');
    const tampered = `${(Number.parseInt(id ?? '0', 36) + 1).toString(36)}-${ts}-${sig}`;
    expect((await new Browser(t.app).post(`${API}/auth/email/verify`, { key: tampered })).json()).toEqual(KEY_ERROR);
    offsetMs = 3 * 24 * 3600 * 1000 + 60_000;
    try {
      expect((await new Browser(t.app).post(`${API}/auth/email/verify`, { key })).json()).toEqual(KEY_ERROR);
    } finally {
      offsetMs = 0;
    }
    expect((await new Browser(t.app).post(`${API}/auth/email/verify`, { key })).statusCode).toBe(401);
  });

  it('behaviour 23: an address already verified by another account gives email_taken on param key', async () => {
    const owner = await signedInUser(t);
    const claimer = await signedInUser(t);
    // The owner's own verification mail went out moments ago; let its 180 s cooldown pass.
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${owner.email}` } });
    const before = t.smtp.messages.length;
    await claimer.browser.post(`${API}/account/email`, { email: owner.email });
    const key = await verificationKey(t, owner.email, before);
    const res = await claimer.browser.post(`${API}/auth/email/verify`, { key });
    expect(res.json()).toEqual({
      status: 400,
      errors: [{ message: 'A user is already registered with this email address.', code: 'email_taken', param: 'key' }],
    });
  });

  it('resend endpoint is not available in link mode (409)', async () => {
    expect((await new Browser(t.app).post(`${API}/auth/email/verify/resend`)).json()).toEqual({ status: 409 });
  });

  it('the product resend call mails a fresh link to an unverified address, and says the same for unknown ones', async () => {
    const { email } = await signUp(t);
    await t.smtp.waitFor(email, { subject: /Confirm your email/ });
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${email}` } });
    const before = t.smtp.messages.length;
    const browser = new Browser(t.app, { ip: randomIp() });
    const known = await browser.post('/api/auth/verification/resend/', { email });
    const unknown = await browser.post('/api/auth/verification/resend/', { email: 'nobody-here@example.com' });
    expect(known.statusCode).toBe(200);
    expect(unknown.json()).toEqual(known.json());
    await t.smtp.waitFor(email, { subject: /Confirm your email/, after: before });
    const invalid = await browser.post('/api/auth/verification/resend/', { email: 'nope' });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({
      error: 'Some fields are invalid.',
      code: 'validation_error',
      field_errors: { email: ['Invalid email address'] },
    });
  });
});

describe('a verification link opened twice (issue 10)', () => {
  it('answers 409 (already verified) on GET and POST, not "invalid key", and changes nothing', async () => {
    const { email } = await signUp(t);
    const key = await verificationKey(t, email);
    const browser = new Browser(t.app, { ip: randomIp() });
    expect((await browser.post(`${API}/auth/email/verify`, { key })).statusCode).toBe(401);
    expect((await browser.get(`${API}/auth/email/verify`, { 'x-email-verification-key': key })).json()).toEqual({
      status: 409,
    });
    expect((await new Browser(t.app).post(`${API}/auth/email/verify`, { key })).json()).toEqual({ status: 409 });
    // A forged key for that verified address is still just invalid.
    const [id, ts] = key.split('-');
    const forged = `${id}-${ts}-${'0'.repeat(40)}`;
    expect((await browser.post(`${API}/auth/email/verify`, { key: forged })).json()).toEqual(KEY_ERROR);
  });
});

describe('the product resend call within the 3-minute cooldown (issue 10)', () => {
  const resend = (email: string) =>
    new Browser(t.app, { ip: randomIp() }).post('/api/auth/verification/resend/', { email });

  it('says no mail went out and when to ask again, instead of "sent"', async () => {
    const { email } = await signUp(t);
    await t.smtp.waitFor(email, { subject: /Confirm your email/ });
    const before = t.smtp.messages.length;
    const res = await resend(email);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      sent: false,
      retry_after: expect.any(Number),
      detail: 'We sent one a moment ago; you can ask again in 3 minutes.',
    });
    expect(res.json().retry_after).toBeGreaterThan(170);
    expect(res.json().retry_after).toBeLessThanOrEqual(180);
    // Past the cooldown (cleared, as time would) the next resend mails a link; once it has arrived
    // and nothing else is on its way, a mail for the refused resend would have come before it.
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${email}` } });
    expect((await resend(email)).json()).toMatchObject({ sent: true });
    const later = await t.smtp.waitFor(email, { subject: /Confirm your email/, after: before });
    await t.mailSettled();
    expect(t.smtp.messages.slice(before).filter((m) => m.to === email)).toEqual([later]);
  });

  it('answers an address without an account exactly as one with an account', async () => {
    const { email } = await signUp(t);
    await t.smtp.waitFor(email, { subject: /Confirm your email/ });
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${email}` } });
    const unknown = `nobody-${email}`;
    const first = [await resend(email), await resend(unknown)].map((r) => r.json());
    expect(first[0]).toEqual({
      sent: true,
      detail: 'If this address has an account waiting for verification, a new link is on its way.',
    });
    expect(first[1]).toEqual(first[0]);
    const second = [await resend(email), await resend(unknown)].map((r) => r.json());
    expect(second[0]).toMatchObject({ sent: false });
    expect({ ...second[1], retry_after: 0 }).toEqual({ ...second[0], retry_after: 0 });
  });
});
