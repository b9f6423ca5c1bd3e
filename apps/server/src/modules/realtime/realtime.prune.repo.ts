// The PostgreSQL bus's pruning: events are kept a few minutes for instances that reconnect.
import type { FastifyBaseLogger } from 'fastify';
import type { Query } from '../../db/database.ts';

/** Kept this long for instances that reconnect; older ones are deleted. */
const KEEP_MINUTES = 5;
export const PRUNE_MS = 60_000;

/** Deletes the old events every `everyMs`; returns what stops it. */
export function startPruning(deps: { query: Query; log: FastifyBaseLogger; everyMs: number }): () => void {
  const { log, query } = deps;
  async function prune() {
    await query(`DELETE FROM realtime_events WHERE created_at < now() - interval '${KEEP_MINUTES} minutes'`).catch(
      (err: unknown) => log.warn({ err }, 'old realtime events could not be deleted'),
    );
  }
  const pruneTimer = setInterval(() => void prune(), deps.everyMs);
  pruneTimer.unref();
  return () => clearInterval(pruneTimer);
}
