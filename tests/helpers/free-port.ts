// A TCP port nothing listens on now, for a server a test (or a script) starts as a child process.
//
// Not the system's choice (listen on 0): that comes from the ephemeral range (32768-60999 on Linux),
// which every outgoing connection also draws its local port from, so in the seconds between releasing
// it and the child's listen a connection to PostgreSQL could take it (EADDRINUSE on the CI machine).
// Ports below that range are never given to outgoing connections. Each vitest worker (VITEST_POOL_ID,
// unique among the workers running at once) has its own block of them, so two workers never hand out
// the same port; within a worker a counter never hands one out twice, and each is checked free.
import { createServer } from 'node:net';

const BELOW_EPHEMERAL = 32_768;
const BLOCK = 400;
const WORKER_BASE = 20_000; // worker n's block starts at 20000 + (n - 1) * 400: up to 31 workers
const SCRIPT_BASE = 10_000; // a script outside vitest (bench, lighthouse): 10000-19999

const poolId = Number(process.env.VITEST_POOL_ID ?? 0);
const [first, size] =
  poolId > 0 && WORKER_BASE + poolId * BLOCK <= BELOW_EPHEMERAL
    ? [WORKER_BASE + (poolId - 1) * BLOCK, BLOCK]
    : [SCRIPT_BASE, WORKER_BASE - SCRIPT_BASE];
let next = Math.floor(Math.random() * size);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that is free now and that no other test worker or outgoing connection will take. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < size; tried++) {
    const port = first + (next++ % size);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${first}-${first + size - 1}`);
}
