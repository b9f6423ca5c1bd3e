// `npm run bench`: request latency of the server's hot paths, measured over real HTTP on loopback.
// Starts its own server (embedded database in a temporary folder, or a scratch database on the
// PostgreSQL server DATABASE_URL names), sends a bounded number of
// requests with fixed concurrency, and prints p50/p99 per endpoint. Numbers, not pass/fail.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../apps/server/src/app.ts';
import { loadConfig } from '../apps/server/src/config.ts';
import { scratchDatabase } from './lib/scratch-db.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(url: string) {
  const times: number[] = [];
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const start = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      if (!res.ok) failures++;
      times.push(performance.now() - start);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), rps: times.length / seconds, failures };
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-bench-'));
const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : null;
const config = loadConfig({
  ...process.env,
  ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  DATA_DIR: dataDir,
});
const app = await buildApp(config);
const address = await app.listen({ host: '127.0.0.1', port: 0 });
try {
  console.log(`${REQUESTS} requests per endpoint, ${CONCURRENCY} at a time, against ${address}\n`);
  console.log('endpoint                 p50 ms   p99 ms   req/s  failures');
  for (const endpoint of ['/healthz', '/readyz', '/api/site/', '/memories']) {
    const r = await measure(address + endpoint);
    console.log(
      `${endpoint.padEnd(24)} ${r.p50.toFixed(2).padStart(6)}  ${r.p99.toFixed(2).padStart(7)}  ${r.rps.toFixed(0).padStart(6)}  ${r.failures}`,
    );
  }
} finally {
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
  await scratch?.drop();
}
