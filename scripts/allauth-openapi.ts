// Daybook's allauth document (apps/server/src/modules/docs/allauth-openapi.yaml, served at
// /api/docs/allauth-openapi.yaml): django-allauth's own OpenAPI document, cut to what the account API
// at /_allauth/browser/v1 serves. Operations and components are upstream's as they are; what changes is
// the description (upstream's is a separate description.md, which left the copy unresolvable), the
// paths (browser only), the calls Daybook adds, and a list of the upstream operations it does not serve.
//   npx tsx scripts/allauth-openapi.ts            writes the document
//   npx tsx scripts/allauth-openapi.ts --check    exits 1 when the published document is not what it writes
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Document, isMap, isScalar, isSeq, type Pair, parseDocument, Scalar, type YAMLMap } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Upstream's document as published (django-allauth 65.16.1), the one the tests check responses against. */
export const UPSTREAM_FILE = path.join(ROOT, 'tests/fixtures/allauth-openapi.yaml');
export const PUBLISHED_FILE = path.join(ROOT, 'apps/server/src/modules/docs/allauth-openapi.yaml');
export const BASE = '/_allauth/browser/v1';
const UPSTREAM_PATH = /^\/_allauth\/(?:\{client\}|browser)\/v1(\/.*)$/;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The upstream operations Daybook serves (allauth.routes.ts), by path under BASE. */
export const SERVED: Record<string, Method[]> = {
  '/config': ['get'],
  '/auth/login': ['post'],
  '/auth/signup': ['post'],
  '/auth/email/verify': ['get', 'post'],
  '/auth/email/verify/resend': ['post'],
  '/auth/reauthenticate': ['post'],
  '/auth/password/request': ['post'],
  '/auth/password/reset': ['get', 'post'],
  '/auth/provider/redirect': ['post'],
  '/account/providers': ['get', 'delete'],
  '/account/email': ['get', 'post', 'put', 'patch', 'delete'],
  '/auth/session': ['get', 'delete'],
  '/account/password/change': ['post'],
};

/** Where Daybook's answer to an upstream operation narrows it, said on the operation. */
const NOTES: Record<string, string> = {
  'get /config': `Daybook signs in by email and password, with mandatory email verification by link;
\`socialaccount.providers\` lists the calendar providers this installation has enabled.
`,
  'post /auth/email/verify/resend': `Daybook verifies email addresses by link, never by code: there is no code to resend,
so this always answers 409.
`,
  'post /auth/provider/redirect': `Daybook connects calendars through providers, and no one signs in with one: only
\`process=connect\`, by a signed-in user, is served. \`process=login\` redirects back to
\`callback_url\` with \`error=unknown\` and \`error_process=login\`.
`,
};

/** Calls Daybook adds beside allauth's (the product spec's), inserted after the path they follow. */
const EXTENSIONS: { after: string; path: string; item: string }[] = [
  {
    after: '/account/providers',
    path: '/account/providers/disconnect',
    item: `
post:
  tags:
    - "Account: Providers"
  summary: Disconnect a third-party provider account, by the account alone
  x-daybook-extension: true
  description: |
    Daybook's addition: \`DELETE /account/providers\` as a POST, in which \`provider\` may be left out
    (when given, it must be the account's). Disconnects one of the user's calendar connections and
    returns the accounts still connected.
  requestBody:
    required: true
    content:
      application/json:
        schema:
          type: object
          properties:
            account:
              $ref: "#/components/schemas/ProviderAccountID"
            provider:
              $ref: "#/components/schemas/ProviderID"
          required:
            - account
  responses:
    "200":
      $ref: "#/components/responses/ProviderAccounts"
    "400":
      description: |
        An input error occurred: \`required\` (no \`account\`), or \`account_not_found\` when the user
        has no such connected account.
      content:
        application/json:
          schema:
            $ref: "#/components/schemas/ErrorResponse"
    "401":
      $ref: "#/components/responses/Authentication"
`,
  },
  {
    after: '/account/providers/disconnect',
    path: '/socialaccount/providers/connect',
    item: `
post:
  tags:
    - "Account: Providers"
  summary: Start connecting a third-party provider account
  x-daybook-extension: true
  description: |
    Daybook's addition, the JSON counterpart of the \`POST /auth/provider/redirect\` form with
    \`process=connect\`: answers the address of the provider's consent page, for the client to open.
    After the consent the provider returns to Daybook, which then redirects to \`callback_url\`
    (with \`?error=\` when connecting failed).
  requestBody:
    required: true
    content:
      application/json:
        schema:
          type: object
          properties:
            provider:
              $ref: "#/components/schemas/ProviderID"
            callback_url:
              type: string
              description: |
                Where to send the user once the provider is done: a path on this site, or a full URL
                of it. Anything else, or none, means the connections page (\`/accounts/3rdparty/\`).
              example: /accounts/3rdparty/
          required:
            - provider
  responses:
    "200":
      description: The provider's consent address.
      content:
        application/json:
          schema:
            type: object
            properties:
              status:
                $ref: "#/components/schemas/StatusOK"
              data:
                type: object
                properties:
                  url:
                    type: string
                    description: The provider's authorization URL, to open in the browser.
                required:
                  - url
            required:
              - status
              - data
    "400":
      description: |
        An input error occurred: \`required\` (no \`provider\`), \`unknown_provider\` (not one this
        installation has enabled), or \`too_many\` (the user has as many connections as allowed).
      content:
        application/json:
          schema:
            $ref: "#/components/schemas/ErrorResponse"
    "401":
      $ref: "#/components/responses/Authentication"
`,
  },
];

