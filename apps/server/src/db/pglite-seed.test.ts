// New embedded databases start from a kept empty cluster: the same database initdb makes, an existing
// one opened as it is, a broken copy replaced.
import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPGlite } from './pglite-seed.ts';

const scratch = (name: string) => mkdtemp(path.join(tmpdir(), `daybook-seed-${name}-`));

// Each test makes two or three whole clusters (an initdb is seconds of CPU on a busy 2-core machine).
describe('createPGlite', { timeout: 90_000 }, () => {
  it('keeps the first new cluster and starts the next from it, empty and working', async () => {
    const seedDir = await scratch('keep');
    const first = await createPGlite(undefined, {}, seedDir);
    await first.exec('CREATE TABLE notes (body text)');
    await first.close();
    expect(await readdir(seedDir)).toEqual([expect.stringMatching(/^pglite-.+-plain\.tar$/)]);

    const second = await createPGlite(undefined, {}, seedDir);
    try {
      // The copy was taken before anything was written to the first.
      const tables = await second.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rows).toEqual([{ n: 0 }]);
      await second.exec("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')");
      expect((await second.query('SELECT body FROM notes')).rows).toEqual([{ body: 'kept' }]);
    } finally {
      await second.close();
    }
  });

  it('opens an existing data folder as it is', async () => {
    const seedDir = await scratch('existing');
    const dataDir = path.join(await scratch('data'), 'pglite');
    const made = await createPGlite(dataDir, {}, seedDir);
    await made.exec("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('mine')");
    await made.close();
    const reopened = await createPGlite(dataDir, {}, seedDir);
    try {
      expect((await reopened.query('SELECT body FROM notes')).rows).toEqual([{ body: 'mine' }]);
    } finally {
      await reopened.close();
    }
  });

  it('replaces a kept copy it cannot load, and still opens', async () => {
    // The kept copy's name, from a first folder; a second holds a broken file by that name.
    const named = await scratch('named');
    await (await createPGlite(undefined, {}, named)).close();
    const [file = ''] = await readdir(named);
    const seedDir = await scratch('broken');
    await writeFile(path.join(seedDir, file), 'not a tarball');
    const db = await createPGlite(undefined, {}, seedDir);
    try {
      expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
    expect((await stat(path.join(seedDir, file))).size).toBeGreaterThan(1_000_000);
  });
});
