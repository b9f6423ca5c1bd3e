// The admin area's view of accounts: listing users and changing their standing.
import type { Query, Tx } from '../../db/database.ts';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.ts';

// The primary address's state, and the newest session: a signup signs in without a password login.
const withPrimary = {
  emailAddresses: { where: { primary: true }, select: { verified: true } },
  sessions: { select: { createdAt: true }, orderBy: { createdAt: 'desc' }, take: 1 },
} as const;

/** `text` as an ILIKE pattern matching it anywhere, its wildcards taken literally ("a_b" finds that, not "axb"). */
const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A user as the admin list shows them; times are ISO 8601 text, formatted by PostgreSQL (see `listUsers`). */
export interface AdminUserListRow {
  id: number;
  email: string;
  dateJoined: string;
  lastLogin: string | null;
  emailVerified: boolean;
  isActive: boolean;
  isAdmin: boolean;
}

// toISOString's form, written by PostgreSQL: cheaper than parsing into Dates and formatting again.
const iso = (value: string) => `to_char(${value}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The page and the count in one statement, straight to the driver. The page comes from the
 * users_created_at_id index (newest first, the id breaking ties so pages never overlap); each row's
 * primary address and newest session (a signup signs in without a password login) from their
 * user_id indexes. Parameters: $1 limit, $2 offset, and with a search $3 the ILIKE pattern.
 *
 * The limit and offset are sub-selects so that no plan knows their values: with plain `LIMIT $1`,
 * PostgreSQL rates its one cached plan (costed for an unknown limit) dearer than a plan for LIMIT 25
 * and so plans the statement again on every execution, which took more time than running it.
 */
const listUsersSql = (where: string) => `
  SELECT c.total, page.* FROM (SELECT count(*)::int AS total FROM users ${where}) c
  LEFT JOIN LATERAL (
    SELECT u.id, u.email, ${iso('u.created_at')} AS "dateJoined",
      ${iso('greatest(u.last_login_at, s.at)')} AS "lastLogin",
      coalesce(e.verified, false) AS "emailVerified", u.is_active AS "isActive", u.is_admin AS "isAdmin"
    FROM (SELECT id, email, created_at, last_login_at, is_active, is_admin FROM users ${where}
          ORDER BY created_at DESC, id DESC LIMIT (SELECT $1::int) OFFSET (SELECT $2::int)) u
    LEFT JOIN LATERAL (SELECT max(created_at) AS at FROM sessions WHERE user_id = u.id) s ON true
    LEFT JOIN LATERAL (
      SELECT verified FROM email_addresses WHERE user_id = u.id AND "primary" ORDER BY id LIMIT 1
    ) e ON true
    ORDER BY u.created_at DESC, u.id DESC
  ) page ON true`;
const LIST_ALL = listUsersSql('');
const LIST_MATCHING = listUsersSql('WHERE email ILIKE $3');

export function createAdminRepo(prisma: PrismaClient, query: Query) {
  return {
    transaction<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
      return prisma.$transaction(fn);
    },

    async listUsers({ search, limit, offset }: { search: string; limit: number; offset: number }) {
      const found = search
        ? await query<AdminUserListRow & { total: number }>(LIST_MATCHING, [limit, offset, containsPattern(search)])
        : await query<AdminUserListRow & { total: number }>(LIST_ALL, [limit, offset], 'daybook_admin_users_page');
      // Past the last page the one row carries the count alone.
      const count = found[0]?.total ?? 0;
      const rows: AdminUserListRow[] = found[0]?.id == null ? [] : found.map(({ total: _, ...row }) => row);
      return { rows, count };
    },

    findUser: (id: number, tx: Tx = prisma) => tx.user.findUnique({ where: { id }, include: withPrimary }),
  };
}

export type AdminRepo = ReturnType<typeof createAdminRepo>;
export type AdminUserRow = NonNullable<Awaited<ReturnType<AdminRepo['findUser']>>>;
