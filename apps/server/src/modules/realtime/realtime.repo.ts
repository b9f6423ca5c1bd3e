// The realtime bus's table beyond the bus itself: what account deletion asks of it.
import type { Tx } from '../../db/database.ts';

/** Drops the recent events about a deleted user (they hold their chat's text), inside the deletion's transaction. */
export async function forgetUserEvents(userId: number, tx: Tx): Promise<void> {
  await tx.$executeRaw`DELETE FROM "realtime_events" WHERE "payload" ->> 'userId' = ${String(userId)}`;
}
