// The rate limits' table: one row per counted attempt, so limits hold across restarts and every
// instance sharing the database.
import type { Tx } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

/**
 * How long a rate-limit reservation may wait for a connection, and run. A burst (100 parallel
 * sign-ins) queues for the pool: Prisma's defaults (2 s, 5 s) answered part of it with 500 on a busy
 * machine. It waits as long as any slow request would.
 */
const RESERVE_TX = { maxWait: 15_000, timeout: 15_000 };

export function createRateLimitRepo(prisma: PrismaClient) {
  return {
    /**
     * Counts and records one hit on every key at once, or none when a key is full. Each key's
     * advisory lock serialises its count-then-insert across connections and instances.
     */
    reserveHits(limits: Array<{ key: string; max: number; since: Date }>, at: Date) {
      return prisma.$transaction(async (tx): Promise<{ ids: bigint[] } | { fullSince: Date; key: string }> => {
        // Sorted, so two reservations over the same keys never wait on each other in a cycle.
        for (const key of [...new Set(limits.map((l) => l.key))].sort()) {
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${key}))`;
        }
        for (const { key, max, since } of limits) {
          const hits = await tx.rateLimitHit.findMany({
            where: { key, at: { gt: since } },
            orderBy: { at: 'desc' },
            take: max,
            select: { at: true },
          });
          // The oldest of the newest `max` hits: once it leaves the window there is room again.
          if (hits.length >= max) return { key, fullSince: hits[max - 1]?.at ?? at };
        }
        const ids: bigint[] = [];
        for (const { key } of limits) ids.push((await tx.rateLimitHit.create({ data: { key, at } })).id);
        return { ids };
      }, RESERVE_TX);
    },
    deleteHits: (ids: bigint[], tx: Tx = prisma) => tx.rateLimitHit.deleteMany({ where: { id: { in: ids } } }),
    clearHits: (key: string, tx: Tx = prisma) => tx.rateLimitHit.deleteMany({ where: { key } }),
    deleteHitsBefore: (before: Date, tx: Tx = prisma) => tx.rateLimitHit.deleteMany({ where: { at: { lt: before } } }),
    /** Keyed by their id, or by one of their addresses (`login_failed:key:<address>`, `invite_mail:to:<address>`, ...). */
    deleteUserHits: (userId: number, emails: string[], tx: Tx) => tx.$executeRaw`
      DELETE FROM "rate_limit_hits"
      WHERE "key" LIKE ${`%:user:${userId}`}
         OR ("key" ~ '^[a-z_]+:(key|to):' AND regexp_replace("key", '^[a-z_]+:(key|to):', '') = ANY(${emails}::text[]))`,
  };
}

export type RateLimitRepo = ReturnType<typeof createRateLimitRepo>;
