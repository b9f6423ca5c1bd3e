// Managing what the assistant knows about a user: owner-scoped, soft deletes, one active memory
// per key, and a portable export/import format. Each concern is its own factory (memories.*.ts);
// this is the module's public face, which puts them together.

import { MEMORY_TYPES } from '@daybook/contracts';
import type { Clock } from '../../lib/clock.ts';
import type { RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { createMemoryEdits } from './memories.edit.ts';
import { createMemoriesExport } from './memories.export.ts';
import { createMemoriesImport } from './memories.import.ts';
import { createMemoriesList } from './memories.list.ts';
import type { MemoriesRepo } from './memories.repo.ts';

export { EXPORT_REFUSAL_SPACING_MS, ExportRefused } from './memories.export.ts';
export { IMPORT_RUNNING } from './memories.import.ts';
export { LIMIT_REACHED } from './memories.limit.ts';
export { createListCaches } from './memories.list.ts';
export { presentMemory } from './memories.present.ts';

export function createMemoriesService({
  repo,
  clock,
  limiter,
}: {
  repo: MemoriesRepo;
  clock: Clock;
  /** The app's rate limiter (modules/rate-limit). */
  limiter: RateLimiter;
}) {
  const { list } = createMemoriesList({ repo });
  const edits = createMemoryEdits({ repo, clock });
  const { exportAll } = createMemoriesExport({ repo, clock, limiter });
  const { claimImport, importAll } = createMemoriesImport({ repo });

  return {
    categories: () => MEMORY_TYPES.map((t) => ({ ...t })),

    // What the assistant reads to write a prompt or to learn: rows, not presented memories.
    listActive: repo.listActive,
    findActiveByKey: (userId: number, key: string) => repo.findActiveByKey(userId, key),
    select: repo.select,
    selectionQuery: repo.selectionQuery,
    selectionFromJson: repo.selectionFromJson,

    list,
    get: edits.get,
    create: edits.create,
    replace: edits.replace,
    update: edits.update,
    remove: edits.remove,
    exportAll,
    claimImport,
    importAll,
  };
}

export type MemoriesService = ReturnType<typeof createMemoriesService>;
