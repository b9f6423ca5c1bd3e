import { describe, expect, it } from 'vitest';
import { createKeyedLock } from './keyed-lock.ts';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('keyed lock', () => {
  it('runs work on one key one at a time, in arrival order, and other keys alongside', async () => {
    const lock = createKeyedLock();
    const log: string[] = [];
    let inside = 0;
    let most = 0;
    const work = (name: string, keys: string[]) =>
      lock.run(keys, async () => {
        inside++;
        most = Math.max(most, inside);
        log.push(`${name} in`);
        await tick();
        log.push(`${name} out`);
        inside--;
        return name;
      });
    const results = await Promise.all([work('a', ['x']), work('b', ['x']), work('c', ['x'])]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
    expect(most).toBe(1);

    log.length = 0;
    await Promise.all([work('d', ['x']), work('e', ['y'])]);
    expect(log.slice(0, 2).sort()).toEqual(['d in', 'e in']);
    expect(lock.held()).toBe(0);
  });

  it('takes overlapping keys in one order, so crossed requests finish', async () => {
    const lock = createKeyedLock();
    const done = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        lock.run(i % 2 ? ['ip', `address-${i}`] : [`address-${i - 1}`, 'ip'], async () => {
          await tick();
          return i;
        }),
      ),
    );
    expect(done).toHaveLength(20);
    expect(lock.held()).toBe(0);
  });

  it('lets go of the keys when the work fails', async () => {
    const lock = createKeyedLock();
    await expect(lock.run(['x'], async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await lock.run(['x'], async () => 'next')).toBe('next');
    expect(lock.held()).toBe(0);
  });
});
