// How much of the machine's CPU went to processes outside the benchmark during a measurement: on a
// shared machine another job's load skews one run's figures and not the next one's, so each run
// records it and the report says when a result was measured on a busy machine. From /proc: the
// machine's busy time (steal included) minus the CPU time of the benchmark's own processes (this
// one, Daybook, the bare references, the load, and the PostgreSQL backends of the scratch database).
import { readFile } from 'node:fs/promises';
import type pg from 'pg';

/** Busy and total jiffies of the whole machine. */
async function machine(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const [, ...fields] = line.trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields.map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, total };
}

/** User and system jiffies of one process (all its threads); 0 once it is gone. */
async function processJiffies(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields count from after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * Waits until the whole machine has been quiet (under `maxBusy` of its CPU) for `quietMs`, at most
 * `timeoutMs`: what the load phases leave behind (PostgreSQL's autovacuum of the rows they wrote, the
 * server collecting thousands of closed sockets) must not run beside a measurement of the page.
 * Returns how long it waited and how busy the machine was in the last sample.
 */
export async function waitForQuiet({ maxBusy = 0.15, quietMs = 2000, timeoutMs = 60_000, stepMs = 500 } = {}) {
  const started = performance.now();
  let quietSince: number | null = null;
  let busy = 1;
  let last = await machine();
  while (performance.now() - started < timeoutMs) {
    await new Promise((r) => setTimeout(r, stepMs));
    const now = await machine();
    busy = (now.busy - last.busy) / (now.total - last.total || 1);
    last = now;
    if (busy > maxBusy) quietSince = null;
    else {
      quietSince ??= performance.now() - stepMs;
      if (performance.now() - quietSince >= quietMs) break;
    }
  }
  return { waitedMs: performance.now() - started, busy };
}

/** Linux counts process CPU time in clock ticks of 10 ms (USER_HZ 100 on every architecture Node runs on). */
const MS_PER_JIFFY = 10;

const backendsOf = async (db: pg.Client, database: string) =>
  (await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])).rows.map(
    (r) => r.pid,
  );

/**
 * The CPU time one Daybook has used so far, with its database's backends (each build in the chat
 * phase has a database of its own): a map of process to ticks, for `spentMs` to compare.
 */
export function cpuUse(db: pg.Client, pid: number, database: string) {
  return async (): Promise<Map<number, number>> => {
    const ids = [pid, ...(await backendsOf(db, database))];
    return new Map(await Promise.all(ids.map(async (id) => [id, await processJiffies(id)] as const)));
  };
}

/** CPU ms between two `cpuUse` readings; a backend that appeared between them counts from zero. */
export function spentMs(before: Map<number, number>, after: Map<number, number>): number {
  let jiffies = 0;
  for (const [id, end] of after) jiffies += Math.max(0, end - (before.get(id) ?? 0));
  return jiffies * MS_PER_JIFFY;
}

export interface CpuShare {
  /** Share of the machine (all cores) used by processes outside the benchmark, 0-1. */
  foreign: number;
  /** Share of the machine used by the benchmark's processes, 0-1. */
  ours: number;
}

/**
 * Measures over `fn`. `pids` are the benchmark's processes; `db` (connected to the scratch
 * database) names its backends, looked up before and after so pooled connections count.
 */
export function cpuMeter(pids: () => number[], db: pg.Client, database: string) {
  const backends = () => backendsOf(db, database);
  const snapshot = async (ids: number[]) => {
    const [m, ...each] = await Promise.all([machine(), ...ids.map((pid) => processJiffies(pid))]);
    return { m: m as { busy: number; total: number }, ours: (each as number[]).reduce((a, b) => a + b, 0) };
  };
  return async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; cpu: CpuShare }> {
    const ids = [...new Set([...pids(), ...(await backends())])];
    const before = await snapshot(ids);
    const value = await fn();
    const after = [...new Set([...ids, ...(await backends())])];
    // Backends that appeared during fn count from zero: their whole life was inside it.
    const end = await snapshot(after);
    const total = end.m.total - before.m.total || 1;
    const ours = Math.max(0, end.ours - before.ours);
    const foreign = Math.max(0, end.m.busy - before.m.busy - ours);
    return { value, cpu: { foreign: foreign / total, ours: ours / total } };
  };
}
