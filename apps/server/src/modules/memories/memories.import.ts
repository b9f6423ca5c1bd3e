// Importing an export file: one import of a user at a time, all or nothing, by key.
import { MEMORY_MAX, type TMemoryImportResult, ZMemoryImport } from '@daybook/contracts';
import { AppError } from '../../lib/errors.ts';
import { activeCount, MAX } from './memories.limit.ts';
import type { MemoriesRepo, MemoryFields } from './memories.repo.ts';

export const IMPORT_RUNNING = 'An import is already running for your account. Try again when it has finished.';
const importTooBig = (have: number, adding: number) =>
  new AppError(
    'conflict',
    `This import would take you past ${MAX} memories, the most Daybook keeps for one account: you have ${have.toLocaleString('en')} and it adds ${adding.toLocaleString('en')} new ones. Delete some memories, or import fewer.`,
  );

export function createMemoriesImport({ repo }: { repo: MemoriesRepo }) {
  /** Users with an import running in this process. */
  const importing = new Set<number>();

  return {
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
        const have = await activeCount(repo, userId, tx);
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
