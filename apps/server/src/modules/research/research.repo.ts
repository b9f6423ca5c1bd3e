// Researches: the row is the record of truth for a research's state; jobs only carry its id.
//
// The parts: the row and the SQL they share (research.rows.repo.ts), reads (research.reads.repo.ts),
// new researches (research.requests.repo.ts), a research's way to its end (research.lifecycle.repo.ts)
// and the queue the rows make (research.queue.repo.ts).
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { createResearchLifecycle } from './research.lifecycle.repo.ts';
import { createResearchQueue } from './research.queue.repo.ts';
import { createResearchReads } from './research.reads.repo.ts';
import { createResearchRequestsRepo } from './research.requests.repo.ts';

export type {
  ResearchCounts,
  ResearchOrigin,
  ResearchProgress,
  ResearchRow,
  ResearchStatus,
  ResearchStep,
} from './research.rows.repo.ts';

export function createResearchRepo(prisma: PrismaClient, query: Query) {
  const reads = createResearchReads(query);
  return {
    ...createResearchRequestsRepo(prisma, query, reads.byId),
    ...reads,
    ...createResearchQueue(prisma, query, reads.byId),
    ...createResearchLifecycle(query),
  };
}

export type ResearchRepo = ReturnType<typeof createResearchRepo>;
