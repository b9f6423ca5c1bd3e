import type { Query, Tx } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

const withUses = { usedBy: { include: { user: { select: { email: true } } }, orderBy: { usedAt: 'asc' as const } } };

/** An invite as the admin list shows it: its uses already in the API's form (see `list`). */
export interface InviteListRow {
  id: number;
  email: string | null;
  maxUses: number | null;
  uses: number;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
  usedBy: Array<{ email: string; used_at: string }>;
}

/**
 * Every invite, newest first, with its uses (oldest first) as JSON, in one statement: Prisma's
 * include took three queries and most of the request's time. The uses are grouped in one pass, as
 * invite_uses has no index by invite; their times are written by PostgreSQL in toISOString's form.
 */
const LIST = `
  SELECT i.id, i.email, i.max_uses AS "maxUses", i.uses, i.expires_at AS "expiresAt",
    i.revoked_at AS "revokedAt", i.created_at AS "createdAt", coalesce(g.used_by, '[]') AS "usedBy"
  FROM invites i
  LEFT JOIN (
    SELECT x.invite_id, json_agg(json_build_object(
        'email', u.email, 'used_at', to_char(x.used_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      ) ORDER BY x.used_at, x.id) AS used_by
    FROM invite_uses x JOIN users u ON u.id = x.user_id
    GROUP BY x.invite_id
  ) g ON g.invite_id = i.id
  ORDER BY i.id DESC`;

/** Through Prisma, for callers without the driver's query (the CLI). */
const prismaQuery =
  (prisma: PrismaClient): Query =>
  <T>(text: string, params: unknown[] = []) =>
    prisma.$queryRawUnsafe<T[]>(text, ...params);

export function createInvitesRepo(prisma: PrismaClient, query: Query = prismaQuery(prisma)) {
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
    list: () => query<InviteListRow>(LIST, [], 'daybook_invites_list'),
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
