// The browser's time zone for an account without one, given when the session learns who signed in
// (auth-context.tsx, email-verification.tsx). It lives with them, not with the daily settings, so
// that auth needs nothing from daily.
import type { TUserMe } from '@daybook/contracts';
import { browserTimeZone } from '../../lib/time-zones.ts';
import { updateMe } from './api.ts';

const adopted = new Set<string>();

/**
 * An account without a time zone gets this device's (UTC would deliver the message at the wrong hour),
 * once per account and page load. Failures are ignored: the profile page offers the same choice.
 */
export async function adoptBrowserTimeZone(me: Pick<TUserMe, 'id' | 'time_zone'>): Promise<void> {
  const account = String(me.id);
  if (me.time_zone !== null || adopted.has(account)) return;
  // Asked only now: the engine's first date format loads its time zone data (tens of ms on a phone).
  const zone = browserTimeZone();
  if (!zone) return;
  adopted.add(account);
  await updateMe({ time_zone: zone }).catch(() => {});
}

/** For tests: forgets which accounts were given a time zone. */
export function clearAdoptedTimeZones() {
  adopted.clear();
}
