// What the reference page shows, read from the OpenAPI document itself (made from the routes), so the
// page and the document cannot say different things.
import { escapeHtml } from '../../lib/html.ts';

type Json = Record<string, unknown>;

export interface FieldRow {
  name: string;
  /** Nesting level, for indentation. */
  depth: number;
  type: string;
  required: boolean;
  /** Already-escaped HTML. */
  notesHtml: string;
}

export interface SchemaView {
  /** The component's name, e.g. Memory. */
  name: string;
  /** How the whole body reads, e.g. "Memory" or "Array of ResourceItem". */
  label: string;
  fields: FieldRow[];
  /** Example JSON, when it is short enough to help. */
  example: string | null;
}

export interface ParamView {
  name: string;
  in: string;
  type: string;
  required: boolean;
  notesHtml: string;
}

export interface ResponseView {
  status: string;
  descriptionHtml: string;
  contentType: string | null;
  schema: SchemaView | null;
  headers: { name: string; example: string }[];
}

export interface ErrorView {
  status: string;
  codes: string[];
  reasonHtml: string;
}

export interface OperationView {
  id: string;
  method: string;
  path: string;
  summary: string;
  descriptionHtml: string;
  auth: string;
  csrf: boolean;
  params: ParamView[];
  body: { required: boolean; descriptionHtml: string; schema: SchemaView } | null;
  responses: ResponseView[];
  errors: ErrorView[];
}

export interface TagView {
  id: string;
  name: string;
  descriptionHtml: string;
  operations: OperationView[];
}

export interface PageView {
  title: string;
  version: string;
  summary: string;
  tags: TagView[];
  errorShape: SchemaView;
  errorCodes: { code: string; status: number }[];
  websocket: {
    paths: string[];
    descriptionHtml: string;
    closeCodes: { code: number; meaning: string }[];
    client: SchemaView;
    events: SchemaView[];
  };
  security: { name: string; kind: string; descriptionHtml: string }[];
}

const AUTH_LABELS: Record<string, string> = {
  public: 'Public',
  user: 'Signed-in user',
  admin: 'Administrator',
};

