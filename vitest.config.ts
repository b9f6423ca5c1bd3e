import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { DurationSequencer } from './tests/helpers/duration-sequencer.ts';

// Workers per group of projects (groups run one after another), measured on the 2-core machine CI
// runs on: server files mostly wait on PostgreSQL, SMTP, sockets, timers and child processes, so twice
// as many as cores run at once (6 kept the cores busier, but starved a research flow's 10 s stage); web files (jsdom) only compute, so one per core; end-to-end files each drive
// a server and a Chromium, and wait on both (3 filled the two cores: 167 s -> 137 s).
const SERVER_WORKERS = Number(process.env.TEST_WORKERS ?? 4);
const WEB_WORKERS = Number(process.env.TEST_WEB_WORKERS ?? 2);
const E2E_WORKERS = Number(process.env.TEST_E2E_WORKERS ?? 3);

// One config, one project per package (plus end-to-end), so `vitest run` runs everything.
export default defineConfig({
  test: {
    // The longest files first (tests/timings.json), so none of them runs alone at the end.
    sequence: { sequencer: DurationSequencer },
    projects: [
      {
        test: {
          name: 'contracts',
          include: ['packages/contracts/src/**/*.test.ts'],
          environment: 'node',
          maxWorkers: SERVER_WORKERS,
        },
      },
      {
        test: {
          name: 'server',
          include: [
            'apps/server/src/**/*.test.ts',
            'scripts/**/*.test.ts',
            'tests/helpers/**/*.test.ts',
            'tests/deploy/**/*.test.ts',
          ],
          environment: 'node',
          globalSetup: ['tests/helpers/db-global-setup.ts'],
          setupFiles: ['apps/server/src/test/setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          maxWorkers: SERVER_WORKERS,
          // Files share their worker's modules (the server's graph is imported once per worker, not once
          // per file: 260 s of imports before); a file puts back what it changes in a module (spies,
          // argon2's options, the environment). TEST_ISOLATE=1 gives each file fresh modules.
          isolate: process.env.TEST_ISOLATE === '1',
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'web',
          include: ['apps/web/src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['apps/web/src/test/setup.ts'],
          maxWorkers: WEB_WORKERS,
          // As the server's: jsdom, React and the app were loaded again for each file (web group 66 s
          // -> 28 s alone). A file that mocks a module loads its imports afresh (vi.resetModules).
          isolate: process.env.TEST_ISOLATE === '1',
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['tests/helpers/db-global-setup.ts', 'tests/e2e/global-setup.ts'],
          setupFiles: ['tests/e2e/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Each file drives its own server and browser: run them after everything else.
          maxWorkers: E2E_WORKERS,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
