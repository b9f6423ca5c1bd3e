// The model queue's rows (model_permits): one per model call that holds or waits for a permit of its
// endpoint, whichever process makes it. The order and the limit are kept by one SQL function under a
// lock of the endpoint (model_permits_pass, in its migration), so every process grants alike; asking
// for a permit, or giving one back, is one round trip with the pass it needs.
import type { Query } from '../../db/database.ts';

const NOW = `(now() AT TIME ZONE 'UTC')`;

export interface QueueLimits {
  endpoint: string;
  limit: number;
  reserve: number;
  staleSeconds: number;
}

export function createModelGateRepo(query: Query) {
  async function pass(
    o: QueueLimits & {
      mine: number[];
      release?: number;
      wait?: { priority: number; userId: number | null; holder: string };
    },
  ) {
    const rows = await query<{ id: number; granted: boolean }>(
      'SELECT id, granted FROM model_permits_pass($1, $2, $3, $4, $5::integer[], $6, $7::jsonb)',
      [
        o.endpoint,
        o.limit,
        o.reserve,
        o.staleSeconds,
        o.mine,
        o.release ?? null,
        o.wait ? JSON.stringify({ priority: o.wait.priority, user_id: o.wait.userId, holder: o.wait.holder }) : null,
      ],
    );
    return rows;
  }
  return {
    /** Adds a waiting row and runs a pass: its id, and which of it and `mine` are granted. */
    async ask(o: QueueLimits & { mine: number[]; wait: { priority: number; userId: number | null; holder: string } }) {
      const rows = await pass(o);
      const added = rows.find((r) => !o.mine.includes(r.id));
      if (!added) throw new Error('no permit row');
      return { id: added.id, granted: new Set(rows.filter((r) => r.granted).map((r) => r.id)) };
    },
    /** Gives `release` back (when set) and runs a pass: which of `mine` are granted. */
    async pass(o: QueueLimits & { mine: number[]; release?: number }) {
      return new Set((await pass(o)).filter((r) => r.granted).map((r) => r.id));
    },
    /** Gives the permit `id` back, without a pass (the caller has nothing waiting). */
    async release(id: number): Promise<void> {
      await query('DELETE FROM model_permits WHERE id = $1', [id]);
    },
    /** This process is alive: its rows stay. */
    async heartbeat(holder: string): Promise<void> {
      await query(`UPDATE model_permits SET heartbeat_at = ${NOW} WHERE holder = $1`, [holder]);
    },
    /** This process stops: its rows go. */
    async releaseAll(holder: string): Promise<void> {
      await query('DELETE FROM model_permits WHERE holder = $1', [holder]);
    },
  };
}

export type ModelGateRepo = ReturnType<typeof createModelGateRepo>;
