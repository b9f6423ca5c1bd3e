// Researches: the row is the record of truth for a research's state; jobs only carry its id.
import type { TResearchSource } from '@daybook/contracts';
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import type { ChatMessageRow } from '../chat/chat.repo.ts';

export type ResearchStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
/** The steps of a run, as the chat's card shows them. */
export type ResearchStep = 'planning' | 'searching' | 'reading' | 'writing';

/** What the card shows of a running research (the `progress` column). */
export interface ResearchProgress {
  queries?: string[];
  pagesDone?: number;
  pagesTotal?: number;
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

const COLUMNS = `id, user_id AS "userId", query, status, origin, request_message_id AS "requestMessageId",
  introduction, body, conclusion, sources, error, pages_found AS "pagesFound", pages_read AS "pagesRead",
  pages_failed AS "pagesFailed", usage, attempts, created_at AS "createdAt", started_at AS "startedAt",
  finished_at AS "finishedAt", report_message_id AS "reportMessageId", stage, progress, version`;
// The database's clock, as UTC like Prisma's timestamps: every instance compares against the same one.
const NOW = `(now() AT TIME ZONE 'UTC')`;
const CHAT_COLUMNS = `id, user_id AS "userId", channel, author_type AS "authorType", message_type AS "messageType",
  raw_text AS "rawText", url, created_at AS "createdAt", reply_to_id AS "replyToId"`;

type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** Holds the user's research lock until the transaction ends: their claims and requests take turns. */
const lockUser = (tx: Tx, userId: number) =>
  tx.$queryRawUnsafe('SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext($1), $2)', 'research', userId);

export function createResearchRepo(prisma: PrismaClient, query: Query) {
  const one = async (text: string, params: unknown[]) => (await query<ResearchRow>(text, params))[0] ?? null;
  return {
    async create(data: {
      userId: number;
      query: string;
      origin: ResearchOrigin;
      requestMessageId?: number | null;
      dailyMessageId?: number | null;
    }): Promise<ResearchRow> {
      const row = await one(
        `INSERT INTO researches (user_id, query, origin, request_message_id, daily_message_id, created_at)
         VALUES ($1, $2, $3, $4, $5, ${NOW}) RETURNING ${COLUMNS}`,
        [data.userId, data.query, data.origin, data.requestMessageId ?? null, data.dailyMessageId ?? null],
      );
      if (!row) throw new Error('insert returned no row');
      return row;
    },

    /**
     * Creates a research asked for in the chat unless the user already asked for `limit` since
     * `since`: counted and inserted under the user's advisory lock, so concurrent requests (on
     * several instances too) never pass the limit together. Null when over it.
     */
    async createWithinLimit(
      data: { userId: number; query: string; requestMessageId?: number | null },
      limit: number,
      since: Date,
    ): Promise<ResearchRow | null> {
      const id = await prisma.$transaction(async (tx) => {
        await lockUser(tx, data.userId);
        const [count] = await tx.$queryRawUnsafe<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM researches
           WHERE user_id = $1 AND origin = 'chat' AND created_at >= ($2::timestamptz AT TIME ZONE 'UTC')`,
          data.userId,
          since.toISOString(),
        );
        if ((count?.n ?? 0) >= limit) return null;
        const [row] = await tx.$queryRawUnsafe<{ id: number }[]>(
          `INSERT INTO researches (user_id, query, origin, request_message_id, created_at)
           VALUES ($1, $2, 'chat', $3, ${NOW}) RETURNING id`,
          data.userId,
          data.query,
          data.requestMessageId ?? null,
        );
        return row?.id ?? null;
      });
      return id === null ? null : this.byId(id);
    },

    /** The user's research, or null when it is not theirs (or does not exist). */
    get: (userId: number, id: number) =>
      one(`SELECT ${COLUMNS} FROM researches WHERE id = $1 AND user_id = $2`, [id, userId]),

    byId: (id: number) => one(`SELECT ${COLUMNS} FROM researches WHERE id = $1`, [id]),

    /** The user's researches that come before this one (running, or queued earlier). */
    async ahead(userId: number, id: number): Promise<number> {
      const [row] = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM researches
         WHERE user_id = $1 AND id < $2 AND status IN ('queued', 'running')`,
        [userId, id],
      );
      return row?.n ?? 0;
    },

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
        .then((claimed) => (claimed ? this.byId(claimed.id) : null));
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

    /** The user's researches asked for in the chat that have not ended, oldest first. */
    active: (userId: number) =>
      query<ResearchRow>(
        `SELECT ${COLUMNS} FROM researches
         WHERE user_id = $1 AND origin = 'chat' AND status IN ('queued', 'running') ORDER BY id LIMIT 50`,
        [userId],
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

    /**
     * Posts the outcome to the user's chat once: the message is stored and the research marks it in
     * one statement, so a retry or a second worker finds it posted and posts nothing.
     */
    async postOnce(
      id: number,
      message: { authorType: string; messageType: string; rawText: string; url?: string },
    ): Promise<ChatMessageRow | null> {
      const [row] = await query<ChatMessageRow>(
        `WITH target AS (
           SELECT id, user_id, request_message_id FROM researches WHERE id = $1 AND report_message_id IS NULL FOR UPDATE
         ), posted AS (
           INSERT INTO chat_messages (user_id, channel, author_type, message_type, raw_text, url, reply_to_id)
           SELECT user_id, 'chat', $2, $3, $4, $5, NULL FROM target
           RETURNING ${CHAT_COLUMNS}
         ), marked AS (
           UPDATE researches SET report_message_id = (SELECT id FROM posted) WHERE id = $1 AND EXISTS (SELECT 1 FROM posted)
         )
         SELECT * FROM posted`,
        [id, message.authorType, message.messageType, message.rawText, message.url ?? null],
      );
      return row ?? null;
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

    /**
     * Ranks text chunks against a query with PostgreSQL full-text search (the ranking memories use):
     * any word of the query counts. Returns the chunks' indexes, best first.
     */
    async rankChunks(queryText: string, chunks: string[]): Promise<number[]> {
      const words = queryText.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      if (!words.length || !chunks.length) return chunks.map((_, i) => i);
      const [row] = await query<{ order: number[] }>(
        `SELECT coalesce(array_agg(i - 1 ORDER BY rank DESC, i), '{}') AS order FROM (
           SELECT c.i, ts_rank_cd(to_tsvector('english', c.t), q) AS rank
           FROM unnest($1::text[]) WITH ORDINALITY AS c(t, i), to_tsquery('english', $2) q
         ) ranked`,
        [chunks, [...new Set(words)].map((w) => `'${w}'`).join(' | ')],
      );
      return row?.order ?? chunks.map((_, i) => i);
    },
  };
}

export type ResearchRepo = ReturnType<typeof createResearchRepo>;
