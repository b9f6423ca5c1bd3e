import { useEffect, useState } from 'react';
import { localDayKey, msUntilNextDay } from '../../lib/dates.ts';
import type { Timers } from './useChatSocket.ts';

/**
 * "Now" on `timers`, refreshed at each local midnight (and when the tab shows again after a sleep),
 * so a chat left open overnight moves "Today" to "Yesterday". Idle while not `enabled` (no messages).
 */
export function useDayClock(timers: Timers, enabled = true): number {
  const [now, setNow] = useState(() => timers.now());
  const day = localDayKey(new Date(now));
  useEffect(() => {
    if (!enabled) return;
    let handle: unknown = null;
    const check = () => {
      const current = timers.now();
      if (localDayKey(new Date(current)) !== day) setNow(current);
      else schedule();
    };
    // Woken early (a clock that moved), it only schedules itself again.
    const schedule = () => {
      handle = timers.setTimeout(() => {
        handle = null;
        check();
      }, msUntilNextDay(timers.now()));
    };
    check();
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      if (handle !== null) timers.clearTimeout(handle);
      handle = null;
      check();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      document.removeEventListener('visibilitychange', onVisible);
      if (handle !== null) timers.clearTimeout(handle);
    };
  }, [day, timers, enabled]);
  return now;
}
