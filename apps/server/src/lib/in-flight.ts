/**
 * Work still running, so a shutdown can wait for it (for a while) before closing what it uses:
 * chat replies and learning before the database closes, queued mail before the mail server's.
 */
export function createInFlight() {
  const running = new Set<Promise<unknown>>();
  return {
    /** Counts `work` until it settles; returns it unchanged. */
    track<T>(work: Promise<T>): Promise<T> {
      running.add(work);
      const done = () => running.delete(work);
      work.then(done, done);
      return work;
    },
    /**
     * Waits (at most `timeoutMs`) until nothing is running, including work that running work
     * started meanwhile; returns how much is left.
     */
    async drain(timeoutMs: number): Promise<number> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      const settled = (async () => {
        while (running.size) await Promise.allSettled([...running]);
      })();
      await Promise.race([settled, timeout]);
      clearTimeout(timer);
      return running.size;
    },
  };
}
