// DATA_DIR holds the embedded database, the generated secret key and the mail outbox (live reset
// links): nobody but the user running Daybook may read or write any of it.
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Files and folders this process creates are private from here on (0600 / 0700). */
export function restrictNewFiles() {
  process.umask(0o077);
}

/** Creates `dir` if needed and makes it 0700, so nothing below it is reachable by other users. */
export async function privateDir(dir: string) {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/**
 * Drops group and other permissions from everything below `dir`. PGlite creates its files 0666
 * whatever the umask; the 0700 folder already shuts others out, and this keeps a copied or
 * re-permissioned folder from exposing them.
 */
export async function tightenTree(dir: string) {
  for (const entry of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, entry);
    const { mode } = await lstat(file).catch(() => ({ mode: 0 }));
    if (mode & 0o077) await chmod(file, mode & 0o700).catch(() => {});
  }
}
