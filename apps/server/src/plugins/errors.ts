import type { TApiError } from '@daybook/contracts';
import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ZodError } from 'zod';
import { AppError, codeForStatus } from '../lib/errors.ts';

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Request body is too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
};

/** Field messages keyed by field path, from a zod validation error. */
export function fieldErrorsFrom(error: ZodError): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? issue.path.join('.') : 'non_field_errors';
    out[key] = [...(out[key] ?? []), issue.message];
  }
  return out;
}

/** PostgreSQL's classes of a lost or refused connection, and the errors of a socket that is gone. */
const DOWN_CODES =
  /^(08\w{3}|57P0[1-3]|53300|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|P1001|P1002|P1008|P1017|P2024)$/;
const DOWN_WORDS =
  /connection terminated|connection (error|closed|refused|ended)|not currently accepting connections|can't reach database|timed out fetching a new connection|pglite is closed|server closed the connection/i;

/**
 * Whether `error` (or what caused it: Prisma's driver adapter and the pool wrap the driver's error)
 * says the database cannot be reached, rather than that a query was wrong.
 */
export function isDatabaseDown(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined; e && !seen.has(e); ) {
    seen.add(e);
    if (typeof e.code === 'string' && DOWN_CODES.test(e.code)) return true;
    if (typeof e.message === 'string' && DOWN_WORDS.test(e.message)) return true;
    e = e.cause as typeof e;
  }
  return false;
}

export const DATABASE_DOWN = 'Daybook cannot reach its database just now. Please try again in a moment.';

export function toApiError(error: unknown): { status: number; body: TApiError } {
  if (error instanceof AppError) {
    const body: TApiError = { error: error.message, code: error.code };
    if (error.fieldErrors) body.field_errors = error.fieldErrors;
    return { status: error.status, body };
  }
  if (error instanceof ZodError) {
    return {
      status: 400,
      body: { error: 'Some fields are invalid.', code: 'validation_error', field_errors: fieldErrorsFrom(error) },
    };
  }
  const status = (error as FastifyError | undefined)?.statusCode;
  if (status && status >= 400 && status < 500) {
    const message =
      (error as FastifyError).code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (error as Error).name === 'SyntaxError'
        ? 'The request body is not valid JSON.'
        : (STATUS_MESSAGES[status] ?? 'Bad request');
    return { status, body: { error: message, code: codeForStatus(status) } };
  }
  // A passing outage, not a fault of the request: the client may simply ask again.
  if (isDatabaseDown(error)) return { status: 503, body: { error: DATABASE_DOWN, code: 'unavailable' } };
  // 5xx details stay in the log, never in the response.
  return { status: 500, body: { error: 'Something went wrong on our side. Please try again.', code: 'internal' } };
}

export default fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error, request, reply) => {
      const { status, body } = toApiError(error);
      if (status === 503 && body.error === DATABASE_DOWN) {
        request.log.warn({ err: error }, 'request failed: the database cannot be reached');
        reply.header('retry-after', '5');
      } else if (status >= 500) request.log.error({ err: error }, 'request failed');
      else request.log.debug({ err: error }, 'request rejected');
      return reply.status(status).send(body);
    });
  },
  { name: 'errors' },
);
