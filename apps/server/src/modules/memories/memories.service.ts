// Managing what the assistant knows about a user: owner-scoped, soft deletes, one active memory
// per key, and a portable export/import format.

import { setTimeout as sleep } from 'node:timers/promises';
import {
  MEMORY_MAX,
  MEMORY_MESSAGES,
  MEMORY_TYPES,
  type TMemory,
  type TMemoryExport,
  type TMemoryImportResult,
  type TMemoryType,
  ZMemoryImport,
  type ZMemoryInput,
  type ZMemoryPatch,
} from '@daybook/contracts';
import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { LIMITS, type RateLimiter } from '../accounts/rate-limit.ts';
import {
  type ExportBatch,
  type ExportCursor,
  isDuplicateKey,
  type MemoriesRepo,
  type MemoryFields,
  type MemoryRow,
  type WriteTx,
} from './memories.repo.ts';

const LABELS = Object.fromEntries(MEMORY_TYPES.map((t) => [t.value, t.label])) as Record<TMemoryType, string>;
const DUPLICATE = 'You already have a memory with this key.';
const notFound = () => new AppError('not_found', 'Memory not found.');
const duplicate = () => new AppError('validation_error', DUPLICATE, { key: [DUPLICATE] });
const MAX = MEMORY_MAX.toLocaleString('en');
export const LIMIT_REACHED = `You have reached ${MAX} memories, the most Daybook keeps for one account. Delete some to add new ones.`;
export const IMPORT_RUNNING = 'An import is already running for your account. Try again when it has finished.';
const importTooBig = (have: number, adding: number) =>
  new AppError(
    'conflict',
    `This import would take you past ${MAX} memories, the most Daybook keeps for one account: you have ${have.toLocaleString('en')} and it adds ${adding.toLocaleString('en')} new ones. Delete some memories, or import fewer.`,
  );

/** A refused export: 429, with the seconds after which asking again may succeed (Retry-After). */
export class ExportRefused extends AppError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super('rate_limited', message);
  }
}
/** What a refusal for an export still running tells the client to wait. */
const RUNNING_RETRY_SEC = 2;
/**
 * Refused exports of one user are answered one at a time, this far apart. Answered at once, a
 * client asking again at once (ignoring Retry-After) got hundreds of 429s a second, which took a
 * core and made another user's Memories page 10 times slower (`npm run bench:flood`).
 */
export const EXPORT_REFUSAL_SPACING_MS = 1000;

/** A time as the API writes it (the Memories page's rows are written by PostgreSQL in the same form). */
const iso = (at: Date) => at.toISOString();

export function presentMemory(row: MemoryRow): TMemory {
  const type = (row.memoryType in LABELS ? row.memoryType : 'text') as TMemoryType;
  return {
    id: row.id,
    key: row.key,
    data: row.data,
    memory_type: type,
    memory_type_display: LABELS[type],
    url: row.url,
    frequency_description: row.frequencyDescription,
    source: row.source as TMemory['source'],
    source_message_id: row.sourceMessageId,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    deleted_at: row.deletedAt === null ? null : iso(row.deletedAt),
    deleted_reason: row.deletedReason,
  };
}

type Input = z.output<typeof ZMemoryInput>;
type Patch = z.output<typeof ZMemoryPatch>;

const fieldsOf = (input: Input): MemoryFields => ({
  key: input.key,
  data: input.data,
  memoryType: input.memory_type,
  url: input.url ?? null,
  frequencyDescription: input.frequency_description ?? null,
});

/**
 * What the Memories page was answered with, kept per process and valid while the user's memory
 * version is the same (memory_counts.version, grown by triggers in the same transaction as any
 * change, from any process): the text of recent pages, and the matching ids of recent searches
 * (so the next page of a search reads 30 rows by id instead of searching again). A kept answer is
 * used only after reading the version, so it is never stale.
 */
