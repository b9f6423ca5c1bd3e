// The product API's OpenAPI 3.1 document, made from the routes as they are declared (plugins/routes.ts):
// their method, path, auth and zod schemas, and the words of their `config.docs`. The schemas are the
// contracts the server itself validates with, converted by zod's own z.toJSONSchema: the document
// cannot describe a field the server does not have, nor miss a route.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as c from '@daybook/contracts';
import { z } from 'zod';
import { ERROR_STATUS } from '../../lib/errors.ts';
import { CSRF_COOKIE } from '../../plugins/csrf.ts';
import type { DeclaredRoute } from '../../plugins/routes.ts';
import { SESSION_COOKIE } from '../accounts/index.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** Who may call: anyone, a signed-in user, or a signed-in administrator. */
export type Auth = 'public' | 'user' | 'admin';
type Io = 'input' | 'output';

export interface ApiResponse {
  description: string;
  /** A named component (see COMPONENTS); absent for an empty body. */
  schema?: z.ZodType;
  /** Which side of the schema's transforms the body is (default: output). */
  io?: Io;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface ApiOperation {
  method: Method;
  /** OpenAPI form: /api/memories/{id}/ */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** Path parameters: name and what it names (all are row ids). */
  pathParams?: Record<string, string>;
  /** A z.object of the query string (read as its input). */
  query?: z.ZodObject;
  /** Notes on query parameters the schema cannot say (constraints checked by refinements). */
  queryNotes?: Record<string, string>;
  body?: { schema: z.ZodType; required: boolean; description?: string };
  /** Successful answers by status. */
  responses: Record<number, ApiResponse>;
  /** Error statuses this operation answers besides the ones its auth, body and params imply. */
  errors?: Record<number, string>;
}

/** Every schema the document names, so each appears once under components/schemas. */
export const COMPONENTS = {
  ApiError: c.ZApiError,
  SiteInfo: c.ZSiteInfo,
  ProfileLink: c.ZProfileLink,
  SignupRequest: c.ZSignupRequest,
  SignupResponse: c.ZSignupResponse,
  EmailRequest: c.ZPasswordResetRequest,
  PasswordResetResponse: c.ZPasswordResetResponse,
  ResendVerificationResponse: c.ZResendVerificationResponse,
  InviteLookupResponse: c.ZInviteLookupResponse,
  UserMe: c.ZUserMe,
  UserLocation: c.ZUserLocation,
  UpdateUserMeRequest: c.ZUpdateUserMeRequest,
  AccountExport: c.ZAccountExport,
  DeleteAccountRequest: c.ZDeleteAccountRequest,
  DeleteAccountResponse: c.ZDeleteAccountResponse,
  SkipOnboardingResponse: c.ZSkipOnboardingResponse,
  DailyTime: c.ZDailyTime,
  TemperatureUnit: c.ZTemperatureUnit,
  Invite: c.ZInvite,
  InviteStatus: c.ZInviteStatus,
  InviteList: c.ZInviteList,
  CreateInviteRequest: c.ZCreateInviteRequest,
  CreateInviteResponse: c.ZCreateInviteResponse,
  SendInviteRequest: c.ZSendInviteRequest,
  SendInviteResponse: c.ZSendInviteResponse,
  ModelCheck: c.ZModelCheck,
  ModelCheckItem: c.ZModelCheckItem,
  ModelUsage: c.ZModelUsage,
  AdminUser: c.ZAdminUser,
  AdminUserPage: c.ZAdminUserPage,
  UpdateAdminUserRequest: c.ZUpdateAdminUserRequest,
  MemoryType: c.ZMemoryType,
  MemorySource: c.ZMemorySource,
  Memory: c.ZMemory,
  MemoryPage: c.ZMemoryPage,
  MemoryCategory: c.ZMemoryCategory,
  MemoryCategoryList: c.ZMemoryCategories,
  MemoryInput: c.ZMemoryInput,
  MemoryPatch: c.ZMemoryPatch,
  MemoryDelete: c.ZMemoryDelete,
  MemoryExportItem: c.ZMemoryExportItem,
  MemoryExport: c.ZMemoryExport,
  MemoryImport: c.ZMemoryImport,
  MemoryImportResult: c.ZMemoryImportResult,
  AuthorType: c.ZAuthorType,
  MessageType: c.ZMessageType,
  ChatMessage: c.ZChatMessage,
  ChatHistoryPage: c.ZChatHistoryPage,
  ChatSearchPage: c.ZChatSearchPage,
  ChatSearchResult: c.ZChatSearchResult,
  HistoryEvent: c.ZHistoryEvent,
  StreamEvent: c.ZStreamEvent,
  ErrorEvent: c.ZErrorEvent,
  QueuedEvent: c.ZQueuedEvent,
  ServerEvent: c.ZServerEvent,
  ClientMessage: c.ZClientMessage,
  StopRequest: c.ZStopRequest,
  RegenerateRequest: c.ZRegenerateRequest,
  ResearchReport: c.ZResearchReport,
  ResearchStatus: c.ZResearchStatus,
  ResearchSource: c.ZResearchSource,
  ResearchCounts: c.ZResearchCounts,
  Research: c.ZResearch,
  ResourceType: c.ZResourceType,
  ResourceItem: c.ZResourceItem,
  ResourceList: c.ZResourceList,
  DailyMessage: c.ZDailyMessage,
  SendNowResponse: c.ZSendNowResponse,
  CalendarProviderId: c.ZCalendarProviderId,
  CalendarEvent: c.ZCalendarEvent,
  CalendarProblem: c.ZCalendarProblem,
  CalendarDay: c.ZCalendarDay,
  CalendarConnection: c.ZCalendarConnection,
  CalendarConnectionList: c.ZCalendarConnectionList,
} satisfies Record<string, z.ZodType>;

/**
 * What the contracts say in comments, for readers of the document. Keyed by component and field; a
 * test checks that each still names a field the schema has.
 */
export const FIELD_NOTES: Record<string, Record<string, string>> = {
  ApiError: {
    error: 'A sentence for people.',
    code: 'A stable code for programs; see the table of error codes.',
    field_errors:
      'For validation errors: messages by field name (dotted for nested fields; `non_field_errors` for the request as a whole).',
  },
  UserMe: {
    daily_message_time: 'When the daily message arrives, HH:MM (24-hour) in `time_zone`.',
    time_zone: 'IANA time zone; null until the browser, the onboarding or the user sets one (UTC meanwhile).',
    location: 'Where the weather in the daily message is for.',
    learn_from_chats: 'Whether the assistant saves what it learns from chat messages as memories.',
  },
  UpdateUserMeRequest: {
    time_zone: 'IANA time zone name, e.g. Europe/Berlin; stored with the canonical case.',
    location: 'A place name, geocoded when saved; null or blank clears it.',
  },
  UserLocation: { country_code: 'ISO 3166-1 alpha-2, when the geocoder knows it.' },
  Memory: {
    source: 'Who made it: the user, the assistant in the chat or in onboarding, or an import.',
    source_message_id: 'The message the assistant learned this from, when source is chat or onboarding.',
  },
  MemoryInput: {
    url: 'http:// or https:// address; blank is stored as null.',
    restore_deleted: 'Restores a deleted memory with the same key instead of refusing.',
  },
  MemoryPage: {
    next: 'The next page, or null on the last.',
    previous: 'The previous page, or null on the first.',
  },
  ChatMessage: {
    message_id: 'Stored messages have an id; transient ones (task notifications) have null.',
    timestamp: 'ISO 8601.',
    url: 'Where a redirect message sends the client.',
    stream_id: 'On the final markdown message of a streamed reply: the stream it completes.',
    reply_to: 'On an answer, or a note in its place: the id of the human message it answers.',
  },
  ChatSearchResult: {
    snippet:
      'Plain text around the first match (markdown marks removed, white space collapsed), … where cut; for a research report, of the part that matched.',
    highlights: "Each match in the snippet: [start, end) in UTF-16 code units (JavaScript's string indices).",
  },
  ClientMessage: {
    client_id: "The client's own id for the message; resending it after a reconnect stores it only once.",
  },
  StreamEvent: { raw_text: 'The new text only; append it to what came before.' },
  QueuedEvent: { ahead: 'How many answers come before this one.' },
  Research: {
    report: 'The body (markdown with [n] citations); null until done.',
    error: 'Why it failed, in words for the user; null unless status is failed.',
  },
  ResourceItem: {
    sort_date: "ISO 8601; the list's order and its cursors.",
    title: 'Research: its query. Daily message: its delivery date (YYYY-MM-DD).',
    preview: 'Daily message: the start of its text (at most 150 characters).',
    status: 'Research only.',
  },
  DailyMessage: {
    delivery_date: "The user's local date it is for (YYYY-MM-DD).",
    message_text: 'Markdown.',
    delivered: 'ISO 8601: when it was posted to the chat.',
    chat_message_id: 'The chat message that carries it, once posted.',
  },
  SendNowResponse: { id: "Today's message (being written while status is queued)." },
  CalendarEvent: {
    start: "All-day: the date (YYYY-MM-DD). Otherwise ISO 8601 in the day's time zone, with its offset.",
    end: 'All-day: the day after the last day (exclusive).',
    url: 'The event at the provider, when it has a web page.',
    calendar: "The connection's name.",
  },
  CalendarDay: { events: 'All-day events first, then by start, then by title.' },
  CreateInviteResponse: { token: 'Shown once: lists never include it.' },
};

const ROW_ID = 'The row id. Ids that are not positive integers, unknown ids and other users’ ids all answer 404.';
const JSON_TYPE = 'application/json';

export const TAGS: { name: string; description: string }[] = [
  { name: 'Site', description: 'Public facts about this Daybook.' },
  {
    name: 'Accounts',
    description:
      'The product’s own account calls and the signed-in user’s settings. Signing in and out, passwords, email addresses and connected providers are the account API at `/_allauth/browser/v1`, which follows django-allauth’s headless API (see its own document).',
  },
  { name: 'Invites', description: 'Signing up takes an invite. Administrators only.' },
  {
    name: 'Users',
    description: 'Every account of this installation: deactivate, reactivate, make administrator. Administrators only.',
  },
  { name: 'Model', description: 'The assistant model this installation is configured with. Administrators only.' },
  { name: 'Memories', description: 'What the assistant knows about the user.' },
  {
    name: 'Chat',
    description:
      'The chat itself is a WebSocket (`/ws/chat/`, and `/ws/onboarding/` for the first conversation), described under “WebSocket” since OpenAPI has no sockets; older history comes over HTTP.',
  },
  { name: 'History', description: 'Daily messages and research reports.' },
  { name: 'Calendar', description: 'Events from connected calendars.' },
  { name: 'Documentation', description: 'This reference.' },
];

/** The WebSocket protocol, as an extension of the document (x-websocket). */
export const WEBSOCKET = {
  paths: ['/ws/chat/', '/ws/onboarding/'],
  description:
    'JSON text frames over a WebSocket on the same origin; the session cookie authenticates the upgrade and the Origin must be this site. ' +
    'Right after connecting the server sends a `history` event with the latest 50 messages (and the text so far of answers being written, in `streams`). Each message the client sends is echoed as a stored chat message, then answered: ' +
    '`stream` events carry the answer as it is written, and a final `markdown` message with the same `stream_id` completes it. ' +
    'A client may also send `stop` (the answer being written ends, kept and marked `stopped`) and `regenerate` (a question answered again). ' +
    '`/ws/chat/?dmid=<id>` opens the chat on a daily message, which the answers then have in context.',
  closeCodes: [
    { code: c.CLOSE_CODES.normal, meaning: 'Closed normally.' },
    {
      code: c.CLOSE_CODES.policyViolation,
      meaning: 'Not signed in, or the session ended (sign out, password change): do not reconnect.',
    },
    {
      code: c.CLOSE_CODES.serviceRestart,
      meaning:
        'The server is restarting (a deploy, a shutdown): reconnect at once, to another instance if there is one.',
    },
    {
      code: c.CLOSE_CODES.tryAgainLater,
      meaning: 'Too many messages or connections, or the server is busy: reconnect after a pause.',
    },
  ],
  clientMessage: 'ClientMessage',
  /** Everything a client may send: a message, Stop, Regenerate (the `message_type` tells them apart). */
  clientEvents: ['ClientMessage', 'StopRequest', 'RegenerateRequest'],
  serverEvents: ['ChatMessage', 'HistoryEvent', 'StreamEvent', 'QueuedEvent', 'ErrorEvent'],
} as const;

/** Error codes (lib/errors.ts) a status can carry. */
export function codesForStatus(status: number): string[] {
  return Object.entries(ERROR_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
}

const SAFE = new Set<Method>(['get']);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

type Json = Record<string, unknown>;

/** Removes what JSON Schema says by default or zod adds as noise: $schema, $id, safe-integer bounds. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    out[key] = tidy(value);
  }
  return out;
}

function refsIn(node: unknown, into: Set<string>) {
  if (Array.isArray(node)) for (const item of node) refsIn(item, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.add(value.replace('#/components/schemas/', ''));
      else refsIn(value, into);
    }
  }
}

const nameOf = new Map<z.ZodType, string>(Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]));

function componentName(schema: z.ZodType, where: string): string {
  const name = nameOf.get(schema);
  if (!name) throw new Error(`${where}: its schema is not in COMPONENTS, so the document cannot name it`);
  return name;
}

/**
 * The components one side (input or output) needs: every named schema that side can convert, so
 * nested named schemas become $refs, then only those its roots reach.
 */
function componentsFor(io: Io, roots: Set<string>, rename: (name: string) => string): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(COMPONENTS)) {
    try {
      z.toJSONSchema(schema, { io });
    } catch {
      // A transform's output has no JSON Schema; such a schema is only ever read as input.
      continue;
    }
    registry.add(schema, { id: name });
  }
  const all = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${rename(id)}` }).schemas as Record<
    string,
    Json
  >;
  const keep = new Set<string>();
  const visit = (name: string) => {
    if (keep.has(name)) return;
    const schema = all[name];
    if (!schema) throw new Error(`No ${io} schema for ${name}`);
    keep.add(name);
    const refs = new Set<string>();
    refsIn(schema, refs);
    for (const r of refs) visit([...Object.keys(all)].find((n) => rename(n) === r) ?? r);
  };
  for (const root of roots) visit(root);
  return Object.fromEntries([...keep].map((name) => [rename(name), tidy(all[name]) as Json]));
}

function addFieldNotes(schemas: Record<string, Json>) {
  for (const [component, notes] of Object.entries(FIELD_NOTES)) {
    const properties = schemas[component]?.properties as Record<string, Json> | undefined;
    if (!properties) continue;
    for (const [field, note] of Object.entries(notes)) {
      const property = properties[field];
      if (property) property.description = note;
    }
  }
}

function errorResponse(status: number, reasons: string[]) {
  const codes = codesForStatus(status);
  const codeText = codes.length ? ` Codes: ${codes.map((code) => `\`${code}\``).join(', ')}.` : '';
  return {
    description: `${reasons.join(' ')}${codeText}`,
    content: { [JSON_TYPE]: { schema: ref('ApiError') } },
    'x-codes': codes,
  };
}

/** The error statuses an operation answers, each with why. */
export function errorsOf(op: ApiOperation): Map<number, string[]> {
  const errors = new Map<number, string[]>();
  const add = (status: number, why: string) => errors.set(status, [...(errors.get(status) ?? []), why]);
  if (op.body || op.query) add(400, 'A field is invalid (`field_errors` says which), or the body is not JSON.');
  if (op.auth !== 'public') add(401, 'No session.');
  if (op.auth === 'admin') add(403, 'The user is not an administrator.');
  if (!SAFE.has(op.method)) add(403, 'The CSRF token is missing or wrong.');
  if (op.pathParams) add(404, 'No such item of this user.');
  for (const [status, why] of Object.entries(op.errors ?? {})) add(Number(status), why);
  return new Map([...errors].sort(([a], [b]) => a - b));
}

function buildOperation(op: ApiOperation, name: (schema: z.ZodType, io: Io, where: string) => string): Json {
  const where = `${op.method.toUpperCase()} ${op.path}`;
  const parameters: Json[] = [];
  for (const [param, description] of Object.entries(op.pathParams ?? {}))
    parameters.push({ name: param, in: 'path', required: true, description, schema: { type: 'integer', minimum: 1 } });
  if (op.query) {
    const query = tidy(z.toJSONSchema(op.query, { io: 'input' })) as Json;
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [param, schema] of Object.entries((query.properties ?? {}) as Record<string, Json>)) {
      const note = op.queryNotes?.[param];
      parameters.push({
        name: param,
        in: 'query',
        required: required.has(param),
        ...(note ? { description: note } : {}),
        schema,
      });
    }
  }
  const responses: Json = {};
  for (const [status, response] of Object.entries(op.responses)) {
    const contentType = response.contentType ?? JSON_TYPE;
    responses[status] = {
      description: response.description,
      ...(response.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(response.headers).map(([header, example]) => [
                header,
                { schema: { type: 'string' }, example },
              ]),
            ),
          }
        : {}),
      ...(response.schema
        ? { content: { [contentType]: { schema: ref(name(response.schema, response.io ?? 'output', where)) } } }
        : response.contentType
          ? { content: { [contentType]: {} } }
          : {}),
    };
  }
  for (const [status, reasons] of errorsOf(op)) responses[status] = errorResponse(status, reasons);
  const security =
    op.auth === 'public'
      ? SAFE.has(op.method)
        ? []
        : [{ csrfToken: [] }]
      : [SAFE.has(op.method) ? { sessionCookie: [] } : { sessionCookie: [], csrfToken: [] }];
  return {
    operationId: operationId(op),
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required,
            ...(op.body.description ? { description: op.body.description } : {}),
            content: { [JSON_TYPE]: { schema: ref(name(op.body.schema, 'input', where)) } },
          },
        }
      : {}),
    responses,
    security,
    'x-daybook-auth': op.auth,
  };
}

/** The operations of the routes as they were declared (their schemas, auth and `config.docs`). */
export function operationsFromRoutes(routes: DeclaredRoute[]): ApiOperation[] {
  return routes.flatMap((route) => {
    const where = `${route.method} ${route.url}`;
    const { docs, schema = {} } = route;
    if (docs === false) return [];
    if (!docs) throw new Error(`${where}: the route declares no config.docs, so the reference cannot describe it`);
    if (!TAGS.some((tag) => tag.name === docs.tag)) throw new Error(`${where}: no tag ${docs.tag} in TAGS`);
    const declared = (schema.response ?? {}) as Record<string, z.ZodType>;
    for (const status of Object.keys(declared))
      if (!(status in docs.responses)) throw new Error(`${where}: config.docs.responses says nothing of ${status}`);
    const params = schema.params as z.ZodObject | undefined;
    const body = (docs.body?.schema ?? schema.body) as z.ZodType | undefined;
    return {
      method: route.method.toLowerCase() as Method,
      path: route.url.replace(/:(\w+)/g, '{$1}'),
      tag: docs.tag,
      summary: docs.summary,
      ...(docs.description ? { description: docs.description } : {}),
      auth: route.auth,
      ...(params
        ? { pathParams: Object.fromEntries(Object.keys(params.shape).map((n) => [n, docs.pathParams?.[n] ?? ROW_ID])) }
        : {}),
      ...(schema.querystring ? { query: schema.querystring as z.ZodObject } : {}),
      ...(docs.queryNotes ? { queryNotes: docs.queryNotes } : {}),
      ...(body
        ? {
            body: {
              schema: body,
              required: docs.body?.required ?? true,
              ...(docs.body?.description ? { description: docs.body.description } : {}),
            },
          }
        : {}),
      responses: Object.fromEntries(
        Object.entries(docs.responses).map(([status, r]) => {
          const bodySchema = r.schema ?? declared[status];
          return [status, { ...r, ...(bodySchema ? { schema: bodySchema } : {}) }];
        }),
      ),
      ...(docs.errors ? { errors: docs.errors } : {}),
    };
  });
}

/** A stable id from the method and path: get /api/memories/{id}/ → getMemoriesById. */
export function operationId(op: Pick<ApiOperation, 'method' | 'path'>): string {
  const words = op.path
    .replace(/^\/api\//, '')
    .split(/[/._-]+/)
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part))
    .flatMap((part) => part.split('-'));
  return [op.method, ...words].map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

const VERSION = (
  JSON.parse(readFileSync(path.join(import.meta.dirname, '../../../package.json'), 'utf8')) as { version: string }
).version;

/** The account API's document: the part of allauth's that Daybook serves (scripts/allauth-openapi.ts writes it). */
export const ALLAUTH_DOCUMENT_PATH = '/api/docs/allauth-openapi.yaml';
export const ACCOUNT_API_BASE = '/_allauth/browser/v1';

/** Builds the document. Throws when the table names a schema it cannot convert. */
export function buildOpenApiDocument(operations: ApiOperation[]): Json {
  // Which components each side needs: requests are read as input, responses as output (or as marked).
  const roots: Record<Io, Set<string>> = { input: new Set(), output: new Set(['ApiError']) };
  for (const op of operations) {
    const where = `${op.method.toUpperCase()} ${op.path}`;
    if (op.body) roots.input.add(componentName(op.body.schema, where));
    for (const response of Object.values(op.responses))
      if (response.schema) roots[response.io ?? 'output'].add(componentName(response.schema, where));
  }
  for (const event of WEBSOCKET.clientEvents) roots.input.add(event);
  for (const event of WEBSOCKET.serverEvents) roots.output.add(event);
  roots.output.add('ServerEvent');

  const output = componentsFor('output', roots.output, (n) => n);
  // A schema read both ways whose input differs (defaults, transforms) gets a second component.
  const plainInput = componentsFor('input', roots.input, (n) => n);
  const differs = new Set(
    Object.keys(plainInput).filter((n) => output[n] && JSON.stringify(output[n]) !== JSON.stringify(plainInput[n])),
  );
  const inputName = (n: string) => (differs.has(n) ? `${n}Input` : n);
  const input = differs.size ? componentsFor('input', roots.input, inputName) : plainInput;
  const schemas: Record<string, Json> = { ...output, ...input };
  addFieldNotes(schemas);
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((n) => [n, schemas[n] as Json]),
  );

  const name = (schema: z.ZodType, io: Io, where: string) => {
    const n = componentName(schema, where);
    return io === 'input' ? inputName(n) : n;
  };
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    (paths[op.path] as Json)[op.method] = buildOperation(op, name);
  }

  const usedTags = new Set(operations.map((op) => op.tag));
  return {
    openapi: '3.1.1',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Daybook API',
      version: VERSION,
      summary: 'The product API of a Daybook server: memories, history, calendar, settings and invites.',
      description:
        'JSON over HTTPS on the same origin as the web app. Every error has one shape (`ApiError`). ' +
        `Signed-in calls carry the \`${SESSION_COOKIE}\` cookie; unsafe methods also send the \`${CSRF_COOKIE}\` cookie's value in the \`X-CSRFToken\` header and, from browsers, an Origin of this site. ` +
        `Signing in, out and up, passwords and email addresses are the account API at \`${ACCOUNT_API_BASE}\`, which follows django-allauth's headless API: its OpenAPI document is at \`${ALLAUTH_DOCUMENT_PATH}\`. ` +
        'The chat is a WebSocket, described in `x-websocket`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This server' }],
    tags: TAGS.filter((t) => usedTags.has(t.name)),
    externalDocs: {
      description: "The account API: django-allauth's headless OpenAPI document",
      url: ALLAUTH_DOCUMENT_PATH,
    },
    paths,
    components: {
      schemas: sorted,
      securitySchemes: {
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: `Set when signing in through the account API (${ACCOUNT_API_BASE}/auth/login).`,
        },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRFToken',
          description: `The value of the \`${CSRF_COOKIE}\` cookie (any GET to ${ACCOUNT_API_BASE}/config sets it), required on every POST, PUT, PATCH and DELETE.`,
        },
      },
    },
    'x-websocket': {
      paths: WEBSOCKET.paths,
      description: WEBSOCKET.description,
      closeCodes: WEBSOCKET.closeCodes,
      clientMessage: ref(inputName(WEBSOCKET.clientMessage)),
      clientEvents: WEBSOCKET.clientEvents.map((n) => ref(inputName(n))),
      serverEvents: WEBSOCKET.serverEvents.map(ref),
    },
    'x-error-codes': Object.entries(ERROR_STATUS).map(([code, status]) => ({ code, status })),
  };
}
