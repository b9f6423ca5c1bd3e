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
  // 5xx details stay in the log, never in the response.
  return { status: 500, body: { error: 'Something went wrong on our side. Please try again.', code: 'internal' } };
}

export default fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error, request, reply) => {
      const { status, body } = toApiError(error);
      if (status >= 500) request.log.error({ err: error }, 'request failed');
      else request.log.debug({ err: error }, 'request rejected');
      return reply.status(status).send(body);
    });
  },
  { name: 'errors' },
);
