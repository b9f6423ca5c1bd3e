// Runs the longest test files first, so no long file starts late and runs alone at the end while the
// other workers wait (a clean clone has no vitest cache to order by: files went by size, and the
// slowest ones finished 40 s after the rest). The durations are tests/timings.json, written from a
// run's report by `npm run test:timings`; files it does not know yet run first, as vitest does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

const TIMINGS = path.resolve(import.meta.dirname, '../timings.json');

function readTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMINGS, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order keeps groups and projects apart and puts failed files first where it has a cache.
    const base = await super.sort(files);
    const timings = readTimings();
    const root = this.ctx.config.root;
    const known = (spec: TestSpecification) => timings[path.relative(root, spec.moduleId).split(path.sep).join('/')];
    const order = new Map(base.map((spec, i) => [spec, i]));
    return [...base].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      const ta = known(a);
      const tb = known(b);
      // A file the timings do not know yet (new since they were written) goes first.
      if (ta === undefined && tb !== undefined) return -1;
      if (tb === undefined && ta !== undefined) return 1;
      if (ta === undefined || tb === undefined) return (order.get(a) ?? 0) - (order.get(b) ?? 0);
      return tb - ta;
    });
  }
}
