// Account data in the database: users, their email addresses and sessions. The session read every
// request makes goes straight to the driver (SQL); the rest through Prisma.
import type { Query, Tx } from '../../db/database.ts';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.ts';

export type UserRow = Awaited<ReturnType<PrismaClient['user']['findUniqueOrThrow']>>;
export type EmailRow = Awaited<ReturnType<PrismaClient['emailAddress']['findUniqueOrThrow']>>;
export type SessionRow = Awaited<ReturnType<PrismaClient['session']['findUniqueOrThrow']>>;
/** A session with its user (null for an anonymous session), as every request with a cookie loads it. */
export type SessionWithUser = Pick<SessionRow, 'id' | 'userId' | 'data' | 'expiresAt'> & { user: UserRow | null };

// Every request with a session cookie reads its session and user, so that read goes straight to the
// driver (see Database.query) in one statement. `satisfies` names every column of UserRow: a new
// column in the schema fails the type check here until it is added.
const USER_COLUMNS = {
  id: 'id',
  email: 'email',
  passwordHash: 'password_hash',
  isActive: 'is_active',
  isAdmin: 'is_admin',
  isDailyMessagePaused: 'is_daily_message_paused',
  learnFromChats: 'learn_from_chats',
  onboardedAt: 'onboarded_at',
  passwordChangedAt: 'password_changed_at',
  lastLoginAt: 'last_login_at',
  timeZone: 'time_zone',
  dailyMessageTime: 'daily_message_time',
  dailyMessageEmail: 'daily_message_email',
  locationName: 'location_name',
  locationCountry: 'location_country',
  latitude: 'latitude',
  longitude: 'longitude',
  temperatureUnit: 'temperature_unit',
  createdAt: 'created_at',
} as const satisfies Record<keyof UserRow, string>;
const USER_FIELDS = Object.keys(USER_COLUMNS) as Array<keyof UserRow>;
const SESSION_WITH_USER = `SELECT s.id AS "s.id", s.user_id AS "s.userId", s.data AS "s.data", s.expires_at AS "s.expiresAt",
  ${Object.entries(USER_COLUMNS)
    .map(([field, column]) => `u.${column} AS "${field}"`)
    .join(', ')}
  FROM sessions s LEFT JOIN users u ON u.id = s.user_id WHERE s.id = $1`;

/** Prisma's raw query, for callers that have no driver query at hand (scripts, rate-limit tests). */
const prismaQuery =
  (prisma: PrismaClient): Query =>
  <T>(text: string, params: unknown[] = []) =>
    prisma.$queryRawUnsafe<T[]>(text, ...params);

