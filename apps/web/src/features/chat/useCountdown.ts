import { useEffect, useState } from 'react';
import type { Timers } from './useChatSocket.ts';

/** Whole seconds left until `at` on `timers` (rounded up, at least 1), re-rendering each second; null without `at`. */
export function useCountdown(at: number | null, timers: Timers): number | null {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (at === null) return;
    let handle: unknown = null;
    const schedule = () => {
      const left = at - timers.now();
      if (left <= 0) return;
      // Wake up when the shown number changes: at the next whole second before `at`.
      handle = timers.setTimeout(
        () => {
          handle = null;
          setTick((tick) => tick + 1);
          schedule();
        },
        left % 1000 || 1000,
      );
    };
    schedule();
    return () => {
      if (handle !== null) timers.clearTimeout(handle);
    };
  }, [at, timers]);
  return at === null ? null : Math.max(1, Math.ceil((at - timers.now()) / 1000));
}
