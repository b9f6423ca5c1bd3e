// The admin lists read straight from the driver in one statement each: they must answer exactly
// what the Prisma reads they replaced answered, on PostgreSQL and on the embedded PGlite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { REPO_ROOT } from '../../config.ts';
import { type Database, openDatabase } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { createUsersRepo } from '../accounts/users.repo.ts';
import { createUsersService } from '../accounts/users.service.ts';
import { createInvitesRepo } from '../invites/invites.repo.ts';
import { createInvitesService } from '../invites/invites.service.ts';
import { createAdminRepo } from './admin.repo.ts';
import { createAdminService, presentUser } from './admin.service.ts';

const at = (text: string) => new Date(`${text}Z`);
const NOW = at('2026-06-01T12:00:00.000');
const clock: Clock = { now: () => NOW };

/** Accounts covering every way the list's columns can come out. */
async function seedUsers(db: Database) {
  const { prisma } = db;
  const user = async (
    email: string,
    createdAt: string,
    extra: { lastLoginAt?: string; sessions?: string[]; addresses?: Array<{ verified: boolean; primary: boolean }> },
  ) => {
    const made = await prisma.user.create({
      data: {
        email,
        createdAt: at(createdAt),
        lastLoginAt: extra.lastLoginAt ? at(extra.lastLoginAt) : null,
      },
    });
    for (const [i, address] of (extra.addresses ?? []).entries()) {
      await prisma.emailAddress.create({ data: { userId: made.id, email: `${i}.${email}`, ...address } });
    }
    for (const [i, created] of (extra.sessions ?? []).entries()) {
      await prisma.session.create({
        data: { id: `${made.id}-${i}`, userId: made.id, createdAt: at(created), expiresAt: at('2027-01-01T00:00:00') },
      });
    }
    return made;
  };
  // Four share one creation time: the id orders them.
  const tie = '2026-01-01T00:00:00.000';
  await user('never@list.test', tie, { addresses: [{ verified: false, primary: true }] });
  await user('login-newer@list.test', tie, {
    lastLoginAt: '2026-03-01T00:00:00.001',
    sessions: ['2026-02-01T00:00:00.000'],
    addresses: [{ verified: true, primary: true }],
  });
  await user('session-newer@list.test', tie, {
    lastLoginAt: '2026-02-01T00:00:00.000',
    sessions: ['2026-01-05T00:00:00.000', '2026-04-01T10:20:30.456', '2026-03-01T00:00:00.000'],
  });
  await user('sessions-only@list.test', tie, {
    sessions: ['2026-05-01T00:00:00.999'],
    addresses: [
      { verified: true, primary: false },
      { verified: false, primary: true },
    ],
  });
  await user('a_b%c@list.test', '2025-12-31T23:59:59.999', { addresses: [{ verified: true, primary: true }] });
  await user('axbyc@list.test', '2026-02-02T02:02:02.020', { lastLoginAt: '2026-02-03T00:00:00.000' });
  await user('back\\slash@list.test', '2024-07-08T09:10:11.120', {});
}

async function seedInvites(db: Database) {
  const invites = createInvitesService({
    repo: createInvitesRepo(db.prisma, db.query),
    clock,
    signupPage: 'http://daybook.test/auth/signup',
  });
  const users = await db.prisma.user.findMany({ orderBy: { id: 'asc' } });
  const [a, b, c] = users;
  if (!a || !b || !c) throw new Error('seed the users first');
  const plain = await invites.create({});
  const bound = await invites.create({ email: 'Someone@List.test', maxUses: 2, expiresInDays: 3 });
  const used = await invites.create({ maxUses: 2 });
  await invites.create({ expiresInDays: 1 });
  await invites.revoke(plain.invite.id);
  await db.prisma.invite.update({ where: { id: bound.invite.id }, data: { expiresAt: at('2026-05-01T00:00:00') } });
  await db.prisma.invite.update({ where: { id: used.invite.id }, data: { uses: 2 } });
  // Two uses at one instant (the id orders them) and one earlier.
  for (const [user, usedAt] of [
    [b, '2026-04-04T04:04:04.404'],
    [a, '2026-04-04T04:04:04.404'],
    [c, '2026-03-03T03:03:03.303'],
  ] as const) {
    await db.prisma.inviteUse.create({ data: { inviteId: used.invite.id, userId: user.id, usedAt: at(usedAt) } });
  }
  await db.prisma.inviteUse.create({
    data: { inviteId: bound.invite.id, userId: c.id, usedAt: at('2026-01-01T00:00:00') },
  });
  return invites;
}

