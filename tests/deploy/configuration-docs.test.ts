// docs/configuration.md is generated from config.ts's schema and config.docs.ts (scripts/docs-config.ts):
// it must be what the generator writes now, and name every variable the server reads.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS } from '../../apps/server/src/config.docs.ts';
import { EnvSchema } from '../../apps/server/src/config.ts';
import { acceptsOf, CONFIGURATION_DOC, defaultOf, renderConfigurationDocs } from '../../scripts/docs-config.ts';

const committed = () => readFileSync(CONFIGURATION_DOC, 'utf8');
const schemaVariables = Object.keys(EnvSchema.shape).sort();

describe('docs/configuration.md', () => {
  it('is what the generator writes from config.ts now', () => {
    // Not toEqual on the whole text: a failure should say what to do, not print 16 KB twice.
    const expected = renderConfigurationDocs();
    const current = committed();
    if (current !== expected) {
      const a = current.split('\n');
      const b = expected.split('\n');
      const line = b.findIndex((text, i) => a[i] !== text);
      expect.fail(
        `docs/configuration.md is out of date: run \`npm run docs:config\` (first difference at line ${line + 1}:\n` +
          `  committed: ${a[line] ?? '(end of file)'}\n  generated: ${b[line] ?? '(end of file)'})`,
      );
    }
  });

  it('describes exactly the variables the schema reads', () => {
    expect(Object.keys(CONFIG_DOCS).sort(), 'add them to apps/server/src/config.docs.ts').toEqual(schemaVariables);
  });

  it('has a table row for every variable the schema reads, and none other', () => {
    const rows = [...committed().matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
    expect(rows.sort(), 'run `npm run docs:config`').toEqual(schemaVariables);
  });

  it('reads defaults and accepted values from the schema itself', () => {
    expect(defaultOf(EnvSchema.shape.PORT)).toBe('`3000`');
    expect(defaultOf(EnvSchema.shape.SEARCH_PROVIDERS)).toBe('`searxng,brave,tavily`');
    // A path default is written relative to the checkout, not as the machine's absolute path.
    expect(defaultOf(EnvSchema.shape.WEB_DIST_DIR)).toBe('`apps/web/dist`');
    expect(defaultOf(EnvSchema.shape.DATABASE_URL)).toBeUndefined();
    expect(acceptsOf(EnvSchema.shape.PORT)).toBe('whole number, 1 to 65535');
    expect(acceptsOf(EnvSchema.shape.RUN_WORKERS)).toBe('true or false (also yes/no, on/off, 1/0)');
    expect(acceptsOf(EnvSchema.shape.DATABASE_URL)).toBe('a postgres:// or postgresql:// URL');
    expect(acceptsOf(EnvSchema.shape.LOG_FORMAT)).toBe('one of `json`, `pretty`');
  });
});
