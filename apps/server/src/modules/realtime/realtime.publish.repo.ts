// The PostgreSQL bus's publish path: events queued in this process are written to realtime_events
// in batches, in order, by one flush loop, and each batch's ids go out in one NOTIFY.
import type { FastifyBaseLogger } from 'fastify';
import type { Query } from '../../db/database.ts';
import type { RealtimeEvent } from './realtime.types.ts';

/** The NOTIFY channel; a notification is `<origin>:<id>,<id>,...`. */
export const PG_CHANNEL = 'daybook_realtime';
/** Events per INSERT (and per notification: ids stay far below NOTIFY's 8000-byte limit). */
const BATCH = 200;

/** Half of a surrogate pair, which jsonb refuses as it refuses NUL. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * For JSON.stringify: text jsonb cannot hold becomes U+FFFD, as it would in a text column. One
 * event's model output with a NUL would otherwise fail the INSERT of every event in its batch.
 */
function jsonbSafe(_key: string, value: unknown) {
  return typeof value === 'string' ? value.replace(LONE_SURROGATE, '\ufffd').replaceAll('\0', '\ufffd') : value;
}

export function createRealtimeOutbox(deps: { query: Query; log: FastifyBaseLogger; origin: string }) {
  const { log, query, origin } = deps;
  const outbox: RealtimeEvent[] = [];
  let flushing: Promise<void> | null = null;

  async function flush() {
    while (outbox.length) {
      const batch = outbox.splice(0, BATCH);
      try {
        // Ids are taken in the batch's order (the sort is below the insert's projection).
        await query(
          `WITH e AS (
             INSERT INTO realtime_events (origin, payload)
             SELECT $1, p FROM (SELECT p FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(p, n) ORDER BY n) s
             RETURNING id
           )
           SELECT pg_notify('${PG_CHANNEL}', $1 || ':' || string_agg(id::text, ',' ORDER BY id)) FROM e`,
          [origin, JSON.stringify(batch, jsonbSafe)],
        );
      } catch (err) {
        // The tabs on this instance have them; the others' tabs catch up from the history.
        log.error({ err, events: batch.length }, 'realtime events could not be sent to other instances');
      }
    }
    flushing = null;
  }

  return {
    send(event: RealtimeEvent) {
      outbox.push(event);
      // After the current task: what it publishes goes in one statement.
      flushing ??= Promise.resolve().then(flush);
    },
    /** The flush under way, if any. */
    flushing: () => flushing,
  };
}
