// A research's row as the repos read it, and the SQL they share.
import type { TResearchSource } from '@daybook/contracts';
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

export type ResearchStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
/** The steps of a run, as the chat's card shows them. */
export type ResearchStep = 'planning' | 'searching' | 'reading' | 'writing';

/** What the card shows of a running research (the `progress` column). */
export interface ResearchProgress {
  queries?: string[];
  pagesDone?: number;
  pagesTotal?: number;
  /** The step's model call waits for the model, busy with other requests (model/model.gate.ts). */
  waitingForModel?: boolean;
}
export type ResearchOrigin = 'chat' | 'daily';

export interface ResearchRow {
  id: number;
  userId: number;
  query: string;
  status: ResearchStatus;
  origin: ResearchOrigin;
  requestMessageId: number | null;
  introduction: string | null;
  body: string | null;
  conclusion: string | null;
  sources: TResearchSource[];
  error: string | null;
  pagesFound: number;
  pagesRead: number;
  pagesFailed: number;
  usage: { prompt?: number; completion?: number };
  attempts: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  reportMessageId: number | null;
  stage: ResearchStep | null;
  progress: ResearchProgress;
  version: number;
}

export interface ResearchCounts {
  found: number;
  read: number;
  failed: number;
}

export const COLUMNS = `id, user_id AS "userId", query, status, origin, request_message_id AS "requestMessageId",
  introduction, body, conclusion, sources, error, pages_found AS "pagesFound", pages_read AS "pagesRead",
  pages_failed AS "pagesFailed", usage, attempts, created_at AS "createdAt", started_at AS "startedAt",
  finished_at AS "finishedAt", report_message_id AS "reportMessageId", stage, progress, version`;
// The database's clock, as UTC like Prisma's timestamps: every instance compares against the same one.
export const NOW = `(now() AT TIME ZONE 'UTC')`;

export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** Holds the user's research lock until the transaction ends: their claims and requests take turns. */
export const lockUser = (tx: Tx, userId: number) =>
  tx.$queryRawUnsafe('SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext($1), $2)', 'research', userId);

/** Runs `text` and returns its first row, or null. */
export const oneRow =
  (query: Query) =>
  async (text: string, params: unknown[]): Promise<ResearchRow | null> =>
    (await query<ResearchRow>(text, params))[0] ?? null;
