// The server compiled to plain JavaScript (apps/server/dist), so production runs `node` without tsx:
// one esbuild bundle per entry point, with npm packages left to node_modules and the contracts
// package (TypeScript source) compiled in. Files the code finds beside itself at run time (worker
// threads, views, word lists) are copied to the same places under dist.
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
// esbuild is installed with tsx (a dev dependency); the build stage has it, the runtime image need not.
import { build, type Plugin } from 'esbuild';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const SERVER_SRC = path.join(ROOT, 'apps/server/src');
export const SERVER_DIST = path.join(ROOT, 'apps/server/dist');

/** Output name (under dist, without .js) to source, for the commands production runs. */
export const ENTRY_POINTS = {
  server: 'apps/server/src/server.ts',
  worker: 'apps/server/src/worker.ts',
  invite: 'scripts/invite.ts',
  user: 'scripts/user.ts',
} as const;

// The ICS worker thread (ics.worker.mjs) imports ics.js from its own folder in a compiled build.
const NESTED_ENTRY_POINTS = { 'modules/calendar/ics': 'apps/server/src/modules/calendar/ics.ts' } as const;

/** Source files that are never needed at run time, kept out of dist. */
const SKIP_DIRS = new Set(['fixtures', 'test', 'generated']);
const isAsset = (name: string) => !name.endsWith('.ts') && !/\.test\.[cm]?[jt]sx?$/.test(name);

/** @daybook/contracts points at TypeScript source, which node cannot run: bundle it like our own code. */
const bundleContracts: Plugin = {
  name: 'bundle-contracts',
  setup(b) {
    b.onResolve({ filter: /^@daybook\/contracts$/ }, () => ({
      path: path.join(ROOT, 'packages/contracts/src/index.ts'),
    }));
  },
};

/**
 * In a bundle every module's import.meta is the output file's. Each server module's import.meta
 * becomes the place its compiled self would have under dist (modules/calendar/ics-reader.ts ->
 * dist/modules/calendar/ics-reader.js), so `new URL('./ics.worker.mjs', import.meta.url)` and
 * REPO_ROOT (three folders up) find what they found from src. `buildRoot` is dist (or the folder
 * built beside it), `outputDir` the folder of this build's output files. Lines are kept for the
 * source maps.
 */
function importMetaPaths(buildRoot: string, outputDir: string): Plugin {
  const urlFromOutput = (to: string) => {
    const rel = path.relative(outputDir, to).split(path.sep).join('/');
    return `new URL(${JSON.stringify(rel.startsWith('.') ? rel : `./${rel}`)}, import.meta.url)`;
  };
  return {
    name: 'import-meta-paths',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta')) return { contents: source, loader: 'ts' };
        // Code outside the server (scripts/lib) keeps its own location.
        const target = args.path.startsWith(SERVER_SRC + path.sep)
          ? path.join(buildRoot, path.relative(SERVER_SRC, args.path)).replace(/\.ts$/, '.js')
          : args.path;
        const fileUrl = urlFromOutput(target);
        const dirPath = `__daybookFileURLToPath(${urlFromOutput(path.join(path.dirname(target), '/'))})`;
        const contents =
          // On the first line: the source map's line numbers stay right.
          "import { fileURLToPath as __daybookFileURLToPath } from 'node:url';" +
          source
            .replaceAll('import.meta.url', `${fileUrl}.href`)
            .replaceAll('import.meta.filename', `__daybookFileURLToPath(${fileUrl})`)
            .replaceAll('import.meta.dirname', `${dirPath}.replace(/[\\\\/]+$/, '')`);
        return { contents, loader: 'ts' };
      });
    },
  };
}

async function bundle(entryPoints: Record<string, string>, buildRoot: string, outputDir: string, splitting: boolean) {
  await build({
    entryPoints: Object.entries(entryPoints).map(([out, source]) => ({ in: path.join(ROOT, source), out })),
    outdir: outputDir,
    bundle: true,
    splitting,
    // Chunks beside the entry points, so every output file has the same import.meta location.
    chunkNames: '[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    packages: 'external',
    sourcemap: true,
    // Class and function names survive, as they appear in logs and error names.
    keepNames: true,
    logLevel: 'warning',
    plugins: [bundleContracts, importMetaPaths(buildRoot, outputDir)],
  });
}

async function copyAssets(from: string, to: string): Promise<number> {
  let copied = 0;
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) copied += await copyAssets(source, path.join(to, entry.name));
    } else if (entry.isFile() && isAsset(entry.name)) {
      await mkdir(to, { recursive: true });
      await copyFile(source, path.join(to, entry.name));
      copied++;
    }
  }
  return copied;
}

/**
 * Builds apps/server/dist from scratch. Needs the generated Prisma client (npm run db:generate).
 * The build is written beside dist and moved into place at the end, so a failed build leaves the
 * previous one whole. Another `outdir` (a copy of the image's layout in tests) must also be
 * <root>/apps/server/dist: the compiled code finds the web app and the migrations from there.
 */
export async function buildServer(outdir = SERVER_DIST): Promise<{ outdir: string; files: string[] }> {
  try {
    await readFile(path.join(SERVER_SRC, 'generated/prisma/client.ts'));
  } catch {
    throw new Error('The Prisma client is not generated: run `npm run db:generate` first.');
  }
  const buildDir = `${outdir}.tmp-${process.pid}`;
  await rm(buildDir, { recursive: true, force: true });
  try {
    await bundle(ENTRY_POINTS, buildDir, buildDir, true);
    for (const [out, source] of Object.entries(NESTED_ENTRY_POINTS)) {
      await bundle({ [path.basename(out)]: source }, buildDir, path.join(buildDir, path.dirname(out)), false);
    }
    await copyAssets(SERVER_SRC, buildDir);
    await rm(outdir, { recursive: true, force: true });
    await rename(buildDir, outdir);
  } catch (err) {
    await rm(buildDir, { recursive: true, force: true });
    throw err;
  }
  const files = (await readdir(outdir, { recursive: true })).map((f) => f.split(path.sep).join('/')).sort();
  return { outdir, files };
}

/**
 * Compiles more entry points (test-only servers) against an existing build in dist: their server
 * modules find their files under dist, as the compiled server's do. Needs `buildServer()` first.
 */
export async function buildEntriesBesideServer(entryPoints: Record<string, string>, outdir: string): Promise<void> {
  const buildDir = `${outdir}.tmp-${process.pid}`;
  try {
    await bundle(entryPoints, SERVER_DIST, buildDir, true);
    await rm(outdir, { recursive: true, force: true });
    await rename(buildDir, outdir);
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}
