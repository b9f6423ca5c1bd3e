// The bookkeeping of the reconnect policy (reconnect.ts): attempts made and when, the retry timer,
// and whether the browser is online at all.
import { retryDelay } from './reconnect.ts';
import type { SocketAction } from './socket.state.ts';
import type { Timers } from './socket.ts';

/** Enough history for the burst rule. */
const KEPT_ATTEMPT_TIMES = 10;

export function createRetries({
  timers,
  dispatch,
  retry,
}: {
  timers: Timers;
  dispatch: (action: SocketAction) => void;
  /** Makes the scheduled attempt. */
  retry: () => void;
}) {
  let attempts = 0;
  const attemptTimes: number[] = [];
  let timer: unknown = null;
  let isOffline = typeof navigator !== 'undefined' && navigator.onLine === false;

  const cancel = () => {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
  };
  /** How long the policy waits after a close with `code` now; null: no retry. */
  const delay = (code: number) => retryDelay({ code, attempts, attemptTimes });

  return {
    /** Drops the scheduled retry, if any. */
    cancel,
    delay,
    /** An attempt begins now: the burst rule counts it. */
    started() {
      attemptTimes.push(timers.now());
      if (attemptTimes.length > KEPT_ATTEMPT_TIMES) attemptTimes.shift();
    },
    /** A socket opened: the next retry is the first of its outage. */
    connected() {
      attempts = 0;
    },
    /** Schedules the next attempt after a close with `code`, when the policy says (if it does). */
    schedule(code: number) {
      cancel();
      // Offline, every attempt would fail: the next one comes when the browser is back online.
      if (isOffline) {
        dispatch({ type: 'retry', inMs: null, at: null });
        return;
      }
      const ms = delay(code);
      dispatch({ type: 'retry', inMs: ms, at: ms === null ? null : timers.now() + ms });
      if (ms === null) return;
      attempts++;
      timer = timers.setTimeout(() => {
        timer = null;
        retry();
      }, ms);
    },
    /** What the browser says of its network. */
    setOffline(offline: boolean) {
      isOffline = offline;
      // Back: at once, not after the backoff of the attempts made while offline.
      if (!offline) attempts = 0;
    },
  };
}
