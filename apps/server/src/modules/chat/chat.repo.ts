import { parseUtcTimestamp, type Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

export type ChatMessageRow = Awaited<ReturnType<PrismaClient['chatMessage']['findUniqueOrThrow']>>;
export type Channel = 'chat' | 'onboarding';

// Every chat turn runs these, so they go straight to the driver (see Database.query).
const COLUMNS = `id, user_id AS "userId", channel, author_type AS "authorType", message_type AS "messageType",
  raw_text AS "rawText", url, created_at AS "createdAt"`;

type JsonMessage = Omit<ChatMessageRow, 'createdAt'> & { createdAt: string };

export function createChatRepo(prisma: PrismaClient, query: Query) {
  return {
    async create(data: {
      userId: number;
      channel: Channel;
      authorType: string;
      messageType: string;
      rawText: string;
      url?: string | null;
    }): Promise<ChatMessageRow> {
      const [row] = await query<ChatMessageRow>(
        `INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
        [data.userId, data.channel, data.authorType, data.messageType, data.rawText, data.url ?? null],
      );
      if (!row) throw new Error('insert returned no row');
      return row;
    },
    /**
     * A chat turn's first round trip: stores the human message and, in the same statement, reads the
     * `limit` messages before it and runs `extra`, another repo's query (e.g. the memories the reply
     * needs) built with its parameters numbered from `first`. Returns the stored message, the earlier
     * messages (oldest first) and `extra`'s rows as JSON objects.
     */
    async startTurn(
      data: { userId: number; channel: Channel; rawText: string },
      limit: number,
      extra: (first: number) => { sql: string; params: unknown[] },
    ): Promise<{ human: ChatMessageRow; before: ChatMessageRow[]; extra: Array<Record<string, unknown>> }> {
      const params: unknown[] = [data.userId, data.channel, 'human', 'message', data.rawText, limit];
      const inner = extra(params.length + 1);
      const [row] = await query<Record<string, unknown>>(
        `WITH human AS (
           INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url)
           VALUES ($1, $2, $3, $4, $5, NULL) RETURNING ${COLUMNS}
         )
         SELECT human.*,
           (SELECT json_agg(m) FROM (SELECT ${COLUMNS} FROM chat_messages
              WHERE user_id = $1 AND channel = $2 AND id < human.id ORDER BY id DESC LIMIT $6) m) AS before,
           (SELECT json_agg(x) FROM (${inner.sql}) x) AS extra
         FROM human`,
        [...params, ...inner.params],
      );
      if (!row) throw new Error('insert returned no row');
      const {
        before,
        extra: rows,
        ...human
      } = row as unknown as ChatMessageRow & {
        before: JsonMessage[] | null;
        extra: Array<Record<string, unknown>> | null;
      };
      return {
        human,
        before: (before ?? []).map((m) => ({ ...m, createdAt: parseUtcTimestamp(m.createdAt) })).reverse(),
        extra: rows ?? [],
      };
    },
    /** Up to `limit` messages before `before` (newest first), plus whether more exist. */
    async page(userId: number, channel: Channel, limit: number, before?: number) {
      const rows = await query<ChatMessageRow>(
        `SELECT ${COLUMNS} FROM chat_messages
         WHERE user_id = $1 AND channel = $2 AND ($3::int IS NULL OR id < $3)
         ORDER BY id DESC LIMIT $4`,
        [userId, channel, before ?? null, limit + 1],
      );
      return { rows: rows.slice(0, limit).reverse(), hasMore: rows.length > limit };
    },
    /** The first finish counts; a late second one (another tab) keeps that date. */
    markOnboarded: (userId: number, at: Date) =>
      prisma.user.updateMany({ where: { id: userId, onboardedAt: null }, data: { onboardedAt: at } }),
  };
}

export type ChatRepo = ReturnType<typeof createChatRepo>;
