// Web research: GET /api/web-research/{id}/, and the report a research_report chat message carries.
import { z } from 'zod';

/** Longest research request ("/research <topic>" or the tool's query). */
export const RESEARCH_QUERY_MAX = 300;
/** Pages one research reads at most. */
export const RESEARCH_MAX_PAGES = 15;

export const ZResearchStatus = z.enum(['queued', 'running', 'done', 'failed', 'cancelled']);
export type TResearchStatus = z.infer<typeof ZResearchStatus>;

export const ZResearchSource = z.object({ url: z.string(), title: z.string() });
export type TResearchSource = z.infer<typeof ZResearchSource>;

/**
 * What the model must return when it writes a report: markdown with [n] citations, n counting from 1
 * into `sources`. Validated on the server; a citation of a page that was not read is dropped.
 */
export const ZReportDraft = z.object({
  introduction: z.string().trim().min(1).max(4000),
  body: z.string().trim().min(1).max(40_000),
  conclusion: z.string().trim().min(1).max(4000),
  sources: z.array(z.object({ url: z.string().trim().min(1).max(2000), title: z.string().trim().max(300) })).max(30),
});
export type TReportDraft = z.infer<typeof ZReportDraft>;

/** How the pages of a research went: found by the searches, read, and skipped after a failure. */
export const ZResearchCounts = z.object({
  found: z.number().int().nonnegative(),
  read: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});
export type TResearchCounts = z.infer<typeof ZResearchCounts>;

/**
 * GET /api/web-research/{id}/ (owner only). The spec's research report: id, query, created, and the
 * report (body in `report`; introduction, conclusion, sources beside it). `report` is null until done.
 */
export const ZResearch = z.object({
  id: z.number().int(),
  query: z.string(),
  status: ZResearchStatus,
  created: z.string(),
  finished: z.string().nullable(),
  introduction: z.string().nullable(),
  report: z.string().nullable(),
  conclusion: z.string().nullable(),
  sources: z.array(ZResearchSource),
  /** Why it failed, in words for the user; null unless status is failed. */
  error: z.string().nullable(),
  counts: ZResearchCounts,
});
export type TResearch = z.infer<typeof ZResearch>;

/**
 * Where a research asked for in the chat stands, as its card in the chat shows it: waiting its turn,
 * each step of a run, then how it ended. A reload or another tab gets the same card.
 */
export const ZResearchStage = z.enum([
  'queued',
  'planning',
  'searching',
  'reading',
  'writing',
  'done',
  'failed',
  'cancelled',
]);
export type TResearchStage = z.infer<typeof ZResearchStage>;

export const ZResearchCard = z.object({
  id: z.number().int(),
  query: z.string(),
  stage: ZResearchStage,
  /** The searches it runs (from `searching` on). */
  queries: z.array(z.string()),
  /** Pages read so far of those found (from `reading` on); null before. */
  pages: z.object({ done: z.number().int().nonnegative(), total: z.number().int().nonnegative() }).nullable(),
  /** Why it failed, in words for the user; null unless failed. */
  error: z.string().nullable(),
  /** Waiting to try again after a run failed in a way a retry can help with (or was interrupted). */
  retrying: z.boolean(),
  /** Its step waits for the assistant model, busy with other requests; absent when not. */
  waiting_for_model: z.boolean().optional(),
  /** Grows with every change: of two cards of one research, the higher is the newer. */
  version: z.number().int().nonnegative(),
  created: z.string(),
});
export type TResearchCard = z.infer<typeof ZResearchCard>;

/** Stages after which a research does nothing more. */
export const RESEARCH_ENDED: readonly TResearchStage[] = ['done', 'failed', 'cancelled'];

/** What the chat says when the user cancelled a research (the web app tells it from a failure by its start). */
export const RESEARCH_CANCELLED_LEAD = 'You cancelled the research on ';
export const researchCancelledText = (query: string) => `${RESEARCH_CANCELLED_LEAD}"${query}".`;
