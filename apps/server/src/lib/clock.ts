export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Milliseconds since the epoch with a fraction: tells apart, in order, two things one process did
 * in the same millisecond (a tab's message, then its Stop), where Date.now() would give one value.
 */
export const preciseNow = () => performance.timeOrigin + performance.now();
