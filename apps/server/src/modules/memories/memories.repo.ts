import { parseUtcTimestamp, type Query } from '../../db/database.ts';
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

export interface SelectionLimits {
  core: number;
  relevant: number;
  recent: number;
}
export interface MemorySelection {
  core: MemoryRow[];
  relevant: MemoryRow[];
  recent: MemoryRow[];
}

// Chat turns select memories, so that query goes straight to the driver (see Database.query).
const COLUMNS = `id, user_id AS "userId", key, data, memory_type AS "memoryType", url,
  frequency_description AS "frequencyDescription", source, source_message_id AS "sourceMessageId",
  created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt", deleted_reason AS "deletedReason"`;

/**
 * SQL for the memories a prompt needs: always-included core facts (where the user lives, their
 * name, their time zone), the best matches for `text` by Postgres full-text ranking, and the most
 * recently changed; bounded by the limits however many memories the user has. Rows carry `pick`.
 * Parameters are numbered from `$<first>`, so the query can sit inside a larger statement.
 */
export function selectionQuery(userId: number, text: string, limits: SelectionLimits, first = 1) {
  // Words only (letters and digits), so the tsquery syntax cannot be broken by user text.
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].slice(0, 40);
  const params: unknown[] = [userId];
  const $ = (value: unknown) => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  const active = `user_id = $${first} AND deleted_at IS NULL`;
  const parts = [
    `(SELECT 'core' AS pick, ${COLUMNS} FROM memories
      WHERE ${active} AND (memory_type = 'location' OR key ILIKE '%name%' OR key ILIKE '%time zone%' OR key ILIKE '%timezone%')
      ORDER BY updated_at DESC, id DESC LIMIT ${$(limits.core)})`,
  ];
  if (words.length && limits.relevant > 0) {
    const document = `to_tsvector('simple', key || ' ' || data || ' ' || coalesce(frequency_description, ''))`;
    parts.push(`(SELECT 'relevant' AS pick, ${COLUMNS} FROM memories, to_tsquery('simple', ${$(words.join(' | '))}) q
      WHERE ${active} AND ${document} @@ q
      ORDER BY ts_rank(${document}, q) DESC, id DESC LIMIT ${$(limits.relevant)})`);
  }
  if (limits.recent > 0) {
    parts.push(`(SELECT 'recent' AS pick, ${COLUMNS} FROM memories
      WHERE ${active} ORDER BY updated_at DESC, id DESC LIMIT ${$(limits.recent)})`);
  }
  return { sql: parts.join(' UNION ALL '), params };
}

function groupSelection(rows: Array<MemoryRow & { pick: keyof MemorySelection }>): MemorySelection {
  const selection: MemorySelection = { core: [], relevant: [], recent: [] };
  for (const { pick, ...row } of rows) selection[pick].push(row);
  return selection;
}

/** A selection row that came back as JSON (inside a larger statement): its times as Dates again. */
function memoryFromJson(row: Record<string, unknown>): MemoryRow & { pick: keyof MemorySelection } {
  return {
    ...(row as unknown as MemoryRow & { pick: keyof MemorySelection }),
    createdAt: parseUtcTimestamp(row.createdAt as string),
    updatedAt: parseUtcTimestamp(row.updatedAt as string),
    deletedAt: typeof row.deletedAt === 'string' ? parseUtcTimestamp(row.deletedAt) : null,
  };
}

/** Postgres' unique_violation on the active-key index, as Prisma reports it. */
export const isDuplicateKey = (err: unknown) => (err as { code?: string }).code === 'P2002';

export function createMemoriesRepo(prisma: PrismaClient, query: Query) {
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
      // Imports of thousands of memories take longer than Prisma's default of 5 s on a busy server.
      return prisma.$transaction(fn, { timeout: 60_000, maxWait: 10_000 });
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
    findActiveByKeys: (userId: number, keys: string[], tx: Tx = prisma) =>
      tx.memory.findMany({ where: { userId, key: { in: keys }, deletedAt: null } }),
    async createMany(userId: number, rows: MemoryFields[], source: string, tx: Tx = prisma) {
      const { count } = await tx.memory.createMany({ data: rows.map((fields) => ({ userId, ...fields, source })) });
      return count;
    },
    listActive: (userId: number) =>
      prisma.memory.findMany({ where: { userId, deletedAt: null }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    create: (
      userId: number,
      fields: MemoryFields & { source: string; sourceMessageId?: number | null },
      tx: Tx = prisma,
    ) => tx.memory.create({ data: { userId, ...fields } }),
    /** The selection as SQL, for a caller that runs it within its own statement (see ChatRepo.startTurn). */
    selectionQuery,
    /** Selection rows that came back as JSON from such a statement. */
    selectionFromJson: (rows: Array<Record<string, unknown>>) => groupSelection(rows.map(memoryFromJson)),
    /** The memories a prompt needs (see selectionQuery), in a query of their own. */
    async select(userId: number, text: string, limits: SelectionLimits): Promise<MemorySelection> {
      const { sql, params } = selectionQuery(userId, text, limits);
      const rows = await query<MemoryRow & { pick: keyof MemorySelection }>(sql, params);
      return groupSelection(rows);
    },
    purge: (id: number, tx: Tx = prisma) => tx.memory.delete({ where: { id } }),
    update: (
      id: number,
      fields: Partial<MemoryFields> & { deletedAt?: Date | null; deletedReason?: string | null },
      tx: Tx = prisma,
    ) => tx.memory.update({ where: { id }, data: fields }),
  };
}

export type MemoriesRepo = ReturnType<typeof createMemoriesRepo>;