const DESCRIPTION = `# Daybook's account API

Daybook's web app signs people in, up and out, resets and changes passwords, manages email
addresses and connects calendars through the API at \`${BASE}\`. That API is compatible
with [django-allauth](https://allauth.org)'s headless API: the same paths, response envelope (\`status\`,
\`data\`, \`meta\`, \`errors\`), status codes and error codes, so an allauth client can use it.

This document is django-allauth's own OpenAPI document, cut to what Daybook serves. The upstream
document is \`allauth/headless/spec/doc/openapi.yaml\` in
[pennersr/django-allauth](https://github.com/pennersr/django-allauth) (version 65.16.1, MIT), and its
introduction is upstream's \`description.md\`. The operations and schemas kept here are upstream's,
unchanged. Where Daybook narrows an operation, the operation says so in \`x-daybook-note\`. Daybook's
product API (\`/api/...\`) has its own document at \`/api/openapi.json\`.

## Browser client only

Only the \`browser\` client is served. Paths are written \`${BASE}/...\` where upstream
writes \`/_allauth/{client}/v1/...\`; \`/_allauth/app/v1\` does not exist. The session is a cookie, and every
POST, PUT, PATCH and DELETE carries the CSRF token in an \`X-CSRFToken\` header: the value of the
\`csrftoken\` cookie, which \`GET ${BASE}/config\` sets. No session tokens
(\`X-Session-Token\`, \`meta.session_token\`), no access tokens, and no 410 responses: those are
for app clients.

## Served

- Configuration: \`GET /config\`.
- The current session: \`GET\` and \`DELETE /auth/session\`.
- Email and password: login, signup, email verification (by link), password reset (by link),
  reauthentication, and password change.
- Email addresses: \`/account/email\`.
- Third-party accounts, which in Daybook are calendar connections: \`GET\` and
  \`DELETE /account/providers\`, and \`POST /auth/provider/redirect\` with \`process=connect\`.
  Signing in or up with a provider is not part of Daybook.
- Two calls Daybook adds beside allauth's, marked \`x-daybook-extension\`:
  \`POST /account/providers/disconnect\` and \`POST /socialaccount/providers/connect\`.

## Not served

These parts of the upstream API are left out; Daybook answers their paths with 404 (405 for
\`/auth/provider/token\` and \`/auth/provider/signup\`). \`x-daybook-unsupported\` lists each operation.

- Phone numbers: \`/auth/phone/verify\`, \`/auth/phone/verify/resend\`, \`/account/phone\`.
- Signing in or up with a provider: \`/auth/provider/token\`, \`/auth/provider/signup\`.
- Two-factor authentication (MFA): \`/auth/2fa/...\`, \`/account/authenticators/...\`.
- Passkeys (WebAuthn): \`/auth/webauthn/...\`, \`/account/authenticators/webauthn\`.
- Login by code: \`/auth/code/...\`.
- Listing and ending other sessions: \`/auth/sessions\`.
- App clients and their tokens: \`/_allauth/app/v1/...\`, including \`/tokens/refresh\`.

The components those operations use are kept as upstream has them, though nothing here refers
to them.
`;

const HEADER =
  ' Generated by scripts/allauth-openapi.ts from tests/fixtures/allauth-openapi.yaml (django-allauth 65.16.1).\n' +
  ' Change the script and run `npx tsx scripts/allauth-openapi.ts`, not this file.';

const CLIENT_PARAMETERS = new Set(['#/components/parameters/Client', '#/components/parameters/SessionToken']);
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function map(node: unknown, where: string): YAMLMap {
  if (!isMap(node)) throw new Error(`${where} is not a mapping`);
  return node;
}

const keyOf = (pair: Pair) => String(isScalar(pair.key) ? pair.key.value : pair.key);

