import { describe, expect, it } from 'vitest';
import { backoffDelay, burstDelay, isBurst, quickAttemptsInARow, retryDelay, socketUrl } from './reconnect.ts';

/** Attempt times `gap` ms apart, ending at 100 s. */
const times = (count: number, gap: number) => Array.from({ length: count }, (_, i) => 100_000 - (count - 1 - i) * gap);

describe('the reconnect policy', () => {
  it('does not retry after a normal close (1000)', () => {
    expect(retryDelay({ code: 1000, attempts: 0, attemptTimes: [0] })).toBeNull();
    expect(retryDelay({ code: 1000, attempts: 7, attemptTimes: times(8, 100) })).toBeNull();
  });

  it('retries after 5 s when the server refused the user (1008)', () => {
    expect(retryDelay({ code: 1008, attempts: 0, attemptTimes: [0] })).toBe(5_000);
    expect(retryDelay({ code: 1008, attempts: 4, attemptTimes: times(5, 5_000) })).toBe(5_000);
  });

  it('retries after 15 s when the server is overloaded (1013)', () => {
    expect(retryDelay({ code: 1013, attempts: 0, attemptTimes: [0] })).toBe(15_000);
    expect(retryDelay({ code: 1013, attempts: 3, attemptTimes: times(4, 15_000) })).toBe(15_000);
  });

  it('retries at once when the server is restarting (1012), unless attempts come in a burst', () => {
    expect(retryDelay({ code: 1012, attempts: 0, attemptTimes: [0] })).toBe(0);
    expect(retryDelay({ code: 1012, attempts: 3, attemptTimes: times(4, 5_000) })).toBe(0);
    expect(retryDelay({ code: 1012, attempts: 5, attemptTimes: times(6, 300) })).toBe(4_000);
  });

  it('backs off 1 s × 1.5^attempts for other codes, capped at 10 s', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 9].map((attempts) =>
      retryDelay({ code: 1006, attempts, attemptTimes: times(attempts + 1, 5_000) }),
    );
    expect(delays).toEqual([1_000, 1_500, 2_250, 3_375, 5_062.5, 7_593.75, 7_593.75, 7_593.75]);
    // The exponent stops at 5, so 10 s is the ceiling of the formula.
    expect(backoffDelay(100)).toBeLessThanOrEqual(10_000);
    expect(retryDelay({ code: 1011, attempts: 0, attemptTimes: [] })).toBe(1_000);
  });

  it('counts attempts that came within 1 s of the one before, in a row from the latest', () => {
    expect(quickAttemptsInARow([])).toBe(0);
    expect(quickAttemptsInARow([0])).toBe(0);
    expect(quickAttemptsInARow([0, 999])).toBe(1);
    expect(quickAttemptsInARow([0, 1_000])).toBe(0);
    expect(quickAttemptsInARow([0, 100, 5_000, 5_100, 5_200])).toBe(2);
    expect(isBurst(times(4, 200))).toBe(false); // 3 quick gaps: not more than 3
    expect(isBurst(times(5, 200))).toBe(true); // 4 quick gaps
    expect(isBurst([...times(5, 200), 200_000])).toBe(false); // a slow attempt ends the run
  });

  it('in a burst waits min(30 s, 1 s × 2^(attempts − 3))', () => {
    const burst = times(6, 300);
    expect(retryDelay({ code: 1006, attempts: 4, attemptTimes: burst })).toBe(2_000);
    expect(retryDelay({ code: 1006, attempts: 5, attemptTimes: burst })).toBe(4_000);
    expect(retryDelay({ code: 1006, attempts: 7, attemptTimes: burst })).toBe(16_000);
    expect(retryDelay({ code: 1006, attempts: 8, attemptTimes: burst })).toBe(30_000);
    expect(retryDelay({ code: 1006, attempts: 20, attemptTimes: burst })).toBe(30_000);
    expect(burstDelay(3)).toBe(1_000);
    // A normal close still never retries.
    expect(retryDelay({ code: 1000, attempts: 8, attemptTimes: burst })).toBeNull();
  });

  it('starts again at 1 s once attempts are reset by a successful open', () => {
    expect(retryDelay({ code: 1006, attempts: 6, attemptTimes: times(7, 8_000) })).toBe(7_593.75);
    expect(retryDelay({ code: 1006, attempts: 0, attemptTimes: times(7, 8_000) })).toBe(1_000);
  });
});

describe('socketUrl', () => {
  it('uses wss on https pages and ws on http pages, with optional query', () => {
    expect(socketUrl('/ws/chat/', {}, { protocol: 'https:', host: 'day.example' })).toBe('wss://day.example/ws/chat/');
    expect(socketUrl('/ws/chat/', { dmid: '12' }, { protocol: 'http:', host: 'localhost:5173' })).toBe(
      'ws://localhost:5173/ws/chat/?dmid=12',
    );
    expect(socketUrl('/ws/onboarding/', { dmid: null }, { protocol: 'http:', host: 'h' })).toBe(
      'ws://h/ws/onboarding/',
    );
  });
});
