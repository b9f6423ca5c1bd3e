// The admin area's view of accounts: listing users and changing their standing.
import type { Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import type { Tx } from '../accounts/accounts.repo.ts';

// The primary address's state, and the newest session: a signup signs in without a password login.
const withPrimary = {
  emailAddresses: { where: { primary: true }, select: { verified: true } },
  sessions: { select: { createdAt: true }, orderBy: { createdAt: 'desc' }, take: 1 },
} as const;

/** Escapes LIKE's wildcards, so a search for "a_b" finds that text and not "axb". */
const likeText = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export function createAdminRepo(prisma: PrismaClient) {
  return {
    transaction<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
      return prisma.$transaction(fn);
    },

    async listUsers({ search, limit, offset }: { search: string; limit: number; offset: number }) {
      const where: Prisma.UserWhereInput = search ? { email: { contains: likeText(search), mode: 'insensitive' } } : {};
      const [rows, count] = await prisma.$transaction([
        prisma.user.findMany({
          where,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: limit,
          skip: offset,
          include: withPrimary,
        }),
        prisma.user.count({ where }),
      ]);
      return { rows, count };
    },

    findUser: (id: number, tx: Tx = prisma) => tx.user.findUnique({ where: { id }, include: withPrimary }),

    updateUser: (id: number, data: { isActive?: boolean; isAdmin?: boolean }, tx: Tx = prisma) =>
      tx.user.update({ where: { id }, data, include: withPrimary }),

    countActiveAdmins: (exceptId: number, tx: Tx = prisma) =>
      tx.user.count({ where: { isAdmin: true, isActive: true, NOT: { id: exceptId } } }),

    /** Changes to who is an active administrator take turns, so two at once cannot remove the last one. */
    async lockAdmins(tx: Tx) {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('daybook:admins'))`;
    },
  };
}

export type AdminRepo = ReturnType<typeof createAdminRepo>;
export type AdminUserRow = NonNullable<Awaited<ReturnType<AdminRepo['findUser']>>>;
