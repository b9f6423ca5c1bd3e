// Domain errors carry a code; the error handler (plugins/errors.ts) maps codes to HTTP statuses.
export const ERROR_STATUS = {
  bad_request: 400,
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  csrf_failed: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors?: Record<string, string[]>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const notFound = (what = 'Not found') => new AppError('not_found', what);

/** The code for a bare HTTP status (framework errors carry only a status). */
export function codeForStatus(status: number): ErrorCode {
  const match = Object.entries(ERROR_STATUS).find(([code, s]) => s === status && code !== 'validation_error');
  if (match) return match[0] as ErrorCode;
  return status >= 500 ? 'internal' : 'bad_request';
}
