// A new PGlite cluster costs about two seconds of CPU (initdb, in WebAssembly); a copy of an empty
// one loads in a quarter of that. Outside production the first cluster made is kept, as a dump, in a
// cache folder, and later new clusters start from it: the tests make dozens, across processes, and
// db:check and db:new one or two each. An embedded database that already exists is opened as it is.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

/** The installed PGlite's version: a dump is only loaded by the PGlite that made it. */
function pgliteVersion(): string {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    let dir = path.dirname(entry);
    while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const loaded = new Map<string, Promise<Blob | null>>();

function readSeed(file: string): Promise<Blob | null> {
  let seed = loaded.get(file);
  if (!seed) {
    seed = readFile(file).then(
      (bytes) => new Blob([bytes]),
      () => null,
    );
    loaded.set(file, seed);
  }
  return seed;
}

/** Written whole or not at all: processes making their first cluster at once each rename their own. */
async function writeSeed(file: string, pglite: PGlite) {
  const dump = await pglite.dumpDataDir('none');
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.${Date.now()}`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, file);
  loaded.set(file, Promise.resolve(dump));
}

/**
 * Opens PGlite in `dataDir` (in memory when undefined). A new cluster starts from the empty one kept
 * in `seedDir`, or, when there is none yet, is made by initdb and kept there; `null` never keeps one.
 */
export async function createPGlite(
  dataDir: string | undefined,
  options: PGliteOptions,
  seedDir: string | null,
): Promise<PGlite> {
  const isNew = dataDir === undefined || !existsSync(path.join(dataDir, 'PG_VERSION'));
  if (!seedDir || !isNew) return PGlite.create({ ...options, dataDir });
  const extensions = Object.keys(options.extensions ?? {}).sort();
  const file = path.join(seedDir, `pglite-${pgliteVersion()}-${extensions.join('+') || 'plain'}.tar`);
  const seed = await readSeed(file);
  if (seed) {
    try {
      return await PGlite.create({ ...options, dataDir, loadDataDir: seed });
    } catch (err) {
      // A dump this PGlite cannot load is dropped; the cluster is made afresh below, unless loading
      // it left files in the folder.
      loaded.delete(file);
      await rm(file, { force: true });
      if (dataDir && existsSync(path.join(dataDir, 'PG_VERSION'))) throw err;
    }
  }
  const pglite = await PGlite.create({ ...options, dataDir });
  await writeSeed(file, pglite).catch(() => {});
  return pglite;
}
