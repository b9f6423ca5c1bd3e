// Prints vitest's JSON report as the one closing line CI reads: "N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  process.exit(1);
}
// A run can fail outside any test (an unhandled error, a broken setup): count that as a failure.
const failed = Math.max(report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0), report.success ? 0 : 1);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${report.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || report.numTotalTests === 0 ? 1 : 0);
