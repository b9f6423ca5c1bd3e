// A research's way to its end: the steps of its run, its counts, and its outcome (done, failed or
// cancelled), then the chat message that delivered it.
import type { TResearchSource } from '@daybook/contracts';
import type { Query } from '../../db/database.ts';
import {
  COLUMNS,
  NOW,
  oneRow,
  type ResearchCounts,
  type ResearchProgress,
  type ResearchRow,
  type ResearchStep,
} from './research.rows.repo.ts';

export function createResearchLifecycle(query: Query) {
  const one = oneRow(query);
  return {
    /**
     * Moves this run (`attempts` names it) of a running research to a step. False when it is no
     * longer this run's: cancelled, taken over by another worker, or ended.
     */
    async step(
      id: number,
      attempts: number,
      stage: ResearchStep,
      progress: ResearchProgress,
    ): Promise<ResearchRow | null> {
      return one(
        `UPDATE researches SET stage = $3, progress = $4::jsonb, version = version + 1
         WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING ${COLUMNS}`,
        [id, attempts, stage, JSON.stringify(progress)],
      );
    },

    /** Cancels the user's research asked for in the chat, if it has not ended; null otherwise. */
    cancel: (userId: number, id: number) =>
      one(
        `UPDATE researches SET status = 'cancelled', finished_at = ${NOW}, heartbeat_at = NULL, not_before = NULL,
           version = version + 1
         WHERE id = $1 AND user_id = $2 AND origin = 'chat' AND status IN ('queued', 'running') RETURNING ${COLUMNS}`,
        [id, userId],
      ),

    async counts(id: number, counts: ResearchCounts): Promise<void> {
      await query('UPDATE researches SET pages_found = $2, pages_read = $3, pages_failed = $4 WHERE id = $1', [
        id,
        counts.found,
        counts.read,
        counts.failed,
      ]);
    },

    async complete(
      id: number,
      report: {
        introduction: string;
        body: string;
        conclusion: string;
        sources: TResearchSource[];
        counts: ResearchCounts;
        usage: { prompt: number; completion: number };
      },
    ): Promise<ResearchRow | null> {
      return one(
        `UPDATE researches SET status = 'done', introduction = $2, body = $3, conclusion = $4, sources = $5::jsonb,
           pages_found = $6, pages_read = $7, pages_failed = $8, usage = $9::jsonb, error = NULL,
           finished_at = ${NOW}, heartbeat_at = NULL, version = version + 1
         WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${COLUMNS}`,
        [
          id,
          report.introduction,
          report.body,
          report.conclusion,
          JSON.stringify(report.sources),
          report.counts.found,
          report.counts.read,
          report.counts.failed,
          JSON.stringify(report.usage),
        ],
      );
    },

    /** Ends a research visibly failed; null when it had already ended. */
    fail: (id: number, error: string) =>
      one(
        `UPDATE researches SET status = 'failed', error = $2, finished_at = ${NOW}, heartbeat_at = NULL,
           version = version + 1
         WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${COLUMNS}`,
        [id, error],
      ),

    /** Records the chat message that delivered the outcome (chat posts it once per research). */
    markPosted: (id: number, messageId: number) =>
      query(`UPDATE researches SET report_message_id = $2 WHERE id = $1 AND report_message_id IS NULL`, [
        id,
        messageId,
      ]),
  };
}
