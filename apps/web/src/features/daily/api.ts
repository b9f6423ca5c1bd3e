// The daily message calls: "Send today's message now", and the browser's time zone for accounts without one.
// The settings themselves are PATCH /api/users/me/ (auth/api.ts).
import { type TUserMe, ZSendNowResponse } from '@daybook/contracts';
import { apiRequest } from '../../lib/api.ts';
import { updateMe } from '../auth/api.ts';
import { browserTimeZone } from './time-zones.ts';

export const SEND_NOW_PATH = '/api/daily-messages/send-now/';

/** 200/202 with today's message, queued or already delivered; 429 past DAILY_SEND_NOW_PER_DAY a day. */
export const sendDailyMessageNow = () => apiRequest(SEND_NOW_PATH, ZSendNowResponse, { method: 'POST' });

const adopted = new Set<string>();

/**
 * An account without a time zone gets this device's (UTC would deliver the message at the wrong hour),
 * once per account and page load. Failures are ignored: the profile page offers the same choice.
 */
export async function adoptBrowserTimeZone(me: Pick<TUserMe, 'id' | 'time_zone'>): Promise<void> {
  const zone = browserTimeZone();
  const account = String(me.id);
  if (me.time_zone !== null || !zone || adopted.has(account)) return;
  adopted.add(account);
  await updateMe({ time_zone: zone }).catch(() => {});
}

/** For tests: forgets which accounts were given a time zone. */
export function clearAdoptedTimeZones() {
  adopted.clear();
}
