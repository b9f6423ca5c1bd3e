// The most memories one account keeps (MEMORY_MAX), checked inside the transaction that adds.
import { MEMORY_MAX } from '@daybook/contracts';
import { AppError } from '../../lib/errors.ts';
import type { MemoriesRepo, WriteTx } from './memories.repo.ts';

/** MEMORY_MAX as the messages write it. */
export const MAX = MEMORY_MAX.toLocaleString('en');
export const LIMIT_REACHED = `You have reached ${MAX} memories, the most Daybook keeps for one account. Delete some to add new ones.`;

/** Within `tx`: the user's active memory count, once no other counted write of theirs is running. */
export async function activeCount(repo: MemoriesRepo, userId: number, tx: WriteTx) {
  await repo.lockWrites(userId, tx);
  return repo.countActive(userId, tx);
}

/** Within `tx`: refuses one more active memory past the limit. */
export async function ensureRoom(repo: MemoriesRepo, userId: number, tx: WriteTx) {
  if ((await activeCount(repo, userId, tx)) >= MEMORY_MAX) throw new AppError('conflict', LIMIT_REACHED);
}
