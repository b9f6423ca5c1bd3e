// After `npm install`: make sure argon2's native module loads here, then generate the Prisma client.
// argon2 ships prebuilt binaries; on some machines the prebuilt one crashes on load, so it is then
// compiled from source (npm skips install scripts, and node-gyp-build would pick the prebuild anyway).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '..');

const argon2Works = () =>
  spawnSync(
    process.execPath,
    ['-e', "require('argon2').hash('probe').then(() => process.exit(0), () => process.exit(1))"],
    {
      cwd: root,
      stdio: 'ignore',
    },
  ).status === 0;

if (!argon2Works()) {
  const argon2Dir = path.dirname(require.resolve('argon2/package.json'));
  const bundled =
    process.env.npm_execpath &&
    path.resolve(path.dirname(process.env.npm_execpath), '../node_modules/node-gyp/bin/node-gyp.js');
  const [cmd, args] =
    bundled && existsSync(bundled)
      ? [process.execPath, [bundled, 'rebuild']]
      : ['npx', ['--yes', 'node-gyp', 'rebuild']];
  console.log('argon2: the prebuilt binary does not load on this machine; building it from source');
  const build = spawnSync(cmd, args, { cwd: argon2Dir, stdio: 'inherit' });
  if (build.status !== 0 || !argon2Works()) {
    console.error('argon2 could not be built. Install python3, make and a C++ compiler, then run npm install again.');
    process.exit(1);
  }
}

const generate = spawnSync(path.join(root, 'node_modules/.bin/tsx'), ['scripts/db.ts', 'generate'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(generate.status ?? 1);
