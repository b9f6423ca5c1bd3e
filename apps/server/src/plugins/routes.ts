// Routes declare themselves once: zod schemas from the contracts in `schema` (params, querystring,
// body, response by status) and who may call in `config.auth`. This plugin makes that so:
// - the schemas validate the request and serialise the answer (fastify-type-provider-zod), so no
//   field leaves the server that the contract does not name;
// - one hook checks who is calling, then what they sent, in the order the API has always answered:
//   the CSRF check (plugins/csrf.ts) first, then 401/403, then 400 (or 404 for an id that names no row).

import type {
  FastifyInstance,
  FastifyRequest,
  FastifySchema,
  preHandlerHookHandler,
  preValidationHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { ZodError, type ZodType } from 'zod';
import type { $ZodIssue } from 'zod/v4/core';
import { AppError } from '../lib/errors.ts';

/** Who may call: anyone, a signed-in user, or a signed-in administrator. */
export type Auth = 'public' | 'user' | 'admin';

/** A successful answer as the reference shows it. */
export interface ResponseDocs {
  description: string;
  /** The body's contract, where the route writes it itself (pre-written JSON text, a stream). */
  schema?: ZodType;
  /** Which side of the schema's transforms the body is (default: output). */
  io?: 'input' | 'output';
  contentType?: string;
  /** Response headers, each with an example value. */
  headers?: Record<string, string>;
}

/**
 * What the API reference says of a route beyond its schemas (modules/docs/openapi.ts reads both):
 * the words, and the answers the schemas cannot tell.
 */
export interface RouteDocs {
  tag: string;
  summary: string;
  description?: string;
  /** Each successful status; its schema is the route's `schema.response` one unless given here. */
  responses: Record<number, ResponseDocs>;
  /** Error statuses the route answers besides those its auth, body and params imply, each with why. */
  errors?: Record<number, string>;
  /** Notes on query parameters the schema cannot say (constraints checked by refinements). */
  queryNotes?: Record<string, string>;
  /** What each path parameter names, where it is not a row id. */
  pathParams?: Record<string, string>;
  /** Whether a body is required (default: yes), what it is, and its contract where the route reads it itself. */
  body?: { required?: boolean; description?: string; schema?: ZodType };
}

/** A route under /api/ as it was declared: the reference is made from these. */
export interface DeclaredRoute {
  method: string;
  url: string;
  auth: Auth;
  docs?: RouteDocs | false;
  schema?: FastifySchema;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every /api/ route declared so far, in order (see DeclaredRoute). */
    declaredRoutes: DeclaredRoute[];
  }
  interface FastifyContextConfig {
    /** For the API reference: see RouteDocs. `false` for an asset that is no API operation. */
    docs?: RouteDocs | false;
    auth?: Auth;
    /** For `auth: 'admin'`: what a signed-in user who is not an administrator reads (403). */
    adminOnly?: string;
    /** What a path parameter that names no row answers (404), e.g. "Memory not found.". */
    notFound?: string;
  }
}

export const NOT_SIGNED_IN = 'Authentication credentials were not provided.';

const listOf = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/** The zod issues behind fastify's validation error, as a ZodError the error handler words. */
function zodErrorOf(error: { validation?: Array<{ message: string; instancePath: string; params?: unknown }> }) {
  const issues = (error.validation ?? []).map((v) => {
    const path = v.instancePath.split('/').filter(Boolean);
    return { ...(v.params as object), message: v.message, path } as $ZodIssue;
  });
  return new ZodError(issues);
}

const authorize: preHandlerHookHandler = async (request: FastifyRequest) => {
  const { auth, adminOnly } = request.routeOptions.config;
  if (auth === 'public' || auth === undefined) return;
  if (!request.user) throw new AppError('unauthorized', NOT_SIGNED_IN);
  if (auth === 'admin' && !request.user.isAdmin) throw new AppError('forbidden', adminOnly ?? 'Forbidden');
};

const rejectInvalid: preHandlerHookHandler = async (request: FastifyRequest) => {
  const error = request.validationError as
    | (Error & { validationContext?: string; validation?: Array<{ message: string; instancePath: string }> })
    | undefined;
  if (!error) return;
  const { notFound } = request.routeOptions.config;
  if (error.validationContext === 'params' && notFound) throw new AppError('not_found', notFound);
  throw zodErrorOf(error);
};

/** A request with no body is read as an empty object: each missing field is named, not the body. */
const emptyBodyAsObject: preValidationHookHandler = async (request: FastifyRequest) => {
  if (request.body === undefined || request.body === null) request.body = {};
};

export default fp(
  async (app: FastifyInstance) => {
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    app.decorate('declaredRoutes', [] as DeclaredRoute[]);
    app.addHook('onRoute', (route) => {
      // Every product API route says who may call: a route that forgot cannot start the server.
      if (!route.config?.auth && route.url.startsWith('/api/') && !route.websocket)
        throw new Error(`${route.method} ${route.url}: a route under /api/ declares config.auth`);
      if (!route.config?.auth) return;
      // Fastify adds a HEAD route beside each GET: the reference documents the GET.
      if (route.url.startsWith('/api/') && route.method !== 'HEAD') {
        const { auth, docs } = route.config;
        for (const method of listOf(route.method))
          app.declaredRoutes.push({ method, url: route.url, auth, docs, schema: route.schema });
      }
      // Validation runs before the preHandler hooks; its error waits until who is calling is known.
      route.attachValidation = true;
      route.preHandler = [authorize, rejectInvalid, ...listOf(route.preHandler)];
      if (route.schema?.body) route.preValidation = [...listOf(route.preValidation), emptyBodyAsObject];
    });
  },
  { name: 'routes' },
);
