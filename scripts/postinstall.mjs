// After `npm install`: generate the Prisma client.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

const generate = spawnSync(path.join(root, 'node_modules/.bin/tsx'), ['scripts/db.ts', 'generate'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(generate.status ?? 1);
