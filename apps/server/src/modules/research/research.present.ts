// A research as the contracts show it: its page, its card in the chat, and its report message.
import type { TResearch, TResearchCard, TResearchReport } from '@daybook/contracts';
import type { ResearchRow } from './research.repo.ts';

export function presentResearch(row: ResearchRow): TResearch {
  return {
    id: row.id,
    query: row.query,
    status: row.status,
    created: row.createdAt.toISOString(),
    finished: row.finishedAt?.toISOString() ?? null,
    introduction: row.introduction,
    report: row.body,
    conclusion: row.conclusion,
    sources: row.sources,
    error: row.status === 'failed' ? row.error : null,
    counts: { found: row.pagesFound, read: row.pagesRead, failed: row.pagesFailed },
  };
}

/** The research's card in the chat: its state, the step of its run, and how far that step got. */
export function researchCard(row: ResearchRow): TResearchCard {
  const stage = row.status === 'queued' ? 'queued' : row.status === 'running' ? (row.stage ?? 'planning') : row.status;
  const { queries = [], pagesDone, pagesTotal, waitingForModel } = row.progress ?? {};
  return {
    id: row.id,
    query: row.query,
    stage,
    queries: stage === 'queued' ? [] : queries,
    pages: pagesTotal === undefined || stage === 'queued' ? null : { done: pagesDone ?? 0, total: pagesTotal },
    error: row.status === 'failed' ? row.error : null,
    retrying: row.status === 'queued' && row.attempts > 0,
    ...(row.status === 'running' && waitingForModel ? { waiting_for_model: true } : {}),
    version: row.version,
    created: row.createdAt.toISOString(),
  };
}

/** Its page, which the chat's note on a failed or cancelled research links to. */
export const researchPath = (id: number) => `/resources/research/${id}`;

/** The body of the chat's research_report message. */
export function reportMessage(row: ResearchRow): TResearchReport {
  return {
    id: row.id,
    query: row.query,
    created: row.createdAt.toISOString(),
    introduction: row.introduction ?? undefined,
    report: row.body ?? '',
    conclusion: row.conclusion ?? undefined,
    sources: row.sources,
  };
}
