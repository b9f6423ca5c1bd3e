import { describe, expect, it } from 'vitest';
import { pairedRatioInterval, percentile, select } from './report.ts';

/** `count` rounds of `users` turns: a base time with some spread, and now and then a slow round. */
function rounds(count: number, users: number, base: number, slowEvery: number, seed: number): number[][] {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
  return Array.from({ length: count }, (_, r) =>
    Array.from({ length: users }, () => base * (0.5 + next()) + (r % slowEvery === 0 ? base * 4 * next() : 0)),
  );
}

describe('pairedRatioInterval', () => {
  it('gives the pooled ratio, and an interval around it', () => {
    const a = rounds(60, 100, 10, 7, 1);
    const b = rounds(60, 100, 10, 7, 2);
    const r = pairedRatioInterval(a, b, 99);
    expect(r.ratio).toBeCloseTo(percentile(a.flat(), 99) / percentile(b.flat(), 99), 10);
    expect(r.low).toBeLessThanOrEqual(r.ratio);
    expect(r.high).toBeGreaterThanOrEqual(r.ratio);
    // Alike builds: the interval holds 1.
    expect(r.low).toBeLessThan(1);
    expect(r.high).toBeGreaterThan(1);
    expect(r.confidence).toBe(0.9);
  });

  it('lies wholly below 1 when one build is clearly faster in every round', () => {
    const slow = rounds(60, 100, 10, 7, 3);
    const fast = slow.map((round) => round.map((t) => t * 0.6));
    const r = pairedRatioInterval(fast, slow, 99);
    expect(r.ratio).toBeCloseTo(0.6, 5);
    expect(r.high).toBeLessThan(0.65);
  });

  it('is wider with fewer rounds, and the same for the same turns', () => {
    const a = rounds(100, 100, 10, 5, 4);
    const b = rounds(100, 100, 10, 5, 5);
    const many = pairedRatioInterval(a, b, 99);
    const few = pairedRatioInterval(a.slice(0, 10), b.slice(0, 10), 99);
    expect(few.high - few.low).toBeGreaterThan(many.high - many.low);
    expect(pairedRatioInterval(a, b, 99)).toEqual(many);
  });

  it('refuses sides of different lengths', () => {
    expect(() => pairedRatioInterval([[1]], [[1], [2]], 99)).toThrow(/as many rounds/);
  });
});

describe('select', () => {
  it('finds the k-th smallest as sorting would, duplicates included', () => {
    let x = 7;
    for (const n of [1, 2, 3, 10, 101, 1000]) {
      const values = Array.from({ length: n }, () => {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        return Math.floor((x / 2 ** 31) * 50);
      });
      const sorted = [...values].sort((a, b) => a - b);
      for (const k of new Set([0, Math.floor(n / 2), Math.floor(0.99 * n), n - 1]))
        expect(select(Float64Array.from(values), k)).toBe(sorted[k]);
    }
  });
});
