// An open-loop HTTP load at a steady rate, for the "p99 at 500 req/s" column of `npm run bench`
// (run in the load process, scripts/bench/load.ts). autocannon has no such mode: its `overallRate`
// lets each connection send its share of a second back to back and then wait for the next second,
// which is a burst of `connections` requests every second, not a rate.
//
// Request i is due at start + i / rate, whatever happened to the ones before it, and goes out on
// any free keep-alive connection of a pool of at most `connections` (node:http's Agent, which
// queues a request while every connection is busy). Its latency runs from when it was due, not from
// when it went out, so time spent waiting for a connection or for a stalled timer counts: no
// coordinated omission.
import http from 'node:http';
import type { HttpRun } from './protocol.ts';

export interface PacedOptions {
  url: string;
  headers: Record<string, string>;
  /** Requests per second. */
  rate: number;
  /** Seconds of measured requests. */
  seconds: number;
  /** Most keep-alive connections open at once. */
  connections: number;
  /** Seconds at the same rate before, not measured: opens connections, warms the server's JIT. */
  warmupSeconds: number;
  /** After the last request is due, how long the ones still unanswered may take (then: timeouts). */
  drainMs?: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

export async function paced(opts: PacedOptions): Promise<HttpRun> {
  const interval = 1000 / opts.rate;
  const warmup = Math.round(opts.warmupSeconds * opts.rate);
  const total = warmup + Math.round(opts.seconds * opts.rate);
  // LIFO: the most recently used free connection first, so a server that keeps up is served by a
  // few warm connections, and more open only while requests wait.
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections, scheduling: 'lifo' });
  const times: number[] = [];
  /** How late each measured request went out (this process's timers), in ms. */
  const lags: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let sent = 0;
  let settled = 0;
  let lastDone = 0;
  const inFlight = new Map<http.ClientRequest, () => void>();
  let allSettled: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allSettled = resolve;
  });
  if (!total) allSettled();

  const fire = (i: number, due: number) => {
    const measured = i >= warmup;
    if (measured) lags.push(performance.now() - due);
    let finished = false;
    // Each request ends once: answered, failed, or given up on after the drain.
    const finish = (outcome: () => void) => {
      if (finished) return;
      finished = true;
      inFlight.delete(req);
      if (measured) outcome();
      if (++settled === total) allSettled();
    };
    const req = http.request(opts.url, { agent, headers: opts.headers }, (res) => {
      res.resume();
      res.once('end', () => {
        const end = performance.now();
        finish(() => {
          lastDone = end;
          if (res.statusCode && res.statusCode >= 200 && res.statusCode < 300) times.push(end - due);
          else non2xx++;
        });
      });
      res.once('error', () => finish(() => errors++));
    });
    req.once('error', () => finish(() => errors++));
    inFlight.set(req, () => finish(() => timeouts++));
    req.end();
  };

  const start = performance.now();
  const measuredStart = start + warmup * interval;
  // Each tick sends every request whose time has come (timers fire late by a millisecond or more,
  // and later still on a busy machine), then sleeps until the next one is due.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) {
        fire(sent, start + sent * interval);
        sent++;
      }
      if (sent === total) return resolve();
      setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });

  // The last ones due get their answers, or time out: a request never answered is a failure, not
  // a sample left out.
  const drainMs = opts.drainMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    done.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), drainMs);
    }),
  ]);
  clearTimeout(timer);
  if (!drained)
    for (const [req, giveUp] of [...inFlight]) {
      giveUp();
      req.destroy();
    }
  agent.destroy();

  times.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  const end = drained ? lastDone : performance.now();
  const seconds = Math.max(end - measuredStart, opts.seconds * 1000) / 1000;
  return {
    rps: times.length / seconds,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    p99: percentile(times, 99),
    max: times.at(-1) ?? Number.NaN,
    ok: times.length,
    non2xx,
    errors,
    timeouts,
    lagP50: percentile(lags, 50),
    lagP99: percentile(lags, 99),
  };
}
