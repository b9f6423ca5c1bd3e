// The socket reconnect policy of the spec ("Chat connection"), kept pure so every rule is tested.
import { CLOSE_CODES } from '@daybook/contracts';

export const RETRY_AFTER_POLICY_VIOLATION_MS = 5_000;
export const RETRY_AFTER_TRY_AGAIN_LATER_MS = 15_000;
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_MAX_MS = 10_000;
export const BURST_MAX_MS = 30_000;
/** Attempts closer together than this count towards a burst. */
export const BURST_WINDOW_MS = 1_000;
/** A burst is more than this many quick attempts in a row. */
export const BURST_THRESHOLD = 3;

/**
 * How many times in a row the latest attempts came within 1 s of the one before
 * (`attemptTimes` in ms, oldest first).
 */
export function quickAttemptsInARow(attemptTimes: readonly number[]): number {
  let count = 0;
  for (let i = attemptTimes.length - 1; i > 0; i--) {
    const gap = (attemptTimes[i] as number) - (attemptTimes[i - 1] as number);
    if (gap >= BURST_WINDOW_MS) break;
    count++;
  }
  return count;
}

export const isBurst = (attemptTimes: readonly number[]) => quickAttemptsInARow(attemptTimes) > BURST_THRESHOLD;

/** min(30 s, 1 s × 2^(attempts − 3)); a burst always follows several attempts, the floor only guards odd input. */
export const burstDelay = (attempts: number) =>
  Math.min(BURST_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 3));

/** min(10 s, 1 s × 1.5^min(5, attempts)): 1, 1.5, 2.25, 3.375, 5.06, 7.59 s. */
export const backoffDelay = (attempts: number) =>
  Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 1.5 ** Math.min(5, attempts));

export interface RetryInput {
  /** The close code of the socket that just closed. */
  code: number;
  /** Retries since the last successful open (0 for the first retry). */
  attempts: number;
  /** When each connection attempt started, in ms, oldest first. */
  attemptTimes: readonly number[];
}

/**
 * Milliseconds until the next connection attempt, or null when the client must not retry. 0: at once
 * (the server is restarting: another instance takes the connection).
 */
export function retryDelay({ code, attempts, attemptTimes }: RetryInput): number | null {
  if (code === CLOSE_CODES.normal) return null;
  if (isBurst(attemptTimes)) return burstDelay(attempts);
  if (code === CLOSE_CODES.serviceRestart) return 0;
  if (code === CLOSE_CODES.policyViolation) return RETRY_AFTER_POLICY_VIOLATION_MS;
  if (code === CLOSE_CODES.tryAgainLater) return RETRY_AFTER_TRY_AGAIN_LATER_MS;
  return backoffDelay(attempts);
}

/** ws: on http pages, wss: on https pages; `params` become the query (e.g. dmid). */
export function socketUrl(
  path: string,
  params: Record<string, string | null | undefined> = {},
  location: Pick<Location, 'protocol' | 'host'> = window.location,
): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) query.set(key, value);
  const search = query.toString();
  return `${scheme}://${location.host}${path}${search ? `?${search}` : ''}`;
}