export function createListCaches({ pageBytes = 8 * 1024 * 1024, searchIds = 200_000 } = {}) {
  return {
    // A minute at most: a database restored from a backup winds the version sequence back.
    pages: new LRUCache<string, { version: string; results: string; count: number }>({
      maxSize: pageBytes,
      sizeCalculation: (page, key) => page.results.length + key.length + 64,
      ttl: 60_000,
    }),
    searches: new LRUCache<string, { version: string; ids: number[] }>({
      maxSize: searchIds,
      // A ~200-character key weighs about as much as 50 ids: searches that match nothing must not pile up.
      sizeCalculation: (search, key) => search.ids.length + Math.ceil(key.length / 4) + 1,
      ttl: 60_000,
    }),
  };
}

export function createMemoriesService({
  repo,
  clock,
  limiter,
}: {
  repo: MemoriesRepo;
  clock: Clock;
  /** The app's rate limiter (accounts owns its table). */
  limiter: RateLimiter;
}) {
  const { pages, searches } = createListCaches();
  /** Users with an import running in this process. */
  const importing = new Set<number>();
  /** Users with an export being read in this process. */
  const exporting = new Set<number>();
  /**
   * Users refused by the export limit, until when (clock ms): nothing gives a counted export back,
   * so until then every answer is no, and a client asking again and again costs no query.
   */
  const exportBlocked = new LRUCache<number, number>({ max: 10_000 });
  /** When each user's latest export refusal is (or was) answered, in performance.now() ms. */
  const exportRefusals = new LRUCache<number, number>({ max: 10_000 });

  /** Throws `refusal`: at once for the user's first, else EXPORT_REFUSAL_SPACING_MS after the one before. */
  async function refuseExport(userId: number, refusal: ExportRefused): Promise<never> {
    const now = performance.now();
    const at = Math.max(now, (exportRefusals.get(userId) ?? Number.NEGATIVE_INFINITY) + EXPORT_REFUSAL_SPACING_MS);
    exportRefusals.set(userId, at);
    if (at > now) await sleep(at - now);
    throw refusal;
  }

  /** Within `tx`: the user's active memory count, once no other counted write of theirs is running. */
  async function activeCount(userId: number, tx: WriteTx) {
    await repo.lockWrites(userId, tx);
    return repo.countActive(userId, tx);
  }

  /** Within `tx`: refuses one more active memory past the limit. */
  async function ensureRoom(userId: number, tx: WriteTx) {
    if ((await activeCount(userId, tx)) >= MEMORY_MAX) throw new AppError('conflict', LIMIT_REACHED);
  }

  async function owned(userId: number, id: number) {
    const row = await repo.find(userId, id);
    if (!row) throw notFound();
    return row;
  }

  /** Runs a write that may hit the active-key index, turning that into a clear 400. */
  async function guardKey<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isDuplicateKey(err)) throw duplicate();
      throw err;
    }
  }

  async function change(userId: number, id: number, fields: Partial<MemoryFields>, restore: boolean | undefined) {
    const row = await owned(userId, id);
    if (row.deletedAt && !restore) throw new AppError('conflict', 'This memory is deleted. Restore it to edit it.');
    if (row.deletedAt && restore) {
      const restored = await guardKey(() =>
        repo.transaction(async (tx) => {
          await ensureRoom(userId, tx);
          return repo.update(id, { ...fields, deletedAt: null, deletedReason: null }, tx);
        }),
      );
      return presentMemory(restored);
    }
    return presentMemory(await guardKey(() => repo.update(id, fields)));
  }

  return {
    categories: () => MEMORY_TYPES.map((t) => ({ ...t })),

    /**
     * A page of the user's memories: `results` is the JSON array of TMemory objects as text, as
     * PostgreSQL wrote it (see MemoriesRepo.list). A search's matching ids are kept (see createSearchCache), so
     * the next page, the same search again or a refresh reads 30 rows by id instead of searching;
     * only a real search takes its turn through `searchTurn`.
     */
    async list(
      userId: number,
      options: { deleted: boolean; search?: string; limit: number; offset: number },
      searchTurn: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
    ) {
      const { search, deleted, limit, offset } = options;
      const view = `${userId}\u0000${deleted ? 'd' : 'a'}`;
      const pageKey = `${view}\u0000${limit}\u0000${offset}\u0000${search ?? ''}`;
      const keptPage = pages.get(pageKey);
      if (keptPage && (await repo.version(userId)) === keptPage.version) return keptPage;
      let page: { version: string; results: string; count: number };
      if (!search) {
        page = await repo.list(userId, options);
      } else {
        const searchKey = `${view}\u0000${search}`;
        const kept = searches.get(searchKey);
        const byIds = kept && (await repo.pageByIds(userId, kept.ids.slice(offset, offset + limit), deleted));
        // Read in the same snapshot as the version: unchanged, so the kept ids are still the answer.
        if (kept && byIds && byIds.version === kept.version) {
          page = { ...byIds, count: kept.ids.length };
        } else {
          const found = await searchTurn(() => repo.search(userId, { deleted, search, limit, offset }));
          searches.set(searchKey, { version: found.version, ids: found.ids });
          // A search's page is kept from its second time on: a stream of different searches (someone
          // typing) would otherwise fill the pages with text read once, and the process's heap with
          // it (the chat's p99 in the benchmark grew by half after such a flood).
          return found;
        }
      }
      pages.set(pageKey, { version: page.version, results: page.results, count: page.count });
      return page;
    },

    get: async (userId: number, id: number) => {
      const row = await repo.findOne(userId, id);
      if (!row) throw notFound();
      return presentMemory(row);
    },

    async create(
      userId: number,
      input: Input,
      provenance: { source: TMemory['source']; sourceMessageId?: number | null } = { source: 'user' },
    ) {
      // Learning from chat comes this way too, so the assistant stops adding at the limit.
      const row = await guardKey(() =>
        repo.transaction(async (tx) => {
          await ensureRoom(userId, tx);
          return repo.create(userId, { ...fieldsOf(input), ...provenance }, tx);
        }),
      );
      return presentMemory(row);
    },

    replace: (userId: number, id: number, input: Input) => change(userId, id, fieldsOf(input), input.restore_deleted),

    /** With `provenance` (learning), the memory links to the message that changed it last. */
    update(
      userId: number,
      id: number,
      patch: Patch,
      provenance?: { source: TMemory['source']; sourceMessageId: number },
    ) {
      const fields: Partial<MemoryFields> & { source?: string; sourceMessageId?: number } = { ...provenance };
      if (patch.key !== undefined) fields.key = patch.key;
      if (patch.data !== undefined) fields.data = patch.data;
      if (patch.memory_type !== undefined) fields.memoryType = patch.memory_type;
      if (patch.url !== undefined) fields.url = patch.url;
      if (patch.frequency_description !== undefined) fields.frequencyDescription = patch.frequency_description;
      return change(userId, id, fields, patch.restore_deleted);
    },

    /** The first delete is soft (restorable); deleting a deleted memory removes it for good. */
    async remove(userId: number, id: number, reason?: string) {
      const row = await owned(userId, id);
      if (row.deletedAt) await repo.purge(id);
      else await repo.update(id, { deletedAt: clock.now(), deletedReason: reason || null });
    },

    /**
     * The user's export file (TMemoryExport) as a stream of JSON text, read in batches of
     * EXPORT_BATCH, each through `turn` (the user's reads, two at a time). One export of a user at a
     * time, and MEMORY_EXPORTS_PER_HOUR, counted before anything is read: refusals throw
     * ExportRefused. The caller calls `done` when the response is over (reading ends by itself when
     * the file does). Memories changed while it runs may or may not be in it.
     */
    async exportAll(
      userId: number,
      turn: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
    ): Promise<{ exportedAt: string; chunks: AsyncIterable<string>; done: () => void }> {
      if (exporting.has(userId)) {
        return refuseExport(userId, new ExportRefused(MEMORY_MESSAGES.exportRunning, RUNNING_RETRY_SEC));
      }
      const blockedUntil = exportBlocked.get(userId) ?? 0;
      const now = clock.now().getTime();
      if (blockedUntil > now) {
        const wait = Math.ceil((blockedUntil - now) / 1000);
        return refuseExport(userId, new ExportRefused(MEMORY_MESSAGES.exportLimit, wait));
      }
      exporting.add(userId);
      let held = true;
      const done = () => {
        if (held) exporting.delete(userId);
        held = false;
      };
      const attempt = await limiter.attempt(LIMITS.memoryExport(userId)).catch((err: unknown) => {
        done();
        throw err;
      });
      if (!attempt.allowed) {
        done();
        exportBlocked.set(userId, clock.now().getTime() + attempt.retryAfterSec * 1000);
        return refuseExport(userId, new ExportRefused(MEMORY_MESSAGES.exportLimit, attempt.retryAfterSec));
      }
      exportBlocked.delete(userId);
      const head: Omit<TMemoryExport, 'memories'> = {
        format: 'daybook-memories',
        version: 1,
        exported_at: clock.now().toISOString(),
      };
      async function* chunks(): AsyncGenerator<string> {
        try {
          yield `${JSON.stringify(head).slice(0, -1)},"memories":[`;
          let after: ExportCursor | null = null;
          for (let first = true; ; first = false) {
            const from = after;
            const batch: ExportBatch = await turn(() => repo.exportBatch(userId, from));
            if (batch.count) yield (first ? '' : ',') + batch.items;
            if (!batch.next) break;
            after = batch.next;
          }
          yield ']}';
        } finally {
          done();
        }
      }
      return { exportedAt: head.exported_at, chunks: chunks(), done };
    },

    /**
     * Claims the user's one import slot (409 when taken); the caller releases it when the import is
     * over. Imports hold a whole upload in memory, so one user cannot run several at once.
     */
    claimImport(userId: number): () => void {
      if (importing.has(userId)) throw new AppError('conflict', IMPORT_RUNNING);
      importing.add(userId);
      let held = true;
      return () => {
        if (held) importing.delete(userId);
        held = false;
      };
    },

    /** Adds what is new, updates what changed, by key: importing the same file twice changes nothing. */
    async importAll(userId: number, body: unknown): Promise<TMemoryImportResult> {
      const { memories } = ZMemoryImport.parse(body);
      const byKey = new Map(memories.map((m) => [m.key, m]));
      const result = { created: 0, updated: 0, unchanged: 0 };
      // Set-based: one read of the keys, one insert of what is new, an update per changed memory.
      await repo.transaction(async (tx) => {
        const have = await activeCount(userId, tx);
        const existing = new Map((await repo.findActiveByKeys(userId, [...byKey.keys()], tx)).map((m) => [m.key, m]));
        const fresh: MemoryFields[] = [];
        const changed: Array<[id: number, fields: MemoryFields]> = [];
        for (const item of byKey.values()) {
          const fields: MemoryFields = {
            key: item.key,
            data: item.data,
            memoryType: item.memory_type,
            url: item.url ?? null,
            frequencyDescription: item.frequency_description ?? null,
          };
          const current = existing.get(item.key);
          if (!current) {
            fresh.push(fields);
          } else if (
            current.data !== fields.data ||
            current.memoryType !== fields.memoryType ||
            current.url !== fields.url ||
            current.frequencyDescription !== fields.frequencyDescription
          ) {
            changed.push([current.id, fields]);
          } else {
            result.unchanged++;
          }
        }
        // All or nothing, like validation: a file that does not fit changes nothing.
        if (have + fresh.length > MEMORY_MAX) throw importTooBig(have, fresh.length);
        for (const [id, fields] of changed) await repo.update(id, fields, tx);
        result.updated = changed.length;
        result.created = await repo.createMany(userId, fresh, 'import', tx);
      });
      return result;
    },
  };
}

export type MemoriesService = ReturnType<typeof createMemoriesService>;
