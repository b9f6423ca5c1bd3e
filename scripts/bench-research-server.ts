// The server side of the research benchmark (scripts/bench-research.ts starts it with fork): the
// real app in a process of its own, so process.cpuUsage() and the peak RSS here are the server's
// alone, its extraction worker threads included, and not the fakes' or the simulated users'.
// Configured through the environment the bench passes; answers the bench over the IPC channel.

import { subscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { buildApp } from '../apps/server/src/app.ts';
import { loadConfig } from '../apps/server/src/config.ts';
import { extractTimings } from '../apps/server/src/modules/research/extract.ts';
import { BENCH_ORIGIN } from './lib/bench-settings.ts';
import { signUpBenchUser } from './lib/bench-users.ts';

const send = (message: object) => process.send?.(message);
if (!process.send) throw new Error('run by scripts/bench-research.ts');

const app = await buildApp(loadConfig(process.env));
const base = await app.listen({ host: '127.0.0.1', port: 0 });

// How late the event loop ran its timers (what every chat turn waits behind), since the bench last asked.
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();

// Garbage-collection pauses of the main thread since the bench last asked.
let gcPauses: number[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push(entry.duration);
}).observe({ entryTypes: ['gc'] });

// Time and CPU time each page spent in an extraction worker, since the bench last asked.
let extractions: Array<{ ms: number; cpuMs: number }> = [];
subscribe(extractTimings.name, (message) => {
  const { ms, cpuMs } = message as { ms?: number; cpuMs?: number };
  if (typeof ms === 'number') extractions.push({ ms, cpuMs: cpuMs ?? Number.NaN });
});

/**
 * CPU time in ms of the main thread (the event loop), of the extraction workers (the threads at
 * nice 19) and of the other threads (V8's GC and compiler helpers, libuv's pool), and the time the
 * main thread was ready to run but waited for a core, where Linux tells it; NaN elsewhere. Threads that ended are left out, so only differences over a run are meaningful.
 */
function threadCpuMs() {
  const split = { main: 0, workers: 0, other: 0, mainWaiting: 0 };
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const [ran, waited] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const ns = ran ?? 0;
      if (Number(tid) === process.pid) split.mainWaiting = (waited ?? 0) / 1e6;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      const kind = Number(tid) === process.pid ? 'main' : nice === 19 ? 'workers' : 'other';
      split[kind] += ns / 1e6;
    }
    return split;
  } catch {
    return { main: Number.NaN, workers: Number.NaN, other: Number.NaN, mainWaiting: Number.NaN };
  }
}

/** A signed-in user's cookie header, from a real signup. */
async function newUser(i: number, token: string) {
  const remoteAddress = `10.7.${Math.floor(i / 250)}.${(i % 250) + 1}`;
  const email = `bench-research-${i}@example.com`;
  return (await signUpBenchUser(app, { token, email, remoteAddress, origin: BENCH_ORIGIN })).cookie;
}

process.on('message', async (msg: { type: string; users?: number }) => {
  if (msg.type === 'users') {
    const count = msg.users ?? 1;
    const { token } = await app.invites.create({ maxUses: count });
    const cookies: string[] = [];
    for (let i = 0; i < count; i++) cookies.push(await newUser(i, token));
    send({ type: 'users', cookies });
  } else if (msg.type === 'stats') {
    // cpuUsage and maxRSS are the process's: every thread, the extraction workers included.
    send({
      type: 'stats',
      cpu: process.cpuUsage(),
      threads: threadCpuMs(),
      maxRssKb: process.resourceUsage().maxRSS,
      rssKb: process.memoryUsage.rss() / 1024,
      extractions,
      loopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      gc: { ms: gcPauses.reduce((a, b) => a + b, 0), max: Math.max(0, ...gcPauses), count: gcPauses.length },
    });
    extractions = [];
    gcPauses = [];
    loopDelay.reset();
  } else if (msg.type === 'close') {
    await app.close();
    send({ type: 'closed' });
    process.exit(0);
  }
});

send({ type: 'ready', base });
