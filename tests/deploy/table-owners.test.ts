// Each table has one module that writes it; the others ask that module's service. This reads every
// write in the server's modules (SQL and Prisma) and checks it is made by the table's owner.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../apps/server/src/config.ts';

/** The owner of each table: the one module whose repos may insert, update or delete its rows. */
const TABLE_OWNERS: Record<string, string> = {
  users: 'accounts',
  email_addresses: 'accounts',
  sessions: 'accounts',
  invites: 'invites',
  invite_uses: 'invites',
  rate_limit_hits: 'rate-limit',
  memories: 'memories',
  memory_counts: 'memories',
  chat_messages: 'chat',
  researches: 'research',
  calendar_connections: 'calendar',
  calendar_oauth_states: 'calendar',
  daily_messages: 'daily',
  realtime_events: 'realtime',
  model_permits: 'model',
  model_usage: 'model',
};

const MODULES = path.join(REPO_ROOT, 'apps/server/src/modules');
const SCHEMA = path.join(REPO_ROOT, 'prisma/schema.prisma');
const SQL_WRITE = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?([a-z_]+)"?/gi;
const PRISMA_WRITE =
  /\b(?:tx|prisma|client|db)\.([a-z][A-Za-z]*)\.(?:create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany)\b/g;

/** Prisma's model names (lower camel case, as the client spells them) and their tables. */
async function modelTables(): Promise<Record<string, string>> {
  const schema = await readFile(SCHEMA, 'utf8');
  const tables: Record<string, string> = {};
  for (const [, model, body] of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const table = /@@map\("([a-z_]+)"\)/.exec(body ?? '')?.[1];
    if (model && table) tables[model[0]?.toLowerCase() + model.slice(1)] = table;
  }
  return tables;
}

/** The tables `source` writes, by SQL text or through Prisma's client. */
function writesIn(source: string, models: Record<string, string>): string[] {
  const tables = new Set<string>();
  for (const [, table] of source.matchAll(SQL_WRITE)) {
    if (table && table in TABLE_OWNERS) tables.add(table);
  }
  for (const [, model] of source.matchAll(PRISMA_WRITE)) {
    const table = model ? models[model] : undefined;
    if (table) tables.add(table);
  }
  return [...tables].sort();
}

async function moduleSources(): Promise<Array<{ module: string; file: string; source: string }>> {
  const found: Array<{ module: string; file: string; source: string }> = [];
  for (const module of await readdir(MODULES)) {
    const files = await readdir(path.join(MODULES, module), { recursive: true }).catch(() => []);
    for (const file of files) {
      if (!/\.ts$/.test(file) || /\.test\.|\.suite\.ts$|\.test-|(^|\/)test\//.test(file)) continue;
      found.push({ module, file, source: await readFile(path.join(MODULES, module, file), 'utf8') });
    }
  }
  return found;
}

describe('table owners', () => {
  it('names every table of the schema', async () => {
    expect(Object.values(await modelTables()).sort()).toEqual(Object.keys(TABLE_OWNERS).sort());
  });

  it('finds writes by SQL and by Prisma, and only writes', async () => {
    const models = await modelTables();
    const source = `
      query('INSERT INTO chat_messages (user_id) VALUES ($1)');
      query(\`UPDATE "users" SET onboarded_at = now()\`);
      tx.memory.deleteMany({ where: { userId } });
      prisma.research.findMany({});
      query('SELECT * FROM daily_messages');
      query('INSERT INTO memories (key) VALUES ($1) ON CONFLICT (key) DO UPDATE SET data = $2');`;
    expect(writesIn(source, models)).toEqual(['chat_messages', 'memories', 'users']);
  });

  it('has each table written only by its owner', async () => {
    const models = await modelTables();
    const strays: string[] = [];
    for (const { module, file, source } of await moduleSources()) {
      for (const table of writesIn(source, models)) {
        if (TABLE_OWNERS[table] !== module) strays.push(`${module}/${file} writes ${table} (${TABLE_OWNERS[table]}'s)`);
      }
    }
    expect(strays).toEqual([]);
  });
});
