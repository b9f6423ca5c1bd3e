// Unique test data made through the product's own paths (invite, signup, emailed link).
import { randomBytes } from 'node:crypto';
import { Browser, type TestApp } from './test-app.ts';

export const PASSWORD = 'correct horse battery';

/** A fresh client address, so per-IP rate limits of one test never touch another. */
export const randomIp = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`;

// Letters only: a random run of digits could make a numeric test password 'too similar' to the address.
export const uniqueEmail = (prefix = 'user') =>
  `${prefix}-${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}@example.com`;

export async function createInvite(
  t: TestApp,
  opts: { maxUses?: number | null; expiresInDays?: number | null; email?: string | null } = {},
) {
  return t.app.invites.create({
    maxUses: opts.maxUses === undefined ? 1 : opts.maxUses,
    expiresInDays: opts.expiresInDays ?? null,
    email: opts.email ?? null,
  });
}

/** The key in the newest verification link mailed to `email`. */
export async function verificationKey(t: TestApp, email: string, after = 0): Promise<string> {
  const mail = await t.smtp.waitFor(email, { subject: /Confirm your email/, after });
  const link = mail.links.find((l) => l.includes('/auth/verify-email/'));
  if (!link) throw new Error(`no verification link in ${mail.text}`);
  return decodeURIComponent(link.split('/auth/verify-email/')[1] ?? '');
}

/** Signs up through /api/auth/signup/ and returns the (signed-in) browser. */
export async function signUp(t: TestApp, email = uniqueEmail(), password = PASSWORD, ip = randomIp()) {
  const { token } = await createInvite(t);
  const browser = new Browser(t.app, { ip });
  const res = await browser.post('/api/auth/signup/', {
    email,
    password1: password,
    password2: password,
    inviteToken: token,
  });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
  return { browser, email, password };
}

/** A verified account and a browser signed in to it with a password login. */
export async function signedInUser(t: TestApp, email = uniqueEmail(), password = PASSWORD) {
  const before = t.smtp.messages.length;
  await signUp(t, email, password);
  const key = await verificationKey(t, email, before);
  const browser = new Browser(t.app, { ip: randomIp() });
  const verified = await browser.post('/_allauth/browser/v1/auth/email/verify', { key });
  if (verified.statusCode !== 401) throw new Error(`verify failed: ${verified.body}`);
  const login = await browser.post('/_allauth/browser/v1/auth/login', { email, password });
  if (login.statusCode !== 200) throw new Error(`login failed: ${login.body}`);
  return { browser, email, password, userId: login.json().data.user.id as number };
}

/** The connections page's ICS form, posted as the browser posts it; the status it answered (303 when added). */
export async function connectIcs(browser: Browser, url: string): Promise<number> {
  const res = await browser.request(
    'POST',
    '/accounts/3rdparty/ics/',
    new URLSearchParams({ url, csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '' }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded' },
  );
  return res.statusCode;
}
