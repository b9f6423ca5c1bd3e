// A memory row as the API shows it (TMemory).
import { MEMORY_TYPES, type TMemory, type TMemoryType } from '@daybook/contracts';
import type { MemoryRow } from './memories.repo.ts';

const LABELS = Object.fromEntries(MEMORY_TYPES.map((t) => [t.value, t.label])) as Record<TMemoryType, string>;

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
