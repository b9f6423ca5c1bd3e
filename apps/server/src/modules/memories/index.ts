// What other modules may use of memories besides its service: the row and selection shapes the
// assistant's prompts are written from.
export type { MemoryRow, MemorySelection } from './memories.repo.ts';
