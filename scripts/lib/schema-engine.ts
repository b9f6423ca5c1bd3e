// Drives Prisma's WebAssembly schema engine over an in-memory PGlite, so creating and checking
// migrations needs neither a database server nor Prisma's downloaded native engine.
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine as TSchemaEngine } from '@prisma/schema-engine-wasm';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PGLITE_SEED_DIR } from '../../apps/server/src/config.ts';
import { createPGlite } from '../../apps/server/src/db/pglite-seed.ts';

const require = createRequire(import.meta.url);

export const ROOT = path.resolve(import.meta.dirname, '../..');
// PRISMA_DIR lets the tests point the tooling at a scratch copy of prisma/.
const PRISMA_DIR = path.resolve(process.env.PRISMA_DIR ?? path.join(ROOT, 'prisma'));
export const SCHEMA_PATH = path.join(PRISMA_DIR, 'schema.prisma');
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, 'migrations');

async function loadEngineModule() {
  const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const glue = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const bytes = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
  return glue;
}

export async function readSchema() {
  return { files: [{ path: SCHEMA_PATH, content: await readFile(SCHEMA_PATH, 'utf8') }] };
}

export async function readMigrationList(): Promise<MigrationList> {
  const entries = await readdir(MIGRATIONS_DIR, { withFileTypes: true }).catch(() => []);
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const lockPath = path.join(MIGRATIONS_DIR, 'migration_lock.toml');
  return {
    baseDir: MIGRATIONS_DIR,
    lockfile: { path: 'migration_lock.toml', content: await readFile(lockPath, 'utf8').catch(() => null) },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      dirs.map(async (dir) => {
        const content = await readFile(path.join(MIGRATIONS_DIR, dir, 'migration.sql'), 'utf8').then(
          (value) => ({ tag: 'ok' as const, value }),
          (err: Error) => ({ tag: 'error' as const, value: err.message }),
        );
        return { path: dir, migrationFile: { path: 'migration.sql', content } };
      }),
    ),
  };
}

// The same extensions as the app's embedded database (the migrations create them).
const EXTENSIONS = { pg_trgm };

/** An adapter whose scripts report their errors (the stock one drops them, hiding broken migrations). */
async function connect(pglite: PGlite): Promise<SqlDriverAdapter> {
  const adapter = await new PrismaPGlite(pglite).connect();
  adapter.executeScript = async (script: string) => {
    await pglite.exec(script);
  };
  return adapter;
}

export async function withSchemaEngine<T>(fn: (engine: TSchemaEngine) => Promise<T>): Promise<T> {
  const glue = await loadEngineModule();
  const databases: Promise<PGlite>[] = [];
  // Started only when the engine asks for it: diffs (check, new) use the shadow alone, and a PGlite
  // costs seconds of CPU to start.
  let main: Promise<PGlite> | undefined;
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: 'postgres',
    adapterName: 'pglite-prisma-adapter',
    connect: () => {
      if (!main) {
        main = createPGlite(undefined, { extensions: EXTENSIONS }, PGLITE_SEED_DIR);
        databases.push(main);
      }
      return main.then(connect);
    },
    // A fresh database per shadow, like the stock factory's, but with the extensions.
    connectToShadowDb: () => {
      const shadow = createPGlite(undefined, { extensions: EXTENSIONS }, PGLITE_SEED_DIR);
      databases.push(shadow);
      return shadow.then(connect);
    },
  };
  const schema = await readSchema();
  const logs: string[] = [];
  const engine: TSchemaEngine = await glue.SchemaEngine.new(
    { datamodels: schema.files.map((f) => [f.path, f.content] as [string, string]) },
    (log: string) => logs.push(log),
    bindMigrationAwareSqlAdapterFactory(factory),
  );
  try {
    return await fn(engine);
  } finally {
    engine.free();
    for (const db of databases) await (await db).close();
  }
}

export const NO_FILTER = { externalTables: [], externalEnums: [] };
