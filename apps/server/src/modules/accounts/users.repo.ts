// The writes other modules ask of the `users` table (onboarding, daily settings, an administrator's
// changes, deletion), each taking the caller's transaction where it is part of one.
import type { Query, Tx } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

export function createUsersRepo(prisma: PrismaClient, query: Query) {
  return {
    lockAdmins: (tx: Tx) => tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('daybook:admins'))`,
    standing: (id: number, tx: Tx = prisma) =>
      tx.user.findUnique({ where: { id }, select: { isAdmin: true, isActive: true } }),
    countOtherActiveAdmins: (id: number, tx: Tx = prisma) =>
      tx.user.count({ where: { isAdmin: true, isActive: true, NOT: { id } } }),
    countOthers: (id: number, tx: Tx = prisma) => tx.user.count({ where: { NOT: { id } } }),
    setStanding: (id: number, data: { isActive?: boolean; isAdmin?: boolean }, tx: Tx = prisma) =>
      tx.user.update({ where: { id }, data, select: { id: true } }),
    markOnboarded: (id: number, at: Date) =>
      prisma.user.updateMany({ where: { id, onboardedAt: null }, data: { onboardedAt: at } }),
    setDailyPaused: (id: number) => prisma.user.updateMany({ where: { id }, data: { isDailyMessagePaused: true } }),
    applyFoundSettings: (id: number, s: FoundSettings) =>
      query(
        `UPDATE users SET
           time_zone = COALESCE($2, time_zone),
           daily_message_time = COALESCE($3, daily_message_time),
           location_name = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $4 ELSE location_name END,
           location_country = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $5 ELSE location_country END,
           latitude = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $6 ELSE latitude END,
           longitude = CASE WHEN location_name IS NULL AND $4::text IS NOT NULL THEN $7 ELSE longitude END
         WHERE id = $1`,
        [
          id,
          s.timeZone ?? null,
          s.dailyMessageTime ?? null,
          s.location?.name ?? null,
          s.location?.countryCode ?? null,
          s.location?.latitude ?? null,
          s.location?.longitude ?? null,
        ],
      ),
    /** The user, and signed-out sessions that remember them in a pending verification step. */
    async delete(id: number, tx: Tx): Promise<boolean> {
      await tx.$executeRaw`
        DELETE FROM "sessions"
        WHERE "user_id" IS NULL AND ("data" -> 'pendingVerify' ->> 'userId') = ${String(id)}`;
      return (await tx.user.deleteMany({ where: { id } })).count === 1;
    },
  };
}

/** Settings the onboarding found; each only where the user has not set it (the browser's zone excepted). */
export interface FoundSettings {
  timeZone?: string;
  dailyMessageTime?: string;
  location?: { name: string; countryCode: string | null; latitude: number; longitude: number };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
