// Bounds how much of the server one user's requests can occupy at once.

/** Runs `work` once fewer than `limit` of the same key's are running (first come, first served). */
export function perKeyGate(limit: number) {
  const lanes = new Map<number, { running: number; waiting: Array<() => void> }>();
  return async function run<T>(key: number, work: () => Promise<T>): Promise<T> {
    let lane = lanes.get(key);
    if (!lane) {
      lane = { running: 0, waiting: [] };
      lanes.set(key, lane);
    }
    const own = lane;
    if (own.running >= limit) await new Promise<void>((resolve) => own.waiting.push(resolve));
    else own.running++;
    try {
      return await work();
    } finally {
      // A waiting request takes over this slot; the lane goes when nothing runs or waits.
      const next = own.waiting.shift();
      if (next) next();
      else if (--own.running === 0) lanes.delete(key);
    }
  };
}
