// One memory at a time: read, add, change, restore and delete, owner-scoped, one active memory per key.
import type { TMemory, ZMemoryInput, ZMemoryPatch } from '@daybook/contracts';
import type { z } from 'zod';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { ensureRoom } from './memories.limit.ts';
import { presentMemory } from './memories.present.ts';
import { isDuplicateKey, type MemoriesRepo, type MemoryFields } from './memories.repo.ts';

const DUPLICATE = 'You already have a memory with this key.';
const notFound = () => new AppError('not_found', 'Memory not found.');
const duplicate = () => new AppError('validation_error', DUPLICATE, { key: [DUPLICATE] });

type Input = z.output<typeof ZMemoryInput>;
type Patch = z.output<typeof ZMemoryPatch>;

const fieldsOf = (input: Input): MemoryFields => ({
  key: input.key,
  data: input.data,
  memoryType: input.memory_type,
  url: input.url ?? null,
  frequencyDescription: input.frequency_description ?? null,
});

/** Runs a write that may hit the active-key index, turning that into a clear 400. */
async function guardKey<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isDuplicateKey(err)) throw duplicate();
    throw err;
  }
}

export function createMemoryEdits({ repo, clock }: { repo: MemoriesRepo; clock: Clock }) {
  async function owned(userId: number, id: number) {
    const row = await repo.find(userId, id);
    if (!row) throw notFound();
    return row;
  }

  async function change(userId: number, id: number, fields: Partial<MemoryFields>, restore: boolean | undefined) {
    const row = await owned(userId, id);
    if (row.deletedAt && !restore) throw new AppError('conflict', 'This memory is deleted. Restore it to edit it.');
    if (row.deletedAt && restore) {
      const restored = await guardKey(() =>
        repo.transaction(async (tx) => {
          await ensureRoom(repo, userId, tx);
          return repo.update(id, { ...fields, deletedAt: null, deletedReason: null }, tx);
        }),
      );
      return presentMemory(restored);
    }
    return presentMemory(await guardKey(() => repo.update(id, fields)));
  }

  return {
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
          await ensureRoom(repo, userId, tx);
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
  };
}
