/**
 * In-process locks by name: `run(keys, fn)` runs `fn` once it holds every key, taken in sorted order
 * (so two runs over overlapping keys never wait on each other in a cycle). Runs over the same key
 * go one at a time, in arrival order; others go in parallel. A lock whose last holder is done is
 * forgotten.
 */
export function createKeyedLock() {
  const tails = new Map<string, Promise<void>>();

  async function run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const key of [...new Set(keys)].sort()) {
        const before = tails.get(key) ?? Promise.resolve();
        let release = () => {};
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        const tail = before.then(() => held);
        tails.set(key, tail);
        releases.push(() => {
          release();
          if (tails.get(key) === tail) tails.delete(key);
        });
        await before;
      }
      return await fn();
    } finally {
      for (const release of releases) release();
    }
  }

  return { run, held: () => tails.size };
}
