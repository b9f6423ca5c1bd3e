// Validates account API responses against allauth's own OpenAPI document, so an allauth client
// can rely on what our server sends.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

const doc = parse(readFileSync(path.resolve(import.meta.dirname, '../fixtures/allauth-openapi.yaml'), 'utf8')) as {
  paths: Record<string, Record<string, { responses?: Record<string, { $ref?: string; content?: unknown }> }>>;
  components: { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
};

// The document's AuthenticationMethod is a oneOf whose variants overlap ({method:'password', at,
// reauthenticated:true} matches two of them), so allauth's own responses fail it; anyOf is what it means.
const methods = (doc.components as unknown as { schemas: Record<string, { oneOf?: unknown; anyOf?: unknown }> }).schemas
  .AuthenticationMethod;
if (methods?.oneOf) {
  methods.anyOf = methods.oneOf;
  delete methods.oneOf;
}

const ajv = new Ajv({ strict: false, allErrors: true, discriminator: true });
ajv.addSchema({ ...doc, $id: 'openapi.json' });

// Statuses our server sends that allauth's implementation sends too but its document omits.
const UNDOCUMENTED_OK = new Set([403, 404, 405, 429]);

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const cache = new Map<string, ValidateFunction | null>();

function operationPath(urlPath: string): string | null {
  const rel = urlPath.replace(/^\/_allauth\/browser\/v1/, '').replace(/\/$/, '');
  for (const key of Object.keys(doc.paths)) {
    const template = key.replace('/_allauth/{client}/v1', '').replace('/_allauth/browser/v1', '');
    if (template === rel) return key;
  }
  return null;
}

// Where allauth's implementation differs from its document (endpoints.md, [spec≠impl]), the
// response is checked against the shape the implementation sends.
const IMPLEMENTATION_RESPONSES: Record<string, string> = {
  'POST /account/password/change 200': '#/components/responses/Authenticated',
};

function validatorFor(method: string, urlPath: string, status: number): ValidateFunction | null | 'undocumented' {
  const opPath = operationPath(urlPath);
  // Calls the product spec adds beside allauth's (e.g. /account/providers/disconnect) have no document.
  if (!opPath) return null;
  const op = doc.paths[opPath]?.[method.toLowerCase()];
  const rel = urlPath.replace(/^\/_allauth\/browser\/v1/, '').replace(/\/$/, '');
  // allauth answers 401 (the Authentication response) wherever a signed-in user is required,
  // though the document lists it only on some of those operations.
  const override =
    IMPLEMENTATION_RESPONSES[`${method} ${rel} ${status}`] ??
    (status === 401 ? '#/components/responses/Authentication' : undefined);
  const response = op?.responses?.[String(status)] ?? (override ? { $ref: override } : undefined);
  if (!response) return 'undocumented';
  const key = `${opPath} ${method} ${status}`;
  if (!cache.has(key)) {
    let ref: string;
    if (response.$ref) {
      const name = response.$ref.split('/').pop() ?? '';
      if (!doc.components.responses[name]?.content?.['application/json']) return null;
      ref = `openapi.json#/${pointer('components', 'responses', name, 'content', 'application/json', 'schema')}`;
    } else {
      if (!(response.content as Record<string, unknown> | undefined)?.['application/json']) return null;
      ref = `openapi.json#/${pointer('paths', opPath, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`;
    }
    cache.set(key, ajv.compile({ $ref: ref }));
  }
  return cache.get(key) ?? null;
}

export interface RecordedResponse {
  method: string;
  url: string;
  status: number;
  body: string;
}

/** Problems with each response, as readable lines; empty when all conform. */
export function checkAllauthResponses(responses: RecordedResponse[]): string[] {
  const problems: string[] = [];
  for (const r of responses) {
    const urlPath = r.url.split('?')[0] ?? '';
    const where = `${r.method} ${urlPath} → ${r.status}`;
    let body: { status?: number };
    try {
      body = JSON.parse(r.body);
    } catch {
      if (!(r.method === 'POST' && urlPath.endsWith('/auth/provider/redirect')))
        problems.push(`${where}: body is not JSON`);
      continue;
    }
    if (body.status !== r.status) problems.push(`${where}: body status ${body.status} differs from the HTTP status`);
    const validate = validatorFor(r.method, urlPath, r.status);
    if (validate === 'undocumented') {
      if (!UNDOCUMENTED_OK.has(r.status)) problems.push(`${where}: status not in allauth's OpenAPI document`);
      continue;
    }
    if (validate && !validate(body)) {
      problems.push(`${where}: ${ajv.errorsText(validate.errors)} in ${r.body.slice(0, 300)}`);
    }
  }
  return problems;
}