/** Escapes text, then shows `code` spans as code. */
export function inlineHtml(text: string | undefined): string {
  return escapeHtml(text ?? '').replace(/`([^`]+)`/g, '<code>$1</code>');
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Reading the document's JSON Schemas: $refs resolved, null options apart, types and constraints in words. */
function createSchemaTypes(schemas: Record<string, Json>) {
  const refName = (ref: string) => ref.replace('#/components/schemas/', '');
  const resolve = (schema: Json | undefined): Json => {
    let current = schema ?? {};
    for (let i = 0; i < 10 && typeof current.$ref === 'string'; i++) {
      const { $ref, ...rest } = current;
      current = { ...(schemas[refName($ref as string)] ?? {}), ...rest };
    }
    return current;
  };

  /** The schema without its null option, and whether it had one. */
  const nonNull = (schema: Json): { schema: Json; nullable: boolean } => {
    if (Array.isArray(schema.anyOf)) {
      const options = schema.anyOf as Json[];
      const rest = options.filter((o) => o.type !== 'null');
      if (rest.length === 1 && rest.length < options.length) {
        const { anyOf: _, ...siblings } = schema;
        return { schema: { ...(rest[0] as Json), ...siblings }, nullable: true };
      }
    }
    if (Array.isArray(schema.type) && schema.type.includes('null')) {
      const types = (schema.type as string[]).filter((t) => t !== 'null');
      return { schema: { ...schema, type: types.length === 1 ? types[0] : types }, nullable: true };
    }
    return { schema, nullable: false };
  };

  function typeLabel(raw: Json, depth = 0): string {
    const { schema, nullable } = nonNull(raw);
    let label: string;
    const resolved = resolve(schema);
    if (resolved.const !== undefined) label = JSON.stringify(resolved.const);
    else if (Array.isArray(resolved.enum))
      label = (resolved.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
    else if (typeof schema.$ref === 'string' && resolved.type === 'object') label = refName(schema.$ref);
    else if (resolved.type === 'array')
      label = depth > 2 ? 'array' : `array of ${typeLabel((resolved.items ?? {}) as Json, depth + 1)}`;
    else if (
      resolved.type === 'object' &&
      resolved.additionalProperties &&
      typeof resolved.additionalProperties === 'object'
    )
      label = `object of ${typeLabel(resolved.additionalProperties as Json, depth + 1)}`;
    else if (Array.isArray(resolved.anyOf))
      label = (resolved.anyOf as Json[]).map((option) => typeLabel(option, depth + 1)).join(' or ');
    else if (typeof resolved.type === 'string')
      label = resolved.format ? `${resolved.type} (${resolved.format})` : resolved.type;
    else if (Array.isArray(resolved.type)) label = (resolved.type as string[]).join(' or ');
    else label = 'any';
    return nullable ? `${label} or null` : label;
  }

  function constraints(raw: Json): string[] {
    const schema = resolve(nonNull(raw).schema);
    const out: string[] = [];
    const { minLength, maxLength, minimum, maximum, exclusiveMinimum, maxItems } = schema as Record<string, number>;
    const n = (v: number) => v.toLocaleString('en');
    if (minLength !== undefined && maxLength !== undefined) out.push(`${n(minLength)}–${n(maxLength)} characters`);
    else if (maxLength !== undefined) out.push(`at most ${n(maxLength)} characters`);
    else if (minLength !== undefined && minLength > 0)
      out.push(`at least ${minLength} character${minLength === 1 ? '' : 's'}`);
    const low = minimum ?? (exclusiveMinimum !== undefined ? exclusiveMinimum + 1 : undefined);
    if (low !== undefined && maximum !== undefined) out.push(`${low}–${maximum.toLocaleString('en')}`);
    else if (low !== undefined) out.push(`${low} or more`);
    else if (maximum !== undefined) out.push(`at most ${maximum.toLocaleString('en')}`);
    if (maxItems !== undefined) out.push(`at most ${maxItems.toLocaleString('en')} items`);
    if (typeof schema.pattern === 'string' && !schema.format)
      out.push(`matches <code>${escapeHtml(schema.pattern)}</code>`);
    const fallback = raw.default ?? schema.default;
    if (fallback !== undefined) out.push(`default <code>${escapeHtml(JSON.stringify(fallback))}</code>`);
    return out;
  }

  return { refName, resolve, nonNull, typeLabel, constraints };
}

type SchemaTypes = ReturnType<typeof createSchemaTypes>;

const DATE_TIME = /(_at|^created|^timestamp|^sort_date|^finished|^delivered|^last_synced|^date_joined)$/;
const HINTS: Record<string, unknown> = {
  email: 'ada@example.com',
  url: 'https://example.com/',
  signup_url: 'https://example.com/auth/signup?itoken=…',
  time_zone: 'Europe/Berlin',
  tz: 'Europe/Berlin',
  date: '2026-05-04',
  delivery_date: '2026-05-04',
  daily_message_time: '07:00',
  password1: 'a long passphrase',
  password2: 'a long passphrase',
  inviteToken: 'the token from the invite link',
  key: 'favourite_cuisine',
  data: 'Sichuan, the spicier the better.',
  name: 'Lisbon',
  country_code: 'PT',
  query: 'heat pumps in old houses',
  raw_text: 'Hello!',
};

/** An example value of a schema: its const, default or first option, a hint by field name, or a plain one. */
function createExamples({ resolve, nonNull }: SchemaTypes) {
  function example(raw: Json, key = '', depth = 0): unknown {
    const { schema: inner } = nonNull(raw);
    const schema = resolve(inner);
    if (schema.const !== undefined) return schema.const;
    if (raw.default !== undefined) return raw.default;
    if (schema.default !== undefined) return schema.default;
    if (Array.isArray(schema.enum)) return schema.enum[0];
    if (key in HINTS && (schema.type === 'string' || schema.type === undefined)) return HINTS[key];
    if (Array.isArray(schema.anyOf)) return example((schema.anyOf as Json[])[0] as Json, key, depth);
    switch (schema.type) {
      case 'object': {
        if (depth > 4) return {};
        const out: Json = {};
        for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>))
          out[name] = example(property, name, depth + 1);
        return out;
      }
      case 'array':
        return depth > 4 ? [] : [example((schema.items ?? {}) as Json, key, depth + 1)];
      case 'integer':
        return typeof schema.minimum === 'number' ? Math.max(1, schema.minimum) : 1;
      case 'number':
        return key === 'latitude' ? 38.72 : key === 'longitude' ? -9.14 : 1;
      case 'boolean':
        return true;
      case 'string':
        if (schema.format === 'date-time' || DATE_TIME.test(key)) return '2026-05-04T07:00:00Z';
        if (schema.format === 'email') return 'ada@example.com';
        if (schema.format === 'uri') return 'https://example.com/';
        return 'string';
      default:
        return null;
    }
  }

  return example;
}

/** A body's fields as rows, nested ones under their parent, and its example when short. */
function createSchemaViews(types: SchemaTypes) {
  const { refName, resolve, nonNull, typeLabel, constraints } = types;
  const example = createExamples(types);
  const notesOf = (raw: Json) => {
    const description = typeof raw.description === 'string' ? inlineHtml(raw.description) : '';
    const extra = constraints(raw);
    return [description, extra.length ? `<span class="constraints">${extra.join(' · ')}</span>` : '']
      .filter(Boolean)
      .join(' ');
  };

  function fieldRows(raw: Json, prefix = '', depth = 0, out: FieldRow[] = []): FieldRow[] {
    const schema = resolve(nonNull(raw).schema);
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [key, property] of Object.entries(properties)) {
      const name = `${prefix}${key}`;
      out.push({ name, depth, type: typeLabel(property), required: required.has(key), notesHtml: notesOf(property) });
      if (depth >= 3) continue;
      const inner = resolve(nonNull(property).schema);
      if (inner.type === 'object' && inner.properties) fieldRows(inner, `${name}.`, depth + 1, out);
      else if (inner.type === 'array') {
        const items = resolve(nonNull((inner.items ?? {}) as Json).schema);
        if (items.type === 'object' && items.properties) fieldRows(items, `${name}[].`, depth + 1, out);
      }
    }
    return out;
  }

  const EXAMPLE_MAX_LINES = 32;
  function schemaView(raw: Json): SchemaView {
    const name = typeof raw.$ref === 'string' ? refName(raw.$ref) : 'body';
    const schema = resolve(raw);
    let label = name;
    let fields: FieldRow[];
    if (schema.type === 'array') {
      const items = (schema.items ?? {}) as Json;
      label = `Array of ${typeof items.$ref === 'string' ? refName(items.$ref) : typeLabel(items)}`;
      fields = fieldRows(items);
    } else fields = fieldRows(schema);
    const json = JSON.stringify(example(raw), null, 2);
    return { name, label, fields, example: json.split('\n').length <= EXAMPLE_MAX_LINES ? json : null };
  }

  return schemaView;
}

/** One operation of the document as the page shows it: parameters, body, answers and errors apart. */
function operationView(
  path: string,
  method: string,
  op: Json,
  { typeLabel, constraints }: SchemaTypes,
  schemaView: (raw: Json) => SchemaView,
): OperationView & { tag: string } {
  const params = ((op.parameters ?? []) as Json[]).map((p) => ({
    name: String(p.name),
    in: String(p.in),
    type: typeLabel((p.schema ?? {}) as Json),
    required: Boolean(p.required),
    notesHtml: [p.description ? inlineHtml(String(p.description)) : '', ...constraints((p.schema ?? {}) as Json)]
      .filter(Boolean)
      .join(' · '),
  }));
  const requestBody = op.requestBody as Json | undefined;
  const bodySchema = (requestBody?.content as Record<string, Json> | undefined)?.['application/json']?.schema as
    | Json
    | undefined;
  const responses: ResponseView[] = [];
  const errors: ErrorView[] = [];
  for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
    const content = (response.content ?? {}) as Record<string, Json>;
    const [contentType, media] = Object.entries(content)[0] ?? [null, undefined];
    const schema = media?.schema as Json | undefined;
    if (Number(status) >= 400) {
      // The codes are listed beside the reason on the page, so the description's own list goes.
      const reason = String(response.description ?? '').replace(/\s*Codes: .*$/, '');
      errors.push({ status, codes: (response['x-codes'] ?? []) as string[], reasonHtml: inlineHtml(reason) });
      continue;
    }
    responses.push({
      status,
      descriptionHtml: inlineHtml(String(response.description ?? '')),
      contentType,
      schema: schema ? schemaView(schema) : null,
      headers: Object.entries((response.headers ?? {}) as Record<string, Json>).map(([name, header]) => ({
        name,
        example: String(header.example ?? ''),
      })),
    });
  }
  const security = (op.security ?? []) as Json[];
  return {
    tag: String((op.tags as string[] | undefined)?.[0] ?? 'Other'),
    id: String(op.operationId),
    method: method.toUpperCase(),
    path,
    summary: String(op.summary ?? ''),
    descriptionHtml: inlineHtml(op.description as string | undefined),
    auth: AUTH_LABELS[String(op['x-daybook-auth'])] ?? 'Public',
    csrf: security.some((s) => 'csrfToken' in s),
    params,
    body: bodySchema
      ? {
          required: Boolean(requestBody?.required),
          descriptionHtml: inlineHtml(requestBody?.description as string | undefined),
          schema: schemaView(bodySchema),
        }
      : null,
    responses,
    errors,
  };
}

export function buildPageView(doc: Json): PageView {
  const types = createSchemaTypes(((doc.components as Json).schemas ?? {}) as Record<string, Json>);
  const schemaView = createSchemaViews(types);
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => operationView(path, method, op, types, schemaView)),
  );

  const tags = ((doc.tags ?? []) as Json[]).map((tag) => ({
    id: `tag-${slug(String(tag.name))}`,
    name: String(tag.name),
    descriptionHtml: inlineHtml(tag.description as string | undefined),
    operations: operations.filter((op) => op.tag === tag.name),
  }));

  const ws = doc['x-websocket'] as Json;
  const info = doc.info as Json;
  const securitySchemes = ((doc.components as Json).securitySchemes ?? {}) as Record<string, Json>;
  return {
    title: String(info.title),
    version: String(info.version),
    summary: String(info.summary ?? ''),
    tags,
    errorShape: schemaView({ $ref: '#/components/schemas/ApiError' }),
    errorCodes: (doc['x-error-codes'] ?? []) as { code: string; status: number }[],
    websocket: {
      paths: ws.paths as string[],
      descriptionHtml: inlineHtml(ws.description as string),
      closeCodes: ws.closeCodes as { code: number; meaning: string }[],
      client: schemaView(ws.clientMessage as Json),
      events: (ws.serverEvents as Json[]).map((event) => schemaView(event)),
    },
    security: Object.values(securitySchemes).map((scheme) => ({
      name: String(scheme.name),
      kind: scheme.in === 'cookie' ? 'Cookie' : 'Header',
      descriptionHtml: inlineHtml(scheme.description as string | undefined),
    })),
  };
}
