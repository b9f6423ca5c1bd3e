// Loading a session on every request: one statement for the session and its user, which must read
// the same user Prisma does, and must still end a session at once on expiry, deactivation, sign-out
// and password change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/clock.ts';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { createAccountsRepo } from './accounts.repo.ts';
import { SESSION_TTL_SEC } from './sessions.service.ts';

let t: TestApp;
let now = new Date();
const clock: Clock = { now: () => now };

beforeAll(async () => {
  t = await createTestApp({}, { clock });
});
afterAll(() => t.close());

const session = '/_allauth/browser/v1/auth/session';
const sessionIdOf = async (userId: number) =>
  (await t.database.db.prisma.session.findFirstOrThrow({ where: { userId }, orderBy: { createdAt: 'desc' } })).id;

describe('the session a request loads', () => {
  it('carries the user exactly as Prisma reads them, every field', async () => {
    const { browser, userId } = await signedInUser(t);
    // Every kind of column filled in: text, booleans, dates, floats, nulls.
    await t.database.db.prisma.user.update({
      where: { id: userId },
      data: {
        timeZone: 'Europe/Lisbon',
        locationName: 'Lisbon',
        locationCountry: 'PT',
        latitude: 38.7223,
        longitude: -9.1393,
        onboardedAt: new Date('2026-01-02T03:04:05.678Z'),
        lastLoginAt: new Date('2026-02-03T04:05:06.789Z'),
        learnFromChats: false,
      },
    });
    const repo = createAccountsRepo(t.database.db.prisma, t.database.db.query);
    const loaded = await repo.findSessionWithUser(await sessionIdOf(userId));
    const user = await t.database.db.prisma.user.findUniqueOrThrow({ where: { id: userId } });
    expect(loaded?.user).toEqual(user);
    expect(Object.keys(loaded?.user ?? {}).sort()).toEqual(Object.keys(user).sort());
    // Without a driver query (scripts), Prisma's raw query reads the same.
    expect((await createAccountsRepo(t.database.db.prisma).findSessionWithUser(loaded?.id ?? ''))?.user).toEqual(user);
    const me = (await browser.get('/api/users/me/')).json();
    expect(me).toMatchObject({ time_zone: 'Europe/Lisbon', learn_from_chats: false, onboarded: true });
    expect(me.location).toEqual({ name: 'Lisbon', country_code: 'PT', latitude: 38.7223, longitude: -9.1393 });
  });

  it('ends at once when the user is deactivated, and comes back with reactivation', async () => {
    const { browser, userId } = await signedInUser(t);
    expect((await browser.get(session)).statusCode).toBe(200);
    await t.database.db.prisma.user.update({ where: { id: userId }, data: { isActive: false } });
    expect((await browser.get(session)).statusCode).toBe(401);
    expect((await browser.get('/api/users/me/')).statusCode).toBe(401);
    await t.database.db.prisma.user.update({ where: { id: userId }, data: { isActive: true } });
    expect((await browser.get(session)).statusCode).toBe(200);
  });

  it('ends when it expires', async () => {
    const { browser } = await signedInUser(t);
    const started = now;
    try {
      now = new Date(started.getTime() + (SESSION_TTL_SEC - 60) * 1000);
      expect((await browser.get(session)).statusCode).toBe(200);
      now = new Date(started.getTime() + (SESSION_TTL_SEC + 60) * 1000);
      expect((await browser.get(session)).statusCode).toBe(401);
    } finally {
      now = started;
    }
  });

  it('ends on sign-out, and a password change ends the other sessions', async () => {
    const { browser, email, password } = await signedInUser(t);
    const other = new Browser(t.app, { ip: '10.9.9.9' });
    expect((await other.post('/_allauth/browser/v1/auth/login', { email, password })).statusCode).toBe(200);
    const changed = await browser.post('/_allauth/browser/v1/account/password/change', {
      current_password: password,
      new_password: 'another horse battery staple',
    });
    expect(changed.statusCode).toBe(200);
    expect((await other.get(session)).statusCode).toBe(401);
    expect((await browser.get(session)).statusCode).toBe(200);
    await browser.delete(session);
    expect((await browser.get(session)).statusCode).toBe(401);
  });

  it('writes nothing to the session row when a request only reads it', async () => {
    const { browser, userId } = await signedInUser(t);
    const id = await sessionIdOf(userId);
    const before = await t.database.db.prisma.session.findUniqueOrThrow({ where: { id } });
    for (let i = 0; i < 5; i++) expect((await browser.get('/api/users/me/')).statusCode).toBe(200);
    expect(await t.database.db.prisma.session.findUniqueOrThrow({ where: { id } })).toEqual(before);
  });

  it('loads an anonymous session (a pending step) with its data and no user; an unknown one is none', async () => {
    const repo = createAccountsRepo(t.database.db.prisma, t.database.db.query);
    const data = { pendingVerify: { userId: 1, email: 'a@example.com', at: 1 } };
    await repo.createSession({
      id: 'anonymous-session-1',
      userId: null,
      data,
      expiresAt: new Date(Date.now() + 60_000),
    });
    const loaded = await repo.findSessionWithUser('anonymous-session-1');
    expect(loaded).toMatchObject({ id: 'anonymous-session-1', userId: null, data, user: null });
    expect(await repo.findSessionWithUser('no-such-session')).toBeNull();
  });
});
