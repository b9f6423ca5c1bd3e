// The figures `npm run bench` reports: medians of the runs, the targets (issue 15), and the
// tables it prints (Markdown, so docs/benchmarks.md can show them as they are).
import type { HttpRun } from './protocol.ts';

export const median = (values: number[]) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

export const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/** A small seeded generator (mulberry32): the same turns give the same interval, run after run. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The k-th smallest value (from 0), found in place without sorting (quickselect): thousands of
 * resamples of 10,000 turns take a second, not a minute.
 */
export function select(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) < pivot) i++;
      while ((values[j] as number) > pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i++] = values[j] as number;
        values[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return values[k] ?? Number.NaN;
}

export interface RatioInterval {
  /** p(a) / p(b) over all turns. */
  ratio: number;
  /** The central `confidence` share of the resampled ratios. */
  low: number;
  high: number;
  confidence: number;
}

/**
 * How sure the ratio of two builds' percentiles is: a paired bootstrap over rounds. `a[i]` and
 * `b[i]` are the turns of one round on each build, run back to back, so they met the same seconds of
 * the machine; resampling whole pairs keeps that, and keeps the turns of a round (which share its
 * load) together. A round decides much of a tail: one slow second of the machine lands on a
 * hundred turns at once, so the interval is wide when the rounds are few.
 */
export function pairedRatioInterval(
  a: number[][],
  b: number[][],
  p: number,
  { samples = 2000, confidence = 0.9, seed = 1 } = {},
): RatioInterval {
  if (a.length !== b.length || !a.length)
    throw new Error('pairedRatioInterval: as many rounds on each side, at least one');
  const ratio = percentile(a.flat(), p) / percentile(b.flat(), p);
  // Lost turns (NaN) are left out, as percentile() leaves them out.
  const finite = (rounds: number[][]) => rounds.map((r) => Float64Array.from(r.filter((v) => Number.isFinite(v))));
  const [ra, rb] = [finite(a), finite(b)];
  const random = seeded(seed);
  const resampled = (picked: Float64Array[]) => {
    const all = new Float64Array(picked.reduce((n, r) => n + r.length, 0));
    let at = 0;
    for (const r of picked) {
      all.set(r, at);
      at += r.length;
    }
    return select(all, Math.min(all.length - 1, Math.floor((p / 100) * all.length)));
  };
  const ratios: number[] = [];
  for (let s = 0; s < samples; s++) {
    const picks = Array.from({ length: ra.length }, () => Math.floor(random() * ra.length));
    ratios.push(
      resampled(picks.map((j) => ra[j] as Float64Array)) / resampled(picks.map((j) => rb[j] as Float64Array)),
    );
  }
  const tail = (1 - confidence) / 2;
  return { ratio, low: percentile(ratios, tail * 100), high: percentile(ratios, (1 - tail) * 100), confidence };
}

export interface Endpoint {
  name: string;
  label: string;
  path: string;
  /** Least share of the bare lookup's req/s (0.5 = 50%). */
  minShare?: number;
  /** Measured at the fixed rate too, with this p99 bound in ms. */
  maxRateP99?: number;
}

export interface EndpointResult extends Endpoint {
  runs: HttpRun[];
  rateRuns: HttpRun[];
  rps: number;
  p99: number;
  /** Of the bare lookup's median req/s, in the same run. */
  share: number;
  /** At the fixed rate, open loop: latency from when each request was due (medians of the runs). */
  rateP99: number | null;
  rateP50: number | null;
  /** Median share of the machine's CPU other processes used during these runs. */
  foreignCpu: number;
  /** Answers per second the fixed-rate runs got (median): 2xx answers over the time from the first due to the last answered. */
  rateRps: number | null;
  /** Answers that were not 2xx, and connection errors, over every run: any makes the line invalid. */
  failures: number;
  met: boolean | null;
}

export function summarize(
  endpoint: Endpoint,
  runs: HttpRun[],
  rateRuns: HttpRun[],
  bareRps: number,
  rate: number,
): EndpointResult {
  const rps = median(runs.map((r) => r.rps));
  const rateP99 = rateRuns.length ? median(rateRuns.map((r) => r.p99)) : null;
  const rateP50 = rateRuns.length ? median(rateRuns.map((r) => r.p50)) : null;
  const rateRps = rateRuns.length ? median(rateRuns.map((r) => r.rps)) : null;
  const failures = [...runs, ...rateRuns].reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
  const share = rps / bareRps;
  const checks: boolean[] = [];
  if (endpoint.minShare !== undefined) checks.push(share >= endpoint.minShare);
  // The rate must have been kept too: a server that answers fewer has queued the rest.
  if (endpoint.maxRateP99 !== undefined)
    checks.push(rateP99 !== null && rateP99 < endpoint.maxRateP99 && (rateRps ?? 0) >= 0.95 * rate);
  return {
    ...endpoint,
    runs,
    rateRuns,
    rps,
    p99: median(runs.map((r) => r.p99)),
    share,
    rateP99,
    rateP50,
    rateRps,
    foreignCpu: median([...runs, ...rateRuns].map((r) => r.foreignCpu ?? Number.NaN)),
    failures,
    met: failures ? false : checks.length ? checks.every(Boolean) : null,
  };
}

export interface OtherLine {
  label: string;
  value: string;
  reference: string;
  target: string;
  met: boolean | null;
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '-');
export const pct = (n: number) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : '-');
const ms = (n: number | null) =>
  n === null || !Number.isFinite(n) ? '-' : `${n < 100 ? n.toFixed(1) : Math.round(n).toString()} ms`;
export const verdict = (met: boolean | null) => (met === null ? '' : met ? 'met' : '**not met**');
/** Above this share of the CPU taken by other processes, a line is marked as measured on a busy machine. */
export const BUSY_WARNING = 0.1;
const busyNote = (foreignCpu: number) =>
  foreignCpu > BUSY_WARNING ? ` (busy machine: others took ${Math.round(foreignCpu * 100)}% CPU)` : '';

function table(header: string[], rows: string[][]) {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function httpTarget(e: EndpointResult) {
  const parts: string[] = [];
  if (e.minShare !== undefined) parts.push(`≥ ${Math.round(e.minShare * 100)}%`);
  if (e.maxRateP99 !== undefined) parts.push(`p99 < ${e.maxRateP99} ms at the rate`);
  return parts.join(', ') || (e.name === 'bare' ? 'reference' : 'none (for comparison)');
}

export function httpTable(results: EndpointResult[], rate: number) {
  return table(
    ['endpoint', 'req/s', 'share of the bare lookup', 'p99', `p99 at ${rate} req/s`, 'target', ''],
    results.map((e) => [
      e.label,
      int(e.rps),
      pct(e.share),
      ms(e.p99),
      e.rateRps !== null && e.rateRps < 0.95 * rate ? `${ms(e.rateP99)} (${int(e.rateRps)} req/s)` : ms(e.rateP99),
      httpTarget(e),
      (e.failures ? `**not met** (${e.failures.toLocaleString('en')} failed requests)` : verdict(e.met)) +
        busyNote(e.foreignCpu),
    ]),
  );
}

export function otherTable(lines: OtherLine[]) {
  return table(
    ['measure', 'Daybook', 'reference', 'target', ''],
    lines.map((l) => [l.label, l.value, l.reference, l.target, verdict(l.met)]),
  );
}
