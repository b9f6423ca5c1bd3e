// A user's own rows, read in pages for the export, and deleted all at once with the account.
import type { PrismaClient } from '../../generated/prisma/client.ts';
import type { Tx } from '../accounts/accounts.repo.ts';

/** Rows per read: a page of the largest table is a few megabytes at most. */
export const EXPORT_PAGE_SIZE = 500;

/** Pages in id order: the cursor is the last id read, so a page costs the same at any depth. */
const page = { orderBy: { id: 'asc' as const }, take: EXPORT_PAGE_SIZE };

export function createAccountDataRepo(prisma: PrismaClient) {
  /** Whether deleting `userId` would leave other accounts without an active administrator. */
  async function isLastAdmin(userId: number, tx: Tx = prisma): Promise<boolean> {
    const [otherAdmins, otherUsers] = await Promise.all([
      tx.user.count({ where: { isAdmin: true, isActive: true, NOT: { id: userId } } }),
      tx.user.count({ where: { NOT: { id: userId } } }),
    ]);
    return otherAdmins === 0 && otherUsers > 0;
  }

  return {
    findUser: (userId: number) =>
      prisma.user.findUnique({
        where: { id: userId },
        include: { emailAddresses: { orderBy: [{ primary: 'desc' }, { id: 'asc' }] } },
      }),

    memories: (userId: number, after: number) =>
      prisma.memory.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          key: true,
          data: true,
          memoryType: true,
          url: true,
          frequencyDescription: true,
          source: true,
          createdAt: true,
          updatedAt: true,
          deletedAt: true,
          deletedReason: true,
        },
      }),

    chatMessages: (userId: number, after: number) =>
      prisma.chatMessage.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          channel: true,
          authorType: true,
          messageType: true,
          rawText: true,
          url: true,
          createdAt: true,
          replyToId: true,
        },
      }),

    dailyMessages: (userId: number, after: number) =>
      prisma.dailyMessage.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          localDate: true,
          status: true,
          trigger: true,
          messageText: true,
          createdAt: true,
          deliveredAt: true,
          emailedAt: true,
          researches: { select: { id: true }, orderBy: { id: 'asc' } },
        },
      }),

    researches: (userId: number, after: number) =>
      prisma.research.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          query: true,
          status: true,
          origin: true,
          introduction: true,
          body: true,
          conclusion: true,
          sources: true,
          error: true,
          createdAt: true,
          finishedAt: true,
          dailyMessageId: true,
          requestMessageId: true,
        },
      }),

    /** Only what the user sees of a connection: never `secret` (tokens, ICS address) or `uid`. */
    calendarConnections: (userId: number) =>
      prisma.calendarConnection.findMany({
        where: { userId },
        orderBy: { id: 'asc' },
        select: { provider: true, display: true, status: true, createdAt: true, lastSyncedAt: true },
      }),

    isLastAdmin,

    /**
     * Deletes the user; every table that names them cascades (addresses, sessions, memories, chat,
     * researches, daily messages, calendar connections and OAuth states, invite uses), and invites
     * they created stay for the other administrators (created_by becomes null). What no foreign
     * key reaches goes in the same transaction: their rate-limit rows (keyed by id or address),
     * the realtime bus's recent events about them, and signed-out sessions that remember them in a
     * pending verification step.
     * 'last_admin' (nothing deleted) when the user is, by now, the last active administrator: the
     * check takes the admin area's lock, so two administrators leaving at once (or one leaving while
     * demoting the other) cannot both go.
     */
    deleteUser(userId: number, emails: string[]): Promise<boolean | 'last_admin'> {
      return prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('daybook:admins'))`;
        const user = await tx.user.findUnique({ where: { id: userId }, select: { isAdmin: true, isActive: true } });
        if (user?.isAdmin && user.isActive && (await isLastAdmin(userId, tx))) return 'last_admin';
        // Keyed by their id, or by one of their addresses (`login_failed:key:<address>`,
        // `invite_mail:to:<address>`, ...).
        await tx.$executeRaw`
          DELETE FROM "rate_limit_hits"
          WHERE "key" LIKE ${`%:user:${userId}`}
             OR ("key" ~ '^[a-z_]+:(key|to):' AND regexp_replace("key", '^[a-z_]+:(key|to):', '') = ANY(${emails}::text[]))`;
        // What the realtime bus keeps for other instances (minutes of it) holds their chat's text.
        await tx.$executeRaw`DELETE FROM "realtime_events" WHERE "payload" ->> 'userId' = ${String(userId)}`;
        await tx.$executeRaw`
          DELETE FROM "sessions"
          WHERE "user_id" IS NULL AND ("data" -> 'pendingVerify' ->> 'userId') = ${String(userId)}`;
        const deleted = await tx.user.deleteMany({ where: { id: userId } });
        return deleted.count === 1;
      });
    },
  };
}

export type AccountDataRepo = ReturnType<typeof createAccountDataRepo>;
