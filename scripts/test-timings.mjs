// Writes tests/timings.json (each test file's seconds in a run) from vitest's JSON report, for the
// sequencer that starts the longest files first (tests/helpers/duration-sequencer.ts). Run it after
// a whole `npm test` on the 2-core machine CI uses: `npm run test:timings`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const report = JSON.parse(readFileSync(path.join(root, 'test-results/vitest.json'), 'utf8'));
const timings = Object.fromEntries(
  (report.testResults ?? [])
    .map((r) => [
      path.relative(root, r.name).split(path.sep).join('/'),
      Math.round(((r.endTime ?? 0) - (r.startTime ?? 0)) / 100) / 10,
    ])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(path.join(root, 'tests/timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
console.log(`tests/timings.json: ${Object.keys(timings).length} files`);
