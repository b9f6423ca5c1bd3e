// Account mail leaves the request path (a stalled mail server delays no answer, and shutdown still
// delivers what was queued), and its links follow the FRONTEND_URL_* settings.
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createInvite, PASSWORD, randomIp, uniqueEmail } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

const API = '/_allauth/browser/v1';

/** An SMTP server that accepts connections and never says a word. */
async function stalledSmtp() {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    waiting: () => sockets.size,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('with a mail server that never answers', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof stalledSmtp>>;
  beforeAll(async () => {
    smtp = await stalledSmtp();
    t = await createTestApp({ SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    // Hung connections fail once the server goes; the queue logs them and shutdown carries on.
    await smtp.close();
    await t.close();
  });

  // Each would wait for the mail server's greeting (30 s) if mail were sent inline.
  it('signup, a reset request and a verification resend answer while their mails are still waiting', async () => {
    const { token } = await createInvite(t);
    const email = uniqueEmail();
    const browser = new Browser(t.app, { ip: randomIp() });
    const signup = await browser.post(`${API}/auth/signup`, { email, password: PASSWORD, inviteToken: token });
    expect(signup.statusCode).toBe(401);
    const reset = await browser.post(`${API}/auth/password/request`, { email: uniqueEmail('nobody') });
    expect(reset.statusCode).toBe(200);
    // The signup's mail went out moments ago; let its 180 s cooldown pass.
    await t.app.db.prisma.rateLimitHit.deleteMany({ where: { key: `confirm_email:key:${email}` } });
    const resend = await browser.post('/api/auth/verification/resend/', { email });
    expect(resend.json()).toMatchObject({ sent: true });
    await vi.waitFor(() => expect(smtp.waiting()).toBe(3));
  }, 15_000);
});

describe('shutdown', () => {
  it('delivers mail queued by the last requests before the app closes', async () => {
    const t = await createTestApp();
    try {
      const email = uniqueEmail('late');
      const res = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email });
      expect(res.statusCode).toBe(200);
      await t.app.close();
      expect(t.smtp.messages.map((m) => m.to)).toContain(email);
    } finally {
      await t.database.dispose();
      await t.smtp.close();
    }
  });
});

describe('FRONTEND_URL_* (allauth example SPA routes)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      FRONTEND_URL_VERIFY_EMAIL: 'http://spa.test/account/verify-email/{key}',
      FRONTEND_URL_RESET_PASSWORD: 'http://spa.test/account/password/reset/key/{key}',
      FRONTEND_URL_SIGNUP: 'http://spa.test/account/signup',
    });
  });
  afterAll(() => t.close());

  const keyIn = (link: string | undefined, prefix: string) => {
    expect(link?.startsWith(prefix)).toBe(true);
    return decodeURIComponent(link?.slice(prefix.length) ?? '');
  };

  it('verification and reset mails link to the configured pages, and their keys work', async () => {
    const { token } = await createInvite(t);
    const email = uniqueEmail();
    const browser = new Browser(t.app, { ip: randomIp() });
    await browser.post(`${API}/auth/signup`, { email, password: PASSWORD, inviteToken: token });
    const verifyMail = await t.smtp.waitFor(email, { subject: /Confirm your email/ });
    const verifyKey = keyIn(verifyMail.links[0], 'http://spa.test/account/verify-email/');
    expect((await browser.post(`${API}/auth/email/verify`, { key: verifyKey })).statusCode).toBe(401);

    const before = t.smtp.messages.length;
    await browser.post(`${API}/auth/password/request`, { email });
    const resetMail = await t.smtp.waitFor(email, { subject: /Reset your Daybook password/, after: before });
    const resetKey = keyIn(resetMail.links[0], 'http://spa.test/account/password/reset/key/');
    const check = await browser.get(`${API}/auth/password/reset`, { 'x-password-reset-key': resetKey });
    expect(check.statusCode).toBe(200);
    const reset = await browser.post(`${API}/auth/password/reset`, { key: resetKey, password: 'a brand new password' });
    expect(reset.statusCode).toBe(401);
    const login = await browser.post(`${API}/auth/login`, { email, password: 'a brand new password' });
    expect(login.statusCode).toBe(200);
  });

  it('the "no account" mail points to the configured signup page', async () => {
    const email = uniqueEmail('nobody');
    await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/password/request`, { email });
    const mail = await t.smtp.waitFor(email, { subject: /Password reset request/ });
    expect(mail.links).toContain('http://spa.test/account/signup');
  });
});
