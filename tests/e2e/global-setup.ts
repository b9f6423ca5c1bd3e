// End-to-end tests run against the built app, as production does: `node` on apps/server/dist with the
// web app from apps/web/dist. Each is built here when missing or older than its source (so a test
// never runs yesterday's code), with the test-only entry points compiled beside the server.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildEntriesBesideServer, buildServer } from '../../scripts/lib/server-build.ts';
import { CHROMIUM_PATH, E2E_ENTRIES, E2E_ENTRY_DIR } from './harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Tests and their helpers are not part of a build: editing them rebuilds nothing. */
const NOT_BUILT = /generated|node_modules|\.test\.tsx?$|(^|\/)test\//;

/** The newest modification time of the files under these folders that the builds read. */
function newest(...dirs: string[]): number {
  let latest = 0;
  for (const dir of dirs) {
    for (const name of readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]) {
      if (NOT_BUILT.test(name.split(path.sep).join('/'))) continue;
      latest = Math.max(latest, statSync(path.join(ROOT, dir, name)).mtimeMs);
    }
  }
  return latest;
}

const builtAt = (file: string) => (existsSync(file) ? statSync(file).mtimeMs : 0);
const stale = (output: string, ...sources: string[]) =>
  process.env.E2E_REBUILD === '1' || builtAt(path.join(ROOT, output)) < newest(...sources);

export default async function setup() {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH}. Install it with "apt-get install chromium" or set CHROMIUM_PATH.`,
    );
  }
  if (stale('apps/web/dist/index.html', 'apps/web/src', 'packages/contracts/src')) {
    // A production build, as `npm test` and users make: vitest sets NODE_ENV=test, under which Vite
    // bundles React's development build, whose strict mode mounts the chat twice (two sockets).
    execFileSync(path.join(ROOT, 'node_modules/.bin/vite'), ['build', 'apps/web', '--logLevel', 'warn'], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, NODE_ENV: 'production' },
    });
  }
  if (stale('apps/server/dist/server.js', 'apps/server/src', 'packages/contracts/src', 'scripts')) await buildServer();
  await buildEntriesBesideServer(E2E_ENTRIES, E2E_ENTRY_DIR);
}
