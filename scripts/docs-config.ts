// Writes docs/configuration.md from the server's own configuration: every variable of config.ts's
// EnvSchema, with its default and the values it accepts read from the zod schema itself, and what it
// is for from config.docs.ts. tests/deploy/configuration-docs.test.ts fails when the file is stale.
//   npm run docs:config              write docs/configuration.md
//   npm run docs:config -- --check   exit 1 when it is not what would be written
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_DOCS, CONFIG_GROUPS, type VariableDoc } from '../apps/server/src/config.docs.ts';
import { EnvSchema, REPO_ROOT } from '../apps/server/src/config.ts';

export const CONFIGURATION_DOC = path.join(REPO_ROOT, 'docs/configuration.md');

/** A table cell longer than this belongs in the note under the table (`details`). */
const SUMMARY_MAX = 200;

// ---- Reading the schema ------------------------------------------------------------------------
// zod 4 keeps each schema's definition in `_zod.def`; only the parts read here are typed.

type Message = (issue?: unknown) => unknown;
interface CheckDef {
  check: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  value?: number;
  error?: Message;
}
interface Def {
  type: string;
  innerType?: Schema;
  in?: Schema;
  out?: Schema;
  element?: Schema;
  entries?: Record<string, string | number>;
  checks?: Array<{ _zod: { def: CheckDef } }>;
  format?: string;
  protocol?: RegExp;
  defaultValue?: unknown;
}
interface Schema {
  _zod: { def: Def };
}

const defOf = (schema: unknown) => (schema as Schema)._zod.def;
const code = (text: string) => `\`${text}\``;

/** The words config.ts's `flag` accepts. */
const FLAG_WORDS = ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'];

