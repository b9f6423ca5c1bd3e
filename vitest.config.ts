import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// One config, one project per package (plus end-to-end), so `vitest run` runs everything.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'contracts',
          include: ['packages/contracts/src/**/*.test.ts'],
          environment: 'node',
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
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'web',
          include: ['apps/web/src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['apps/web/src/test/setup.ts'],
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['tests/helpers/db-global-setup.ts', 'tests/e2e/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Each file drives its own server and browser: run them after everything else, two at a time.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
