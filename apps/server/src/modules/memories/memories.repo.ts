// The memories table. The Memories page's reads, the prompt's selection and the export's batches
// are factories of their own (memories.*.repo.ts); this puts them together with the writes.
import type { Query, Tx } from '../../db/database.ts';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.ts';
import { createMemoryExportRepo } from './memories.export.repo.ts';
import { createMemoryPagesRepo } from './memories.pages.repo.ts';
import { COLUMNS, createMemorySelectionRepo, type MemoryRow } from './memories.selection.repo.ts';

export { EXPORT_BATCH, type ExportBatch, type ExportCursor } from './memories.export.repo.ts';
export type { ListOptions } from './memories.pages.repo.ts';
export {
  type MemoryRow,
  type MemorySelection,
  type SelectionLimits,
  selectionQuery,
} from './memories.selection.repo.ts';

/** A transaction from `transaction()`. */
export type WriteTx = Prisma.TransactionClient;

export interface MemoryFields {
  key: string;
  data: string;
  memoryType: string;
  url: string | null;
  frequencyDescription: string | null;
}

// First half of the advisory lock key that serialises one user's memory writes (the user id is the second).
const WRITE_LOCK = 0x6d656d; // "mem"
/** Rows per INSERT of an import: small enough that each batch leaves the event loop free quickly. */
const INSERT_BATCH = 1000;

/** Postgres' unique_violation on the active-key index, as Prisma reports it. */
export const isDuplicateKey = (err: unknown) => (err as { code?: string }).code === 'P2002';

export function createMemoriesRepo(prisma: PrismaClient, query: Query) {
  return {
    transaction<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
      // Imports of thousands of memories take longer than Prisma's default of 5 s on a busy server.
      return prisma.$transaction(fn, { timeout: 60_000, maxWait: 10_000 });
    },
    // list, version, search, pageByIds.
    ...createMemoryPagesRepo(query),
    /**
     * Holds back the user's other counted writes until `tx` ends, on every server instance, so two
     * of them cannot both see room for one more memory.
     */
    async lockWrites(userId: number, tx: WriteTx) {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${WRITE_LOCK}::int, ${userId}::int)`;
    },
    /** From memory_counts, which the memories table's triggers keep in the same transaction. */
    countActive: async (userId: number, tx: Tx = prisma) =>
      (await tx.memoryCount.findUnique({ where: { userId }, select: { active: true } }))?.active ?? 0,
    /** The memory if it belongs to `userId`; null otherwise, so other users' ids look unknown. */
    find: (userId: number, id: number, tx: Tx = prisma) => tx.memory.findFirst({ where: { id, userId } }),
    /** `find` outside a transaction, straight to the driver (a memory's own page reads it). */
    findOne: async (userId: number, id: number): Promise<MemoryRow | null> =>
      (
        await query<MemoryRow>(
          `SELECT ${COLUMNS} FROM memories WHERE id = $1 AND user_id = $2`,
          [id, userId],
          'daybook_memory_by_id',
        )
      )[0] ?? null,
    findActiveByKey: (userId: number, key: string, tx: Tx = prisma) =>
      tx.memory.findFirst({ where: { userId, key, deletedAt: null } }),
    findActiveByKeys: (userId: number, keys: string[], tx: Tx = prisma) =>
      tx.memory.findMany({ where: { userId, key: { in: keys }, deletedAt: null } }),
    /**
     * Plain SQL in batches: Prisma's createMany of an import's 10,000 rows held the event loop (so
     * every user's request) for seconds; a batch is a few arrays, and others' requests run between.
     */
    async createMany(userId: number, rows: MemoryFields[], source: string, tx: Tx = prisma) {
      let count = 0;
      for (let i = 0; i < rows.length; i += INSERT_BATCH) {
        const batch = rows.slice(i, i + INSERT_BATCH);
        const column = <K extends keyof MemoryFields>(name: K) => batch.map((row) => row[name]);
        count += await tx.$executeRaw`
          INSERT INTO memories (user_id, key, data, memory_type, url, frequency_description, source, created_at, updated_at)
          SELECT ${userId}::int, k, d, t, u, f, ${source}, now(), now()
          FROM unnest(${column('key')}::text[], ${column('data')}::text[], ${column('memoryType')}::text[],
                      ${column('url')}::text[], ${column('frequencyDescription')}::text[])
               WITH ORDINALITY AS x(k, d, t, u, f, n)
          ORDER BY n`;
      }
      return count;
    },
    // exportBatch.
    ...createMemoryExportRepo(query),
    /** Oldest first; `limit` for callers that need only the first few. */
    listActive: (userId: number, limit?: number) =>
      prisma.memory.findMany({
        where: { userId, deletedAt: null },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        ...(limit ? { take: limit } : {}),
      }),
    create: (
      userId: number,
      fields: MemoryFields & { source: string; sourceMessageId?: number | null },
      tx: Tx = prisma,
    ) => tx.memory.create({ data: { userId, ...fields } }),
    // selectionQuery, selectionFromJson, select.
    ...createMemorySelectionRepo(query),
    purge: (id: number, tx: Tx = prisma) => tx.memory.delete({ where: { id } }),
    update: (
      id: number,
      fields: Partial<MemoryFields> & { deletedAt?: Date | null; deletedReason?: string | null },
      tx: Tx = prisma,
    ) => tx.memory.update({ where: { id }, data: fields }),
  };
}

export type MemoriesRepo = ReturnType<typeof createMemoriesRepo>;
