// The figures `npm run bench` reports: medians of the runs, the targets (issue 15), and the
// tables it prints (Markdown, so the README can show them as they are).
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
const pct = (n: number) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : '-');
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
