// When messages are claimed: the schedule's tick claims the users whose local delivery time has
// passed (one row per user and local date, so never twice), the sweeper resends lost jobs, and
// "send now" claims today's at once.
import type { TSendNowResponse } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { DailyRepo } from './daily.repo.ts';
import { knownZone, zoneNow } from './daily.zones.ts';

/** Users claimed per statement of a tick. */
const CLAIM_BATCH = 500;
/**
 * A pending message not marked for this long lost its job (its worker crashed): the sweeper, every
 * minute, sends another, so it arrives within about three minutes. A live run marks it every
 * HEARTBEAT_MS (daily.generate.ts), however long its model takes.
 */
const STALLED_SEC = 90;

export function createDailySchedule(deps: {
  repo: DailyRepo;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Sends the generation job of message `id` (after `delaySec`). */
  enqueue(id: number, delaySec?: number): Promise<void>;
  /** Sends the generation jobs of many messages at once (a tick's batch). */
  enqueueMany(ids: number[]): Promise<void>;
}) {
  const { repo, clock, log } = deps;

  return {
    /**
     * One tick of the schedule: claims every user due now, in batches, and sends a job for each
     * claimed message. Returns how many were claimed.
     */
    async tick(): Promise<number> {
      const now = clock.now();
      const zones = (await repo.zones()).map((tz) => ({ ...zoneNow(knownZone(tz), now), tz }));
      if (!zones.length) {
        log.debug('daily tick: no one can get a message');
        return 0;
      }
      let claimed = 0;
      for (;;) {
        const batch = await repo.claimDue(zones, now, CLAIM_BATCH);
        claimed += batch.length;
        // A batch whose jobs could not be sent is picked up by the sweeper.
        await deps
          .enqueueMany(batch.map((b) => b.id))
          .catch((err) => log.warn({ err }, 'daily messages: could not send their jobs'));
        if (batch.length < CLAIM_BATCH) break;
      }
      if (claimed) log.info({ claimed }, 'daily messages claimed');
      // Which zones' clocks the tick compared with (no user data): why a message is not yet due.
      else log.debug({ zones: zones.map((z) => `${z.tz} ${z.localDate} ${z.localTime}`) }, 'daily tick: nothing due');
      return claimed;
    },

    /** Messages whose job went missing get another one (workers run it with each tick). */
    async sweep(): Promise<void> {
      for (const { id } of await repo.stalled(clock.now(), STALLED_SEC)) await deps.enqueue(id);
    },

    /** "Send today's message now": today's (in the user's time zone), claimed now if not yet. */
    async sendNow(userId: number): Promise<TSendNowResponse> {
      const user = await repo.user(userId);
      const tz = knownZone(user?.timeZone ?? null);
      const today = zoneNow(tz, clock.now()).localDate;
      const { row, claimed } = await repo.claimNow(userId, today, clock.now());
      if (row.chatMessageId !== null) return { status: 'delivered', id: row.id, delivery_date: row.localDate };
      if (row.status === 'failed') await repo.retry(row.id);
      if (claimed || row.status !== 'ready') await deps.enqueue(row.id);
      return { status: 'queued', id: row.id, delivery_date: row.localDate };
    },
  };
}