function messageOf(error: Message | undefined): string | undefined {
  const result = error?.();
  if (typeof result === 'string') return result;
  const message = (result as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}

/** A validation message as a rule: "must be lowercase letters" -> "lowercase letters". */
function asRule(message: string): string {
  if (message.startsWith('must be ')) return message.slice('must be '.length);
  if (message.startsWith('is ')) return `not ${message.slice('is '.length)}`;
  return message;
}

const checksOf = (def: Def) => (def.checks ?? []).map((c) => c._zod.def);

/** What a schema accepts, in words, from its structure and its own validation messages. */
export function acceptsOf(schema: unknown): string {
  const def = defOf(schema);
  switch (def.type) {
    case 'default':
    case 'optional':
      return acceptsOf(def.innerType);
    case 'enum': {
      const values = Object.values(def.entries ?? {}).map(String);
      if (values.length === FLAG_WORDS.length && FLAG_WORDS.every((w) => values.includes(w)))
        return 'true or false (also yes/no, on/off, 1/0)';
      return `one of ${values.map(code).join(', ')}`;
    }
    case 'number': {
      const checks = checksOf(def);
      const whole = checks.some((c) => c.check === 'number_format' && /int/.test(c.format ?? ''));
      const min = checks.find((c) => c.check === 'greater_than')?.value;
      const max = checks.find((c) => c.check === 'less_than')?.value;
      const range = min !== undefined && max !== undefined ? `, ${min} to ${max}` : '';
      return `${whole ? 'whole number' : 'number'}${range}`;
    }
    case 'string': {
      const parts: string[] = [];
      if (def.format === 'url') parts.push(def.protocol?.source === '^https?$' ? 'http(s) URL' : 'URL');
      if (def.format === 'email') parts.push('an email address');
      for (const check of checksOf(def)) {
        if (check.check === 'min_length' && (check.minimum ?? 0) > 1)
          parts.push(`at least ${check.minimum} characters`);
        if (check.check === 'max_length') parts.push(`at most ${check.maximum} characters`);
        if ((check.check === 'string_format' && check.format === 'regex') || check.check === 'custom') {
          const message = messageOf(check.error);
          if (message) parts.push(asRule(message));
        }
      }
      return parts.length ? parts.join('; ') : 'text';
    }
    case 'pipe': {
      // A refinement of the whole pipe says what it accepts better than its parts do.
      const message = checksOf(def)
        .map((c) => messageOf(c.error))
        .find(Boolean);
      if (message) return asRule(message);
      const out = defOf(def.out);
      if (out.type === 'array') {
        const element = acceptsOf(out.element);
        return element.startsWith('one of ')
          ? `comma-separated, each ${element}`
          : `comma-separated ${element.replace(/URL$/, 'URLs')}`;
      }
      // A transform reads what the pipe's input accepted.
      return out.type === 'transform' ? acceptsOf(def.in) : acceptsOf(def.out);
    }
    default:
      return 'text';
  }
}

/** The schema's default as the environment would spell it; undefined when it has none. */
export function defaultOf(schema: unknown): string | undefined {
  const def = defOf(schema);
  if (def.type === 'optional') return defaultOf(def.innerType);
  if (def.type !== 'default') return undefined;
  const value = def.defaultValue;
  if (Array.isArray(value)) return value.length ? code(value.join(',')) : 'none';
  if (typeof value === 'string') {
    // Paths in the checkout, not on the machine that ran the generator.
    const inRepo = value.startsWith(REPO_ROOT + path.sep);
    return code(inRepo ? path.relative(REPO_ROOT, value) : value);
  }
  return code(String(value));
}

// ---- Writing the page --------------------------------------------------------------------------

const cell = (text: string) => text.replaceAll('|', '\\|');

/** Every variable of the schema, checked against its description. */
export function configVariables() {
  const names = Object.keys(EnvSchema.shape) as Array<keyof typeof CONFIG_DOCS>;
  const documented = Object.keys(CONFIG_DOCS);
  const problems = [
    ...names.filter((n) => !documented.includes(n)).map((n) => `${n} has no entry in config.docs.ts`),
    ...documented.filter((n) => !(names as string[]).includes(n)).map((n) => `${n} is described but not in EnvSchema`),
  ];
  const variables = names
    .filter((name) => CONFIG_DOCS[name])
    .map((name) => {
      const doc: VariableDoc = CONFIG_DOCS[name];
      const schema = EnvSchema.shape[name];
      const schemaDefault = defaultOf(schema);
      const derived = acceptsOf(schema);
      if (schemaDefault !== undefined && doc.unset)
        problems.push(`${name}: the schema's default applies when it is unset; drop \`unset\` from config.docs.ts`);
      if (doc.accepts && derived !== 'text')
        problems.push(`${name}: the schema already says what it accepts (${derived}); drop \`accepts\``);
      if (doc.summary.length > SUMMARY_MAX)
        problems.push(`${name}: summary over ${SUMMARY_MAX} characters; move the rest to \`details\``);
      return {
        name,
        doc,
        default: schemaDefault ?? doc.unset ?? 'unset',
        accepts: doc.accepts ?? derived,
      };
    });
  if (problems.length) throw new Error(`config.docs.ts and EnvSchema disagree:\n  - ${problems.join('\n  - ')}`);
  return variables;
}

const slug = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/** docs/configuration.md as the schema and its descriptions give it now. */
export function renderConfigurationDocs(): string {
  const variables = configVariables();
  const out: string[] = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` from apps/server/src/config.ts (names, defaults, accepted values)',
    'and apps/server/src/config.docs.ts (what each is for). Edit those and run it again, not this file. -->',
    '',
    'Everything is set through environment variables. Invalid values stop the server at start with a',
    'message that names the variable. An empty value means unset, as in docker-compose files and',
    '`.env` templates. With Docker Compose, `.env` (from `.env.example`) sets them for every service; see',
    '[Operations](operations.md).',
    '',
    ...CONFIG_GROUPS.map((g) => {
      const names = variables.filter((v) => v.doc.group === g.id).map((v) => code(v.name));
      return `- [${g.title}](#${slug(g.title)}): ${names.join(', ')}`;
    }),
    '',
  ];
  for (const group of CONFIG_GROUPS) {
    const members = variables.filter((v) => v.doc.group === group.id);
    if (!members.length) continue;
    out.push(`## ${group.title}`, '', group.intro, '');
    out.push('| Variable | Default | Accepts | What it does |', '| --- | --- | --- | --- |');
    for (const v of members)
      out.push(`| ${code(v.name)} | ${cell(v.default)} | ${cell(v.accepts)} | ${cell(v.doc.summary)} |`);
    const notes = members.filter((v) => v.doc.details);
    if (notes.length) {
      out.push('');
      for (const v of notes) out.push(`- **${code(v.name)}**: ${v.doc.details}`);
    }
    out.push('');
  }
  out.push(
    '## Variables the server does not read',
    '',
    '- Docker Compose only (`.env`): `DAYBOOK_DOMAIN`, `POSTGRES_PASSWORD`, `COMPOSE_PROFILES`, `APP_REPLICAS`,',
    '  `SEARXNG_SECRET`; see [Operations](operations.md#one-machine-with-docker-compose).',
    "- Tests: `TEST_DATABASE_URL`, `REQUIRE_POSTGRES`, `CHROMIUM_PATH` and the suite's own settings; see",
    '  [Development](development.md#test-only-variables).',
    '- Benchmarks: `BENCH_*`; see [Benchmarks](benchmarks.md).',
    '',
  );
  return out.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderConfigurationDocs();
  const relative = path.relative(process.cwd(), CONFIGURATION_DOC);
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(CONFIGURATION_DOC, 'utf8');
    } catch {}
    if (current !== text) {
      console.error(`${relative} is out of date: run \`npm run docs:config\``);
      process.exitCode = 1;
    }
  } else {
    writeFileSync(CONFIGURATION_DOC, text);
    console.log(`wrote ${relative}`);
  }
}
