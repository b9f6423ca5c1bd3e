import type { PrismaClient } from '../../generated/prisma/client.ts';
import type { Tx } from '../accounts/accounts.repo.ts';

const withUses = { usedBy: { include: { user: { select: { email: true } } }, orderBy: { usedAt: 'asc' as const } } };

export function createInvitesRepo(prisma: PrismaClient) {
  return {
    create: (
      data: {
        tokenHash: string;
        email: string | null;
        maxUses: number | null;
        expiresAt: Date | null;
        createdById: number | null;
        grantsAdmin?: boolean;
      },
      tx: Tx = prisma,
    ) => tx.invite.create({ data, include: withUses }),
    findByHash: (tokenHash: string, tx: Tx = prisma) => tx.invite.findUnique({ where: { tokenHash } }),
    findById: (id: number, tx: Tx = prisma) => tx.invite.findUnique({ where: { id }, include: withUses }),
    list: (tx: Tx = prisma) => tx.invite.findMany({ orderBy: { id: 'desc' }, include: withUses }),
    revoke: (id: number, at: Date, tx: Tx = prisma) =>
      tx.invite.update({ where: { id }, data: { revokedAt: at }, include: withUses }),
    /**
     * Takes one use of the invite if it is still usable, in one statement, so two signups racing
     * for the last use cannot both win. Returns false when it was not usable.
     */
    async consume(id: number, now: Date, tx: Tx = prisma): Promise<boolean> {
      const changed = await tx.$executeRaw`
        UPDATE "invites" SET "uses" = "uses" + 1
        WHERE "id" = ${id} AND "revoked_at" IS NULL
          AND ("expires_at" IS NULL OR "expires_at" > ${now})
          AND ("max_uses" IS NULL OR "uses" < "max_uses")`;
      return changed === 1;
    },
    recordUse: (inviteId: number, userId: number, tx: Tx = prisma) =>
      tx.inviteUse.create({ data: { inviteId, userId } }),
  };
}

export type InvitesRepo = ReturnType<typeof createInvitesRepo>;
export type InviteWithUses = NonNullable<Awaited<ReturnType<InvitesRepo['findById']>>>;
