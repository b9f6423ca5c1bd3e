// The queue the rows make: claiming a research to run, keeping it marked alive, putting it back,
// and finding the ones to start, take over or deliver.
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { COLUMNS, lockUser, NOW, type ResearchRow } from './research.rows.repo.ts';

export function createResearchQueue(
  prisma: PrismaClient,
  query: Query,
  byId: (id: number) => Promise<ResearchRow | null>,
) {
  return {
    /**
     * Takes a research to run: a queued one, or a running one whose worker stopped marking it
     * (`staleSec`), and only while no other research of the user runs. Under a per-user advisory
     * lock, so two workers never run two researches of one user, or one research twice.
     */
    async claim(id: number, staleSec: number): Promise<ResearchRow | null> {
      return prisma
        .$transaction(async (tx) => {
          const [target] = await tx.$queryRawUnsafe<{ userId: number }[]>(
            'SELECT user_id AS "userId" FROM researches WHERE id = $1',
            id,
          );
          if (!target) return null;
          await lockUser(tx, target.userId);
          const claimed = await tx.$queryRawUnsafe<{ id: number }[]>(
            `UPDATE researches r SET status = 'running', attempts = attempts + 1, not_before = NULL,
             started_at = coalesce(started_at, ${NOW}), heartbeat_at = ${NOW},
             stage = 'planning', progress = '{}', version = version + 1
           WHERE r.id = $1
             AND ((r.status = 'queued' AND (r.not_before IS NULL OR r.not_before <= ${NOW}))
               OR (r.status = 'running' AND r.heartbeat_at < ${NOW} - make_interval(secs => $2)))
             AND NOT EXISTS (
               SELECT 1 FROM researches o WHERE o.user_id = r.user_id AND o.id <> r.id AND o.status = 'running'
                 AND o.heartbeat_at >= ${NOW} - make_interval(secs => $2))
           RETURNING r.id`,
            id,
            staleSec,
          );
          return claimed.length ? { id } : null;
        })
        .then((claimed) => (claimed ? byId(claimed.id) : null));
    },

    /**
     * Marks a running research alive, if it still is this run's: `attempts` names the run. False
     * when another worker took it over (this one was too slow to mark it) or it ended.
     */
    async heartbeat(id: number, attempts: number): Promise<boolean> {
      const rows = await query(
        `UPDATE researches SET heartbeat_at = ${NOW} WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING id`,
        [id, attempts],
      );
      return rows.length > 0;
    },

    /** Back in the queue: after a shutdown, or for a retry not before `delayMs` from now. */
    async requeue(id: number, delayMs = 0): Promise<void> {
      await query(
        `UPDATE researches SET status = 'queued', heartbeat_at = NULL, stage = NULL, progress = '{}',
           version = version + 1, not_before = CASE WHEN $2::int > 0 THEN ${NOW} + make_interval(secs => $2::int / 1000.0) END
         WHERE id = $1 AND status = 'running'`,
        [id, delayMs],
      );
    },

    /** Running researches whose worker stopped marking them: a crash or a restart interrupted them. */
    stale: (staleSec: number) =>
      query<ResearchRow>(
        `SELECT ${COLUMNS} FROM researches
         WHERE status = 'running' AND heartbeat_at < ${NOW} - make_interval(secs => $1) ORDER BY id LIMIT 100`,
        [staleSec],
      ),

    /**
     * The oldest queued research of each user who has none running (or only a stale one): the next
     * to start. `olderThanSec` leaves alone those just queued, whose job is on its way.
     */
    nextInLine: (staleSec: number, olderThanSec = 0) =>
      query<{ id: number; userId: number }>(
        `SELECT DISTINCT ON (r.user_id) r.id, r.user_id AS "userId" FROM researches r
         WHERE r.status = 'queued' AND r.created_at <= ${NOW} - make_interval(secs => $2)
           AND (r.not_before IS NULL OR r.not_before <= ${NOW})
           AND NOT EXISTS (SELECT 1 FROM researches o WHERE o.user_id = r.user_id AND o.status = 'running'
             AND o.heartbeat_at >= ${NOW} - make_interval(secs => $1))
         ORDER BY r.user_id, r.id LIMIT 500`,
        [staleSec, olderThanSec],
      ),

    /** Ended researches asked for in the chat whose outcome was never posted (a crash came between). */
    undelivered: (olderThanSec: number) =>
      query<ResearchRow>(
        `SELECT ${COLUMNS} FROM researches
         WHERE status IN ('done', 'failed', 'cancelled') AND origin = 'chat' AND report_message_id IS NULL
           AND finished_at < ${NOW} - make_interval(secs => $1) ORDER BY id LIMIT 100`,
        [olderThanSec],
      ),

    /** The user's oldest queued research. */
    async nextOf(userId: number): Promise<number | null> {
      const [row] = await query<{ id: number }>(
        `SELECT id FROM researches WHERE user_id = $1 AND status = 'queued' ORDER BY id LIMIT 1`,
        [userId],
      );
      return row?.id ?? null;
    },
  };
}
