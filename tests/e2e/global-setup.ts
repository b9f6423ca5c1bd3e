// End-to-end tests run against the built app: build it if it is not there, and find Chromium.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM_PATH } from './harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export default function setup() {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH}. Install it with "apt-get install chromium" or set CHROMIUM_PATH.`,
    );
  }
  if (!existsSync(path.join(ROOT, 'apps/web/dist/index.html')) || process.env.E2E_REBUILD === '1') {
    execFileSync(path.join(ROOT, 'node_modules/.bin/vite'), ['build', 'apps/web', '--logLevel', 'warn'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
}
