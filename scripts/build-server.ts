// `npm run build:server`: the server as plain JavaScript in apps/server/dist (scripts/lib/server-build.ts).
// Production then runs `node apps/server/dist/server.js` (and worker.js), with no tsx.
import path from 'node:path';
import { buildServer, ROOT } from './lib/server-build.ts';

const started = performance.now();
try {
  const { outdir, files } = await buildServer();
  const scripts = files.filter((f) => f.endsWith('.js')).length;
  console.log(
    `Built ${path.relative(ROOT, outdir)}: ${scripts} JavaScript files, ${files.length} in all, in ${Math.round(performance.now() - started)} ms`,
  );
} catch (err) {
  console.error(`The server build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
