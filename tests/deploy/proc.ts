// A Daybook process the deploy tests start (a server or a worker): its output kept for failure
// messages, its exit awaited, and the wait until it answers /readyz.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { waitFor } from '../helpers/wait-for.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Proc {
  name: string;
  child: ChildProcess;
  output: string[];
  base: string;
  exited: Promise<number | null>;
}

/** Runs `node args` as a process listening on `port` (the caller puts PORT in `env`). */
export function spawnProc(name: string, node: string, args: string[], env: NodeJS.ProcessEnv, port: number): Proc {
  const child = spawn(node, args, { cwd: ROOT, env });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { name, child, output, base: `http://127.0.0.1:${port}`, exited };
}

/** Waits until the process answers /readyz, failing with what it printed. */
export function untilReady(p: Proc, { timeoutMs, intervalMs }: { timeoutMs: number; intervalMs: number }) {
  return waitFor(
    () => `${p.name} to be ready\n${p.output.join('')}`,
    async () => (await fetch(`${p.base}/readyz`).catch(() => null))?.ok || undefined,
    { timeoutMs, intervalMs },
  );
}
