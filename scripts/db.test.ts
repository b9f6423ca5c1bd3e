// The offline migration tooling, run as a user runs it, on a scratch copy of prisma/.
import { spawnSync } from 'node:child_process';
import { appendFile, cp, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

function db(prismaDir: string, ...args: string[]) {
  const res = spawnSync(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'scripts/db.ts'), ...args], {
    env: { ...process.env, PRISMA_DIR: prismaDir },
    encoding: 'utf8',
  });
  return { code: res.status, out: res.stdout + res.stderr };
}

describe('db:check and db:new', () => {
  it('pass on the committed schema and migrations', () => {
    const res = db(path.join(ROOT, 'prisma'), 'check');
    expect(res.out).toMatch(/Migrations match prisma\/schema.prisma \(\d+ migrations\)/);
    expect(res.code).toBe(0);
  });

  it('catch a schema change without a migration, then create the migration that fixes it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'daybook-prisma-'));
    await cp(path.join(ROOT, 'prisma'), dir, { recursive: true });
    await appendFile(
      path.join(dir, 'schema.prisma'),
      '\nmodel Gadget {\n  id   Int    @id @default(autoincrement())\n  name String\n\n  @@map("gadgets")\n}\n',
    );

    const drift = db(dir, 'check');
    expect(drift.code).toBe(1);
    expect(drift.out).toContain('prisma/schema.prisma differs from the migrations');
    expect(drift.out).toContain('CREATE TABLE "gadgets"');

    const before = await readdir(path.join(dir, 'migrations'));
    const created = db(dir, 'new', 'add_gadgets');
    expect(created.code).toBe(0);
    const added = (await readdir(path.join(dir, 'migrations'))).filter((d) => !before.includes(d));
    expect(added).toEqual([expect.stringMatching(/^\d{14}_add_gadgets$/)]);
    const sql = await readFile(path.join(dir, 'migrations', added[0] ?? '', 'migration.sql'), 'utf8');
    expect(sql).toContain('CREATE TABLE "gadgets"');
    expect(sql).not.toContain('CREATE TABLE "users"');

    expect(db(dir, 'check').code).toBe(0);
    expect(db(dir, 'new', 'again').out).toContain('nothing to create');
  }, 120_000);

  it('rejects a migration name it cannot use as a folder', () => {
    const res = db(path.join(ROOT, 'prisma'), 'new', 'Bad Name!');
    expect(res.code).toBe(1);
    expect(res.out).toContain('usage: npm run db:new -- <name>');
  });
});
