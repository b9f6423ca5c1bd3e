// Waiting for a condition instead of for a while: a test polls until what it needs has happened,
// and fails at a deadline saying what never came.

export interface WaitOptions {
  /** How long to wait before failing (a deadline, not a pause: a condition met sooner returns sooner). */
  timeoutMs?: number;
  /** How often to look again. */
  intervalMs?: number;
}

/**
 * Polls `check` until it returns something other than `undefined` or `false`, and returns that;
 * throws "timed out after N ms waiting for <what>" at the deadline.
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 20 }: WaitOptions = {},
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
