// New researches: a daily message's, and one asked for in the chat within the user's daily limit.
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { COLUMNS, lockUser, NOW, oneRow, type ResearchOrigin, type ResearchRow } from './research.rows.repo.ts';

export function createResearchRequestsRepo(
  prisma: PrismaClient,
  query: Query,
  byId: (id: number) => Promise<ResearchRow | null>,
) {
  const one = oneRow(query);
  return {
    async create(data: {
      userId: number;
      query: string;
      origin: ResearchOrigin;
      requestMessageId?: number | null;
      dailyMessageId?: number | null;
    }): Promise<ResearchRow> {
      const row = await one(
        `INSERT INTO researches (user_id, query, origin, request_message_id, daily_message_id, created_at)
         VALUES ($1, $2, $3, $4, $5, ${NOW}) RETURNING ${COLUMNS}`,
        [data.userId, data.query, data.origin, data.requestMessageId ?? null, data.dailyMessageId ?? null],
      );
      if (!row) throw new Error('insert returned no row');
      return row;
    },

    /**
     * Creates a research asked for in the chat unless the user already asked for `limit` since
     * `since`: counted and inserted under the user's advisory lock, so concurrent requests (on
     * several instances too) never pass the limit together. Null when over it.
     */
    async createWithinLimit(
      data: { userId: number; query: string; requestMessageId?: number | null },
      limit: number,
      since: Date,
    ): Promise<ResearchRow | null> {
      const id = await prisma.$transaction(async (tx) => {
        await lockUser(tx, data.userId);
        const [count] = await tx.$queryRawUnsafe<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM researches
           WHERE user_id = $1 AND origin = 'chat' AND created_at >= ($2::timestamptz AT TIME ZONE 'UTC')`,
          data.userId,
          since.toISOString(),
        );
        if ((count?.n ?? 0) >= limit) return null;
        const [row] = await tx.$queryRawUnsafe<{ id: number }[]>(
          `INSERT INTO researches (user_id, query, origin, request_message_id, created_at)
           VALUES ($1, $2, 'chat', $3, ${NOW}) RETURNING id`,
          data.userId,
          data.query,
          data.requestMessageId ?? null,
        );
        return row?.id ?? null;
      });
      return id === null ? null : byId(id);
    },
  };
}
