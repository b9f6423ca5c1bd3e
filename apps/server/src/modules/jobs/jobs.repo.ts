// The jobs module's own way to the database (a small pool on PostgreSQL, PGlite's one connection
// otherwise), which pg-boss runs on too, and the few statements it runs on pg-boss's tables itself.
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Database } from '../../db/database.ts';
import { createInFlight } from '../../lib/in-flight.ts';

export const SCHEMA = 'pgboss';

export type SqlResult = { rows: unknown[]; rowCount: number | null };

export function createJobsRepo(deps: { db: Database; log: FastifyBaseLogger }) {
  const { db, log } = deps;
  const sql = createInFlight();

  // On PostgreSQL a small pool of its own, so jobs are never part of a caller's transaction.
  const conn = db.jobsConnection;
  let pool: pg.Pool | undefined;
  if (!conn) {
    if (!db.url) throw new Error('The jobs module needs the PostgreSQL connection string (Database.url).');
    pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'daybook-jobs' });
    pool.on('error', (err) => log.warn({ err }, 'job queue connection lost'));
  }
  let closed = false;
  const run = (text: string, values?: unknown[]): Promise<SqlResult> =>
    conn ? conn.executeSql(text, values) : (pool as pg.Pool).query(text, values);
  const executeSql = (text: string, values?: unknown[]) =>
    // Once closed, answers nothing, as pg-boss's own pool does: a late call must not reach a closed database.
    closed ? Promise.resolve(undefined as unknown as SqlResult) : sql.track(run(text, values));

  return {
    executeSql,

    /** On PGlite, a statement from inside a Prisma transaction would wait for that very transaction. */
    inTransaction: () => conn?.inTransaction() === true,

    /** A running job back to waiting, to run now, with its retry count as it was. */
    async requeue(name: string, id: string) {
      await executeSql(
        `UPDATE ${SCHEMA}.job SET state = CASE WHEN retry_count = 0 THEN 'created' ELSE 'retry' END::${SCHEMA}.job_state,
           started_on = NULL, start_after = now()
         WHERE name = $1 AND id = $2 AND state = 'active'`,
        [name, id],
      );
    },

    /** A running job's retry limit lowered to the retries it has used. */
    async endRetries(name: string, id: string) {
      await executeSql(
        `UPDATE ${SCHEMA}.job SET retry_limit = retry_count WHERE name = $1 AND id = $2 AND state = 'active'`,
        [name, id],
      );
    },

    /** Every job some process is running (or was, when it died). */
    async activeJobs() {
      const { rows } = await executeSql(`SELECT name, id FROM ${SCHEMA}.job WHERE state = 'active'`);
      return rows as { name: string; id: string }[];
    },

    /** Jobs waiting (new or to be retried) and running, by queue name; none once closed. */
    async countsByQueue() {
      const result = await executeSql(
        `SELECT name, count(*) FILTER (WHERE state < 'active')::int AS waiting,
           count(*) FILTER (WHERE state = 'active')::int AS active
         FROM ${SCHEMA}.job WHERE state < 'completed' GROUP BY name`,
      );
      return new Map(
        ((result?.rows ?? []) as Array<{ name: string; waiting: number; active: number }>).map((r) => [r.name, r]),
      );
    },

    /** Waits (at most `graceMs`) for the statements still running, then answers nothing more. */
    async close(graceMs: number) {
      await sql.drain(graceMs);
      closed = true;
    },

    /** Ends the pool (PostgreSQL); the embedded database is closed by its owner. */
    async end() {
      await pool?.end();
    },
  };
}

export type JobsRepo = ReturnType<typeof createJobsRepo>;
