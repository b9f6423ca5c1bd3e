// Daybook as it was at another commit, for the benches' before/after lines: a git worktree of its
// own, with this checkout's npm packages (symlinked), its own workspace packages and its own Prisma
// client. The caller builds or runs it, then removes it.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = (command: string, args: string[], cwd = ROOT) =>
  promisify(execFile)(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 });

export async function checkoutAt(rev: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'daybook-at-')), 'tree');
  await run('git', ['worktree', 'add', '--detach', '--force', dir, rev]);
  const remove = async () => {
    await run('git', ['worktree', 'remove', '--force', dir]).catch(() => {});
    await rm(path.dirname(dir), { recursive: true, force: true });
  };
  try {
    const modules = path.join(ROOT, 'node_modules');
    await mkdir(path.join(dir, 'node_modules', '@daybook'), { recursive: true });
    for (const name of await readdir(modules))
      if (name !== '@daybook') await symlink(path.join(modules, name), path.join(dir, 'node_modules', name));
    // Relative links (../../packages/...): they point into the worktree.
    for (const name of await readdir(path.join(modules, '@daybook')))
      await symlink(
        await readlink(path.join(modules, '@daybook', name)),
        path.join(dir, 'node_modules', '@daybook', name),
      );
    await run('npm', ['run', 'db:generate', '--silent'], dir);
  } catch (err) {
    await remove();
    throw err;
  }
  return { dir, remove };
}
