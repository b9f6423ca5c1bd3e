// The offline migration tooling, run as a user runs it, on a scratch copy of prisma/.
import { spawn } from 'node:child_process';
import { appendFile, cp, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Runs `tsx scripts/db.ts ...args` (one node process, without tsx's CLI) on a copy of prisma/. */
async function db(prismaDir: string, ...args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/db.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, PRISMA_DIR: prismaDir },
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, out };
}

/** A test's time for one or two runs of the tooling (each starts the schema engine over PGlite). */
const STEP_MS = 60_000;

describe('db:check and db:new', () => {
  it(
    'pass on the committed schema and migrations',
    async () => {
      const res = await db(path.join(ROOT, 'prisma'), 'check');
      expect(res.out).toMatch(/Migrations match prisma\/schema.prisma \(\d+ migrations\)/);
      expect(res.code).toBe(0);
    },
    STEP_MS,
  );

  // One scratch copy of prisma/ goes through the steps a developer takes, one test per step: each CLI
  // run starts the schema engine over PGlite (~10 s of CPU on a quiet machine), and a step gets a minute
  // for its one or two (the five in one test had two minutes).
  describe('a schema change without a migration', () => {
    let dir = '';
    let before: string[] = [];
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'daybook-prisma-'));
      await cp(path.join(ROOT, 'prisma'), dir, { recursive: true });
      await appendFile(
        path.join(dir, 'schema.prisma'),
        '\nmodel Gadget {\n  id   Int    @id @default(autoincrement())\n  name String\n\n  @@map("gadgets")\n}\n',
      );
      before = await readdir(path.join(dir, 'migrations'));
    });

    it(
      'is caught by db:check, which shows the SQL missing',
      async () => {
        const drift = await db(dir, 'check');
        expect(drift.code).toBe(1);
        expect(drift.out).toContain('prisma/schema.prisma differs from the migrations');
        expect(drift.out).toContain('CREATE TABLE "gadgets"');
      },
      STEP_MS,
    );

    it(
      'gets its migration from db:new, holding only the change',
      async () => {
        const created = await db(dir, 'new', 'add_gadgets');
        expect(created.code).toBe(0);
        const added = (await readdir(path.join(dir, 'migrations'))).filter((d) => !before.includes(d));
        expect(added).toEqual([expect.stringMatching(/^\d{14}_add_gadgets$/)]);
        const sql = await readFile(path.join(dir, 'migrations', added[0] ?? '', 'migration.sql'), 'utf8');
        expect(sql).toContain('CREATE TABLE "gadgets"');
        expect(sql).not.toContain('CREATE TABLE "users"');
      },
      STEP_MS,
    );

    it(
      'then passes db:check, and db:new has nothing more to create',
      async () => {
        expect((await db(dir, 'check')).code).toBe(0);
        expect((await db(dir, 'new', 'again')).out).toContain('nothing to create');
      },
      STEP_MS,
    );
  });

  it(
    'rejects a migration name it cannot use as a folder',
    async () => {
      const res = await db(path.join(ROOT, 'prisma'), 'new', 'Bad Name!');
      expect(res.code).toBe(1);
      expect(res.out).toContain('usage: npm run db:new -- <name>');
    },
    STEP_MS,
  );
});
