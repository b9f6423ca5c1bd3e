// A TCP port nothing listens on now, for a server a test (or a script) starts as a child process.
import { createServer } from 'node:net';

/** A port on 127.0.0.1 that was free a moment ago: the system's choice, released at once. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
