// Reads vitest's JSON report: prints the slowest test files (--slowest N), then the one closing
// line CI reads, "N passed, N failed, N skipped". --checks-failed counts a failed check (lint,
// typecheck, drift) run beside the tests as one failure.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [file, ...flags] = process.argv.slice(2);
const slowestAt = flags.indexOf('--slowest');
const slowest = slowestAt >= 0 ? Number(flags[slowestAt + 1]) : 0;
const checksFailed = flags.includes('--checks-failed') ? 1 : 0;

let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  process.exit(1);
}

if (slowest > 0) {
  const files = (report.testResults ?? [])
    .map((r) => ({ name: path.relative(process.cwd(), r.name), ms: (r.endTime ?? 0) - (r.startTime ?? 0) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, slowest);
  if (files.length) {
    console.log(`The ${files.length} slowest test files:`);
    for (const f of files) console.log(`${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.name}`);
  }
}

// A run can fail outside any test (an unhandled error, a broken setup): count that as a failure.
const failed =
  Math.max(report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0), report.success ? 0 : 1) + checksFailed;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${report.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || report.numTotalTests === 0 ? 1 : 0);
