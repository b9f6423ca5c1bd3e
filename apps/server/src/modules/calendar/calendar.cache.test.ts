import { describe, expect, it } from 'vitest';
import { createCache } from './calendar.cache.ts';

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('calendar cache', () => {
  it('serves a value for its time, sharing one load between callers asking at once', async () => {
    const c = clock();
    const cache = createCache<string[]>({ ttlMs: 1000, maxWeight: 100, weigh: (v) => v.length, now: c.now });
    let loads = 0;
    const load = async () => {
      loads++;
      return ['a'];
    };
    await Promise.all([cache.get('k', load), cache.get('k', load)]);
    expect(loads).toBe(1);
    c.advance(999);
    await cache.get('k', load);
    expect(loads).toBe(1);
    c.advance(1);
    await cache.get('k', load);
    expect(loads).toBe(2);
  });

  it('keeps a failure for a short while only', async () => {
    const c = clock();
    const cache = createCache<string[]>({
      ttlMs: 300_000,
      failureTtlMs: 60_000,
      maxWeight: 100,
      weigh: (v) => v.length,
      now: c.now,
    });
    let loads = 0;
    const failing = async (): Promise<string[]> => {
      loads++;
      throw new Error('down');
    };
    await expect(cache.get('k', failing)).rejects.toThrow('down');
    await expect(cache.get('k', failing)).rejects.toThrow('down');
    expect(loads).toBe(1);
    c.advance(60_000);
    await expect(cache.get('k', failing)).rejects.toThrow('down');
    expect(loads).toBe(2);
  });

  it('holds at most its weight, dropping the oldest entries first', async () => {
    const c = clock();
    const cache = createCache<string[]>({ ttlMs: 1000, maxWeight: 10, weigh: (v) => v.length, now: c.now });
    const loaded: string[] = [];
    const load = (key: string, n: number) => async () => {
      loaded.push(key);
      return Array.from({ length: n }, () => key);
    };
    await cache.get('a', load('a', 4));
    await cache.get('b', load('b', 4));
    await cache.get('c', load('c', 4));
    // a went to make room for c; b and c are still held.
    await cache.get('b', load('b', 4));
    await cache.get('c', load('c', 4));
    await cache.get('a', load('a', 4));
    expect(loaded).toEqual(['a', 'b', 'c', 'a']);
  });

  it('forgets keys by prefix, and keeps nothing with no time to keep it', async () => {
    const c = clock();
    const cache = createCache<string[]>({ ttlMs: 1000, maxWeight: 10, weigh: (v) => v.length, now: c.now });
    let loads = 0;
    const load = async () => {
      loads++;
      return ['x'];
    };
    await cache.get('7:day', load);
    cache.dropPrefix('7:');
    await cache.get('7:day', load);
    expect(loads).toBe(2);
    const none = createCache<string[]>({ ttlMs: 0, maxWeight: 10, weigh: (v) => v.length, now: c.now });
    await none.get('k', load);
    await none.get('k', load);
    expect(loads).toBe(4);
  });
});
