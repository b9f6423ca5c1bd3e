// Django's CSRF rules, which allauth's browser API relies on: a JS-readable `csrftoken` cookie,
// echoed in the X-CSRFToken header (or the csrfmiddlewaretoken form field) on every unsafe
// request, and an Origin that is ours when the browser sends one.
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/errors.ts';
import { routedPath } from '../lib/route-path.ts';

export const CSRF_COOKIE = 'csrftoken';
export const CSRF_HEADER = 'x-csrftoken';
const CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const SECRET_LENGTH = 32;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
const CHECKED_PATHS = ['/api/', '/_allauth/', '/accounts/'];
export const CSRF_FAILED_MESSAGE = 'CSRF Failed: CSRF token missing or incorrect.';

declare module 'fastify' {
  interface FastifyInstance {
    csrfOptions: CsrfOptions;
  }
  interface FastifyRequest {
    csrfSecret: string;
  }
}

export class CsrfError extends AppError {
  constructor(message = CSRF_FAILED_MESSAGE) {
    super('csrf_failed', message);
  }
}

export const newCsrfSecret = () => Array.from({ length: SECRET_LENGTH }, () => CHARS[randomInt(CHARS.length)]).join('');
const isSecret = (v: unknown): boolean =>
  typeof v === 'string' && v.length === SECRET_LENGTH && [...v].every((c) => CHARS.includes(c));

/** Django sends either the secret or a 64-character masked form of it. */
function unmask(token: string): string | null {
  if (isSecret(token)) return token;
  if (token.length !== 2 * SECRET_LENGTH) return null;
  const mask = token.slice(0, SECRET_LENGTH);
  const cipher = token.slice(SECRET_LENGTH);
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) {
    const m = CHARS.indexOf(mask[i] ?? '');
    const c = CHARS.indexOf(cipher[i] ?? '');
    if (m < 0 || c < 0) return null;
    secret += CHARS[(c - m + CHARS.length) % CHARS.length];
  }
  return secret;
}

export interface CsrfOptions {
  publicUrl: string;
  trustedOrigins: string[];
  secureCookies: boolean;
}

export function setCsrfCookie(reply: FastifyReply, secret: string) {
  reply.setCookie(CSRF_COOKIE, secret, {
    path: '/',
    sameSite: 'lax',
    secure: reply.server.csrfOptions.secureCookies,
    maxAge: 31_449_600,
    httpOnly: false,
  });
}

/** Login rotates the token, as Django does. */
export function rotateCsrf(request: FastifyRequest, reply: FastifyReply) {
  request.csrfSecret = newCsrfSecret();
  setCsrfCookie(reply, request.csrfSecret);
}

/** Throws a CsrfError unless the request carries our token and, if any, our Origin. */
export function checkCsrf(request: FastifyRequest, allowedOrigins: Set<string>) {
  const origin = request.headers.origin;
  if (origin && origin !== 'null') {
    const host = `${request.protocol}://${request.host}`;
    if (!allowedOrigins.has(origin) && origin !== host)
      throw new CsrfError(`CSRF Failed: Origin checking failed - ${origin} does not match any trusted origins.`);
  } else if (origin === 'null') {
    throw new CsrfError('CSRF Failed: Origin checking failed - null does not match any trusted origins.');
  }
  const cookie = request.cookies[CSRF_COOKIE];
  const header = request.headers[CSRF_HEADER];
  const field = (request.body as Record<string, unknown> | undefined)?.csrfmiddlewaretoken;
  const given = typeof header === 'string' ? header : typeof field === 'string' ? field : '';
  const secret = given ? unmask(given) : null;
  if (typeof cookie !== 'string' || !isSecret(cookie)) throw new CsrfError('CSRF Failed: CSRF cookie not set.');
  if (!secret || !timingSafeEqual(Buffer.from(secret), Buffer.from(cookie))) throw new CsrfError();
}

export default fp<CsrfOptions>(
  async (app: FastifyInstance, opts) => {
    app.decorate('csrfOptions', opts);
    const allowedOrigins = new Set([new URL(opts.publicUrl).origin, ...opts.trustedOrigins]);
    app.decorateRequest('csrfSecret', '');

    app.addHook('onRequest', async (request, reply) => {
      const path = routedPath(request);
      if (!CHECKED_PATHS.some((p) => path.startsWith(p))) return;
      const cookie = request.cookies[CSRF_COOKIE];
      request.csrfSecret = typeof cookie === 'string' && isSecret(cookie) ? cookie : newCsrfSecret();
      // allauth refreshes the cookie on every browser API response; the product API sets it when missing.
      if (path.startsWith('/_allauth/') || request.csrfSecret !== cookie) setCsrfCookie(reply, request.csrfSecret);
    });

    // After body parsing, so the provider form's csrfmiddlewaretoken field can be read.
    app.addHook('preHandler', async (request) => {
      // Unknown paths answer 404 whatever the token, as Django's middleware only guards real views.
      if (request.is404 || SAFE_METHODS.has(request.method)) return;
      const path = routedPath(request);
      if (!CHECKED_PATHS.some((p) => path.startsWith(p))) return;
      checkCsrf(request, allowedOrigins);
    });
  },
  { name: 'csrf', dependencies: ['@fastify/cookie'] },
);
