// The admin commands, run as an operator runs them, against a database of their own.
import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseUrl } from '../tests/helpers/test-db.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
let env: Record<string, string>;
let drop = async () => {};

beforeAll(async () => {
  const created = await createDatabaseUrl();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'daybook-cli-'));
  env = {
    DATA_DIR: dataDir,
    PUBLIC_URL: 'https://daybook.example.org',
    ...(created ? { DATABASE_URL: created.url } : {}),
  };
  if (created) drop = created.drop;
});
afterAll(() => drop());

function run(script: string, ...args: string[]) {
  const res = spawnSync(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'scripts', script), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

describe('npm run invite', () => {
  // Four commands, each a process that loads the server's modules and opens the database.
  it('creates an invite and prints its signup link once, lists it, revokes it', { timeout: 90_000 }, () => {
    const created = run('invite.ts', 'create', '--uses', '2', '--expires', '7d', '--email', 'Friend@Example.com');
    expect(created.err).toBe('');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^Invite #(\d+) created: 2 uses, expires \S+, only for friend@example.com\.$/m);
    expect(created.out).toMatch(
      /^Signup link \(shown once\): https:\/\/daybook\.example\.org\/auth\/signup\?itoken=[\w-]{20,}$/m,
    );
    const id = /Invite #(\d+)/.exec(created.out)?.[1];

    const list = run('invite.ts', 'list');
    expect(list.out).toMatch(new RegExp(`^#${id}  active +uses 0/2  expires \\S+  friend@example.com$`, 'm'));
    expect(list.out).not.toContain('itoken');

    expect(run('invite.ts', 'revoke', String(id)).out).toBe(`Invite #${id} is revoked.\n`);
    expect(run('invite.ts', 'list').out).toMatch(new RegExp(`^#${id}  revoked`, 'm'));
  });

  it('explains bad arguments', () => {
    expect(run('invite.ts').code).toBe(2);
    expect(run('invite.ts').err).toContain('usage:');
    const badExpiry = run('invite.ts', 'create', '--expires', 'soon');
    expect(badExpiry.code).toBe(1);
    expect(badExpiry.err).toBe('error: --expires takes a number of days such as 7d (got "soon")\n');
    expect(run('invite.ts', 'create', '--uses', '0').err).toContain('--uses takes a whole number of at least 1');
    expect(run('invite.ts', 'revoke', '99999').err).toBe('error: Invite not found\n');
  });
});

describe('npm run user', () => {
  it('reports an unknown user and explains usage', () => {
    expect(run('user.ts', 'promote', 'nobody@example.com').err).toBe(
      'error: no user with the email nobody@example.com\n',
    );
    expect(run('user.ts', 'promote').code).toBe(2);
    expect(run('user.ts', 'list').out).toBe('No users yet.\n');
  });
});