/** The document as Daybook publishes it, from upstream's text. */
export function buildAllauthDocument(upstream = readFileSync(UPSTREAM_FILE, 'utf8')): string {
  const doc: Document = parseDocument(upstream);
  const info = map(doc.get('info'), 'info');
  info.set('title', 'Daybook account API (django-allauth headless, browser client)');
  info.set('description', Object.assign(new Scalar(DESCRIPTION), { type: Scalar.BLOCK_LITERAL }));
  // Questions about Daybook's API are not allauth's to answer.
  info.delete('contact');

  const paths = map(doc.get('paths'), 'paths');
  const unsupported = new Map<string, string[]>();
  const usedTags = new Set<string>();
  const kept: Pair[] = [];
  for (const pair of paths.items) {
    const upstreamPath = keyOf(pair);
    const rel = UPSTREAM_PATH.exec(upstreamPath)?.[1];
    const served = rel ? (SERVED[rel] ?? []) : [];
    const item = map(pair.value, upstreamPath);
    item.items = item.items.filter((op) => {
      const method = keyOf(op);
      if (!METHODS.has(method)) return true;
      const operation = map(op.value, `${method} ${upstreamPath}`);
      const tags = (operation.toJSON() as { tags?: string[] }).tags ?? [];
      if (!served.includes(method as Method)) {
        const group = tags[0] ?? 'Other';
        unsupported.set(group, [...(unsupported.get(group) ?? []), `${method.toUpperCase()} ${upstreamPath}`]);
        return false;
      }
      for (const tag of tags) usedTags.add(tag);
      const parameters = operation.get('parameters');
      if (isSeq(parameters)) {
        parameters.items = parameters.items.filter((p) => !(isMap(p) && CLIENT_PARAMETERS.has(String(p.get('$ref')))));
        if (!parameters.items.length) operation.delete('parameters');
      }
      const note = NOTES[`${method} ${rel}`];
      if (note) operation.set('x-daybook-note', Object.assign(new Scalar(note), { type: Scalar.BLOCK_LITERAL }));
      return true;
    });
    if (!item.items.some((op) => METHODS.has(keyOf(op)))) continue;
    (pair.key as Scalar).value = `${BASE}${rel}`;
    kept.push(pair);
  }
  for (const ext of EXTENSIONS) {
    const at = kept.findIndex((p) => keyOf(p) === `${BASE}${ext.after}`);
    if (at < 0) throw new Error(`no path ${ext.after} to put ${ext.path} after`);
    const item = parseDocument(ext.item).contents;
    kept.splice(at + 1, 0, doc.createPair(`${BASE}${ext.path}`, item));
  }
  paths.items = kept;
  for (const rel of Object.keys(SERVED))
    if (!kept.some((p) => keyOf(p) === `${BASE}${rel}`)) throw new Error(`upstream has no ${rel} to serve`);

  // Only the tags the kept operations use.
  const tags = doc.get('tags');
  if (isSeq(tags)) tags.items = tags.items.filter((t) => isMap(t) && usedTags.has(String(t.get('name'))));
  const groups = doc.get('x-tagGroups');
  if (isSeq(groups)) {
    groups.items = groups.items.filter((group) => {
      const list = isMap(group) ? group.get('tags') : undefined;
      if (!isSeq(list)) return false;
      list.items = list.items.filter((t) => usedTags.has(String(isScalar(t) ? t.value : t)));
      return list.items.length > 0;
    });
  }

  const root = map(doc.contents, 'the document');
  const unsupportedNode = doc.createNode(Object.fromEntries(unsupported));
  unsupportedNode.commentBefore =
    ' Upstream operations Daybook does not serve, by their upstream tag and path (see info.description).';
  const at = root.items.findIndex((p) => keyOf(p) === 'paths');
  root.items.splice(at, 0, doc.createPair('x-daybook-unsupported', unsupportedNode));
  doc.commentBefore = HEADER;
  return formatted(doc.toString({ lineWidth: 0 }));
}

/** As `npm run lint` wants the file: Biome lays out upstream's flow-style examples over several lines, as upstream has them. */
function formatted(yaml: string): string {
  return execFileSync(path.join(ROOT, 'node_modules/.bin/biome'), ['format', `--stdin-file-path=${PUBLISHED_FILE}`], {
    cwd: ROOT,
    input: yaml,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'ignore'],
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = buildAllauthDocument();
  if (process.argv.includes('--check')) {
    if (readFileSync(PUBLISHED_FILE, 'utf8') !== built) {
      console.error(`${path.relative(ROOT, PUBLISHED_FILE)} is not what scripts/allauth-openapi.ts writes`);
      process.exitCode = 1;
    }
  } else {
    writeFileSync(PUBLISHED_FILE, built);
    console.log(`wrote ${path.relative(ROOT, PUBLISHED_FILE)}`);
  }
}
