import type { Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import type { Tx } from '../accounts/accounts.repo.ts';

export type MemoryRow = Awaited<ReturnType<PrismaClient['memory']['findUniqueOrThrow']>>;

export interface MemoryFields {
  key: string;
  data: string;
  memoryType: string;
  url: string | null;
  frequencyDescription: string | null;
}

export interface ListOptions {
  deleted: boolean;
  search?: string;
  limit: number;
  offset: number;
}

/** Postgres' unique_violation on the active-key index, as Prisma reports it. */
export const isDuplicateKey = (err: unknown) => (err as { code?: string }).code === 'P2002';

export function createMemoriesRepo(prisma: PrismaClient) {
  const where = (
    userId: number,
    { deleted, search }: Pick<ListOptions, 'deleted' | 'search'>,
  ): Prisma.MemoryWhereInput => ({
    userId,
    deletedAt: deleted ? { not: null } : null,
    ...(search
      ? {
          OR: [{ key: { contains: search, mode: 'insensitive' } }, { data: { contains: search, mode: 'insensitive' } }],
        }
      : {}),
  });

  return {
    transaction<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
      return prisma.$transaction(fn);
    },
    async list(userId: number, options: ListOptions) {
      const filter = where(userId, options);
      // Newest first; the id breaks ties so pages never overlap or skip.
      const orderBy: Prisma.MemoryOrderByWithRelationInput[] = options.deleted
        ? [{ deletedAt: 'desc' }, { id: 'desc' }]
        : [{ createdAt: 'desc' }, { id: 'desc' }];
      const [rows, count] = await Promise.all([
        prisma.memory.findMany({ where: filter, orderBy, take: options.limit, skip: options.offset }),
        prisma.memory.count({ where: filter }),
      ]);
      return { rows, count };
    },
    /** The memory if it belongs to `userId`; null otherwise, so other users' ids look unknown. */
    find: (userId: number, id: number, tx: Tx = prisma) => tx.memory.findFirst({ where: { id, userId } }),
    findActiveByKey: (userId: number, key: string, tx: Tx = prisma) =>
      tx.memory.findFirst({ where: { userId, key, deletedAt: null } }),
    listActive: (userId: number) =>
      prisma.memory.findMany({ where: { userId, deletedAt: null }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    create: (
      userId: number,
      fields: MemoryFields & { source: string; sourceMessageId?: number | null },
      tx: Tx = prisma,
    ) => tx.memory.create({ data: { userId, ...fields } }),
    /** Always-included facts: where the user lives, their name, their time zone. */
    core: (userId: number, limit: number) =>
      prisma.memory.findMany({
        where: {
          userId,
          deletedAt: null,
          OR: [
            { memoryType: 'location' },
            { key: { contains: 'name', mode: 'insensitive' } },
            { key: { contains: 'time zone', mode: 'insensitive' } },
            { key: { contains: 'timezone', mode: 'insensitive' } },
          ],
        },
        orderBy: { updatedAt: 'desc' },
        take: limit,
      }),
    /** The active memories that best match any word of `text`, by Postgres full-text ranking. */
    relevant(userId: number, text: string, limit: number): Promise<MemoryRow[]> {
      // Words only (letters and digits), so the tsquery syntax cannot be broken by user text.
      const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].slice(0, 40);
      if (!words.length) return Promise.resolve([]);
      const query = words.join(' | ');
      return prisma.$queryRaw<MemoryRow[]>`
        SELECT id, user_id AS "userId", key, data, memory_type AS "memoryType", url,
               frequency_description AS "frequencyDescription", source, source_message_id AS "sourceMessageId",
               created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt", deleted_reason AS "deletedReason"
        FROM memories, to_tsquery('simple', ${query}) q
        WHERE user_id = ${userId} AND deleted_at IS NULL
          AND to_tsvector('simple', key || ' ' || data || ' ' || coalesce(frequency_description, '')) @@ q
        ORDER BY ts_rank(to_tsvector('simple', key || ' ' || data || ' ' || coalesce(frequency_description, '')), q) DESC, id DESC
        LIMIT ${limit}`;
    },
    recent: (userId: number, limit: number) =>
      prisma.memory.findMany({
        where: { userId, deletedAt: null },
        orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
        take: limit,
      }),
    purge: (id: number, tx: Tx = prisma) => tx.memory.delete({ where: { id } }),
    update: (
      id: number,
      fields: Partial<MemoryFields> & { deletedAt?: Date | null; deletedReason?: string | null },
      tx: Tx = prisma,
    ) => tx.memory.update({ where: { id }, data: fields }),
  };
}

export type MemoriesRepo = ReturnType<typeof createMemoriesRepo>;