const withPrimary = {
  emailAddresses: { where: { primary: true }, select: { verified: true } },
  sessions: { select: { createdAt: true }, orderBy: { createdAt: 'desc' }, take: 1 },
} as const;

/** The list as the Prisma read before it answered it. */
async function listedByPrisma(
  db: Database,
  { search, limit, offset }: { search: string; limit: number; offset: number },
) {
  const likeText = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  const where = search ? { email: { contains: likeText(search), mode: 'insensitive' as const } } : {};
  const rows = await db.prisma.user.findMany({
    where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit,
    skip: offset,
    include: withPrimary,
  });
  return { results: rows.map(presentUser), count: await db.prisma.user.count({ where }) };
}

const QUERIES = [
  { search: '', limit: 25, offset: 0 },
  { search: '', limit: 2, offset: 0 },
  { search: '', limit: 2, offset: 2 },
  { search: '', limit: 3, offset: 5 },
  { search: '', limit: 25, offset: 7 },
  { search: '', limit: 25, offset: 100 },
  { search: 'NEWER', limit: 25, offset: 0 },
  { search: 'a_b%', limit: 25, offset: 0 },
  { search: '_', limit: 25, offset: 0 },
  { search: '%', limit: 1, offset: 0 },
  { search: 'k\\s', limit: 25, offset: 0 },
  { search: 'nobody', limit: 25, offset: 0 },
];

describe.each([
  ['PostgreSQL (or the run database)', 'run'],
  ['PGlite', 'pglite'],
] as const)('admin lists on %s', (_, which) => {
  let database: TestDatabase | null = null;
  let db: Database;
  beforeAll(async () => {
    if (which === 'run') {
      database = await createTestDatabase();
      db = database.db;
    } else {
      db = await openDatabase({ dataDir: null, migrationsDir: `${REPO_ROOT}/prisma/migrations` });
      await db.migrate();
    }
    await seedUsers(db);
  });
  afterAll(async () => {
    if (database) await database.dispose();
    else await db?.close();
  });

  it('lists users as the Prisma read did: order, ties, last sign-in, verified, search, pages and counts', async () => {
    const admin = createAdminService({
      repo: createAdminRepo(db.prisma, db.query),
      users: createUsersService({ repo: createUsersRepo(db.prisma, db.query) }),
      sessions: { destroyAllFor: async () => {} },
      invites: { create: async () => Promise.reject(new Error('unused')) },
      mail: { send: () => {} },
      limiter: { consume: async () => true },
      log: { info: () => {} } as never,
    });
    for (const query of QUERIES) {
      expect({ query, ...(await admin.listUsers(query)) }).toEqual({ query, ...(await listedByPrisma(db, query)) });
    }
    const first = await admin.listUsers({ search: '', limit: 25, offset: 0 });
    expect(first.count).toBe(7);
    expect(first.results.find((u) => u.email === 'session-newer@list.test')?.last_login).toBe(
      '2026-04-01T10:20:30.456Z',
    );
    expect((await admin.listUsers({ search: 'a_b%', limit: 25, offset: 0 })).results.map((u) => u.email)).toEqual([
      'a_b%c@list.test',
    ]);
  });

  it('lists invites as the Prisma read did, uses oldest first', async () => {
    const invites = await seedInvites(db);
    const byPrisma = await db.prisma.invite.findMany({
      orderBy: { id: 'desc' },
      include: {
        usedBy: { include: { user: { select: { email: true } } }, orderBy: [{ usedAt: 'asc' }, { id: 'asc' }] },
      },
    });
    const listed = await invites.list();
    expect(listed).toEqual(byPrisma.map(invites.present));
    expect(listed.map((i) => i.status)).toEqual(['active', 'exhausted', 'expired', 'revoked']);
    expect(listed[1]?.used_by.map((u) => u.used_at)).toEqual([
      '2026-03-03T03:03:03.303Z',
      '2026-04-04T04:04:04.404Z',
      '2026-04-04T04:04:04.404Z',
    ]);
    // Without the driver (the CLI), through Prisma's raw query: the same answer.
    const viaPrisma = createInvitesService({
      repo: createInvitesRepo(db.prisma),
      clock,
      signupPage: 'http://daybook.test/auth/signup',
    });
    expect(await viaPrisma.list()).toEqual(listed);
  });
});
