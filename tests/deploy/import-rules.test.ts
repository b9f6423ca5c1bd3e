// The import rules `npm run lint` enforces (.dependency-cruiser.cjs): each kind of violation is
// caught in a small tree made for it, and the real tree has none.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../apps/server/src/config.ts';

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = path.join(REPO_ROOT, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

async function cruise(cwd: string, dirs: string[]): Promise<Violation[]> {
  // Exits non-zero when it finds violations; the JSON report is on stdout either way.
  const { stdout } = await run(process.execPath, [CLI, '--config', CONFIG, '--output-type', 'json', ...dirs], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const FILES: Record<string, string> = {
  // A module reaching into another's repo, and one using the other's public face (allowed).
  'apps/server/src/modules/notes/notes.service.ts': `import { tagRows } from '../tags/tags.repo.ts';\nexport const notes = tagRows;\n`,
  'apps/server/src/modules/pins/pins.service.ts': `import { tags } from '../tags/index.ts';\nexport const pins = tags;\n`,
  'apps/server/src/modules/tags/tags.repo.ts': `export const tagRows = 1;\n`,
  'apps/server/src/modules/tags/index.ts': `export { tagRows as tags } from './tags.repo.ts';\n`,
  // Two modules that import each other.
  'apps/server/src/modules/ping/ping.service.ts': `import { pong } from '../pong/pong.service.ts';\nexport const ping = () => pong;\n`,
  'apps/server/src/modules/pong/pong.service.ts': `import { ping } from '../ping/ping.service.ts';\nexport const pong = () => ping;\n`,
  // The shared layers importing a feature.
  'apps/server/src/lib/clock.ts': `import { tags } from '../modules/tags/index.ts';\nexport const clock = tags;\n`,
  'apps/web/src/features/auth/Menu.tsx': `export const Menu = 1;\n`,
  'apps/web/src/components/NavBar.tsx': `import { Menu } from '../features/auth/Menu.tsx';\nexport const NavBar = Menu;\n`,
};

describe('import rules', () => {
  let tree: string;
  beforeAll(async () => {
    tree = await mkdtemp(path.join(tmpdir(), 'daybook-import-rules-'));
    await copyFile(path.join(REPO_ROOT, 'tsconfig.base.json'), path.join(tree, 'tsconfig.base.json'));
    for (const [file, text] of Object.entries(FILES)) {
      await mkdir(path.dirname(path.join(tree, file)), { recursive: true });
      await writeFile(path.join(tree, file), text);
    }
  });
  afterAll(async () => {
    if (tree) await rm(tree, { recursive: true, force: true });
  });

  it('catch a reach into another module, a cycle, and a shared layer importing a feature', async () => {
    const found = (await cruise(tree, ['apps'])).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'module-public-face: apps/server/src/modules/notes/notes.service.ts → apps/server/src/modules/tags/tags.repo.ts',
        'no-circular: apps/server/src/modules/ping/ping.service.ts → apps/server/src/modules/pong/pong.service.ts',
        'no-folder-cycle: apps/server/src/modules/ping → apps/server/src/modules/pong',
        'server-lib-is-shared: apps/server/src/lib/clock.ts → apps/server/src/modules/tags/index.ts',
        'web-shared-is-shared: apps/web/src/components/NavBar.tsx → apps/web/src/features/auth/Menu.tsx',
      ]),
    );
    // The public face is allowed.
    expect(found.filter((f) => f.includes('pins.service.ts'))).toEqual([]);
  });

  it('find nothing in the real tree', async () => {
    const found = await cruise(REPO_ROOT, ['apps/server/src', 'apps/web/src', 'packages/contracts/src']);
    expect(found.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });
});
