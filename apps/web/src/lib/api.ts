// The web app's HTTP client for the product API (/api/...). Responses are parsed with the
// contract schemas, so a server that drifts from the contract fails loudly here.
import { ZApiError } from '@daybook/contracts';
import type { z } from 'zod';
import { takeBootAnswer } from './boot.ts';
import { getCsrfToken } from './csrf.ts';

export { readCookie } from './csrf.ts';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

export const GENERIC_ERROR = 'Something went wrong. Please try again.';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly fieldErrors?: Record<string, string[]>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? (status >= 500 ? 'Server error' : 'Request failed');
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
}

async function send(path: string, { method = 'GET', body, signal }: RequestOptions): Promise<Response> {
  const answered = method === 'GET' ? takeBootAnswer(path) : undefined;
  if (answered) return answered;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const csrf = method === 'GET' ? undefined : await getCsrfToken();
  if (csrf) headers['X-CSRFToken'] = csrf;
  try {
    return await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(GENERIC_ERROR, 0, 'network_error');
  }
}

/** Calls the product API and parses the answer with `schema`; throws ApiError on failure. */
export async function apiRequest<S extends z.ZodType>(path: string, schema: S, options: RequestOptions = {}) {
  const response = await send(path, options);
  const payload: unknown = response.status === 204 ? undefined : await response.json().catch(() => undefined);
  if (!response.ok) {
    const parsed = ZApiError.safeParse(payload);
    if (parsed.success) {
      throw new ApiError(parsed.data.error, response.status, parsed.data.code, parsed.data.field_errors);
    }
    throw new ApiError(statusText(response.status), response.status);
  }
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new ApiError(GENERIC_ERROR, response.status, 'invalid_response');
  return parsed.data as z.infer<S>;
}

/** The server's own message when it sent one (not for network failures or a drifting response). */
export function serverMessage(err: unknown): string | undefined {
  if (!(err instanceof ApiError) || !err.code) return undefined;
  if (err.code === 'network_error' || err.code === 'invalid_response') return undefined;
  return err.message;
}

/** The first server message of each of `fields`. */
export function serverFieldErrors<K extends string>(err: unknown, fields: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  if (!(err instanceof ApiError) || !err.fieldErrors) return out;
  for (const field of fields) {
    const message = err.fieldErrors[field]?.[0];
    if (message) out[field] = message;
  }
  return out;
}