export function createAccountsRepo(prisma: PrismaClient, query: Query = prismaQuery(prisma)) {
  return {
    transaction<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
      return prisma.$transaction(fn);
    },

    // ---- users ----
    findUserById: (id: number, tx: Tx = prisma) => tx.user.findUnique({ where: { id } }),
    findUserByEmail: (email: string, tx: Tx = prisma) => tx.user.findUnique({ where: { email } }),
    /** The user owning `email` as any of their addresses, preferring a verified one. */
    async findUserByAnyEmail(email: string, tx: Tx = prisma) {
      const rows = await tx.emailAddress.findMany({
        where: { email },
        include: { user: true },
        orderBy: [{ verified: 'desc' }, { id: 'asc' }],
      });
      return rows[0] ? { user: rows[0].user, address: rows[0] as EmailRow } : null;
    },
    countUsers: (tx: Tx = prisma) => tx.user.count(),
    listUsers: (tx: Tx = prisma) => tx.user.findMany({ orderBy: { id: 'asc' }, include: { emailAddresses: true } }),
    setAdmin: (id: number, isAdmin: boolean, tx: Tx = prisma) => tx.user.update({ where: { id }, data: { isAdmin } }),
    /**
     * Makes `userId` an administrator when it is the only account. The lock makes two first signups
     * at once take turns, so the second sees the first and stays a plain account.
     */
    async claimFirstAdmin(userId: number, tx: Tx) {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('daybook:first-admin'))`;
      if ((await tx.user.count()) !== 1) return false;
      await tx.user.update({ where: { id: userId }, data: { isAdmin: true } });
      return true;
    },
    createUser(data: { email: string; passwordHash: string | null }, tx: Tx = prisma) {
      return tx.user.create({
        data: { ...data, emailAddresses: { create: { email: data.email, primary: true, verified: false } } },
      });
    },
    updateUser(
      id: number,
      data: Partial<
        Pick<
          UserRow,
          | 'passwordHash'
          | 'passwordChangedAt'
          | 'lastLoginAt'
          | 'isDailyMessagePaused'
          | 'learnFromChats'
          | 'isAdmin'
          | 'email'
          | 'dailyMessageTime'
          | 'dailyMessageEmail'
          | 'timeZone'
          | 'locationName'
          | 'locationCountry'
          | 'latitude'
          | 'longitude'
          | 'temperatureUnit'
        >
      >,
      tx: Tx = prisma,
    ) {
      return tx.user.update({ where: { id }, data });
    },

    // ---- email addresses ----
    listEmails: (userId: number, tx: Tx = prisma) =>
      tx.emailAddress.findMany({ where: { userId }, orderBy: [{ primary: 'desc' }, { id: 'asc' }] }),
    findEmail: (userId: number, email: string, tx: Tx = prisma) =>
      tx.emailAddress.findUnique({ where: { userId_email: { userId, email } } }),
    findEmailById: (id: number, tx: Tx = prisma) => tx.emailAddress.findUnique({ where: { id } }),
    /** Whether `email` is a verified address of `userId`; the app reads it on every GET /api/users/me/. */
    isEmailVerified: async (userId: number, email: string) =>
      (
        await query<{ verified: boolean }>(
          'SELECT verified FROM email_addresses WHERE user_id = $1 AND email = $2',
          [userId, email],
          'daybook_email_verified',
        )
      )[0]?.verified === true,
    isVerifiedElsewhere: async (email: string, userId: number, tx: Tx = prisma) =>
      (await tx.emailAddress.count({ where: { email, verified: true, NOT: { userId } } })) > 0,
    addEmail: (userId: number, email: string, tx: Tx = prisma) =>
      tx.emailAddress.create({ data: { userId, email, verified: false, primary: false } }),
    markVerified: (id: number, tx: Tx = prisma) => tx.emailAddress.update({ where: { id }, data: { verified: true } }),
    deleteEmail: (id: number, tx: Tx = prisma) => tx.emailAddress.delete({ where: { id } }),
    async setPrimary(userId: number, id: number, email: string, tx: Tx = prisma) {
      await tx.emailAddress.updateMany({ where: { userId, NOT: { id } }, data: { primary: false } });
      await tx.emailAddress.update({ where: { id }, data: { primary: true } });
      await tx.user.update({ where: { id: userId }, data: { email } });
    },

    // ---- sessions ----
    findSession: (id: string, tx: Tx = prisma) => tx.session.findUnique({ where: { id } }),
    /** The session and its user in one round trip. */
    async findSessionWithUser(id: string): Promise<SessionWithUser | null> {
      const [row] = await query<Record<string, unknown>>(SESSION_WITH_USER, [id], 'daybook_session_with_user');
      if (!row) return null;
      let user: UserRow | null = null;
      if (row['s.userId'] !== null) {
        user = {} as UserRow;
        for (const field of USER_FIELDS) (user as Record<string, unknown>)[field] = row[field];
      }
      return {
        id: row['s.id'] as string,
        userId: row['s.userId'] as number | null,
        data: row['s.data'] as SessionRow['data'],
        expiresAt: row['s.expiresAt'] as Date,
        user,
      };
    },
    /** One query: the session exists, has not expired, and belongs to an active user. */
    isSessionLive: async (id: string, now: Date) =>
      (
        await query<{ live: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.id = $1 AND s.expires_at > ($2::timestamptz AT TIME ZONE 'UTC') AND u.is_active) AS live`,
          [id, now.toISOString()],
          'daybook_session_live',
        )
      )[0]?.live === true,
    createSession: (data: { id: string; userId: number | null; data: object; expiresAt: Date }, tx: Tx = prisma) =>
      tx.session.create({ data }),
    updateSession: (
      id: string,
      data: { userId?: number | null; data?: object; expiresAt?: Date; lastSeenAt?: Date },
      tx: Tx = prisma,
    ) => tx.session.update({ where: { id }, data }),
    deleteSession: (id: string, tx: Tx = prisma) => tx.session.deleteMany({ where: { id } }),
    deleteUserSessions: (userId: number, exceptId?: string, tx: Tx = prisma) =>
      tx.session.deleteMany({ where: { userId, ...(exceptId ? { NOT: { id: exceptId } } : {}) } }),
    /** Ends them, keeping each row as nobody's session holding only `data` (why it ended), until it would have expired. */
    endUserSessions: (userId: number, exceptId: string | undefined, data: object, tx: Tx = prisma) =>
      tx.session.updateMany({
        where: { userId, ...(exceptId ? { NOT: { id: exceptId } } : {}) },
        data: { userId: null, data },
      }),
    deleteExpiredSessions: (now: Date, tx: Tx = prisma) => tx.session.deleteMany({ where: { expiresAt: { lt: now } } }),
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
