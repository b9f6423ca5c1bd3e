// What the Google and Microsoft calendar clients share: one JSON GET with a bearer token and a
// timeout over the whole answer, failures as ProviderApiError in words that name no token, address
// or calendar. The API bases are the operator's configuration (or test fakes), not user input, so
// plain fetch is used rather than the SSRF-safe fetcher.
import { type DayWindow, ProviderApiError, type SourceEvent } from '../calendar.types.ts';

export interface ProviderApiOptions {
  /** The API's base: https://www.googleapis.com/calendar/v3 or https://graph.microsoft.com/v1.0. */
  apiUrl: string;
  /** Per request, including reading the answer. */
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** The base without trailing slashes, so paths can be appended. */
export const apiBase = (apiUrl: string) => apiUrl.replace(/\/+$/, '');

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** An `unavailable` refusal, keeping what caused it for the logs' stack. */
export function failure(message: string, status?: number, cause?: unknown): ProviderApiError {
  const error = new ProviderApiError('unavailable', message, status);
  if (cause !== undefined) error.cause = cause;
  return error;
}

/**
 * GET `url` as JSON. The caller's abort is passed on as it is (nothing failed); 401 is `unauthorized`,
 * anything else that is not a 2xx JSON answer is `unavailable`.
 */
export async function getJson(
  label: string,
  url: URL,
  accessToken: string,
  options: ProviderApiOptions,
  signal?: AbortSignal,
  headers: Record<string, string> = {},
): Promise<unknown> {
  signal?.throwIfAborted();
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  let text: string;
  try {
    res = await (options.fetch ?? fetch)(url, {
      headers: { Accept: 'application/json', ...headers, Authorization: `Bearer ${accessToken}` },
      signal: combined,
      // A redirect would carry the token somewhere the operator did not configure.
      redirect: 'manual',
    });
    text = await res.text();
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) throw failure(`${label} did not answer within ${seconds(options.timeoutMs)}.`, undefined, err);
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    throw failure(`Could not reach ${label}${typeof code === 'string' ? ` (${code})` : ''}.`, undefined, err);
  }
  if (res.status === 401) {
    throw new ProviderApiError('unauthorized', `${label} refused the access token (401).`, 401);
  }
  if (res.status < 200 || res.status > 299) {
    const what =
      res.status >= 500
        ? 'is unavailable'
        : res.status === 429
          ? 'is rate limiting requests'
          : res.status >= 300 && res.status < 400
            ? 'answered with a redirect'
            : 'refused the request';
    throw failure(`${label} ${what} (${res.status}).`, res.status);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw failure(`${label} answered with something other than JSON.`, res.status, err);
  }
}

/** A provider answer that does not have the shape its API documents. */
export const unexpectedShape = (label: string, cause?: unknown) =>
  failure(`${label} answered in an unexpected shape.`, undefined, cause);

/** The address when it is http(s), else null. */
export function webUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Trimmed text, or null when there is none. */
export const textOrNull = (value: string | null | undefined) => value?.trim() || null;

/** Pages followed at most, per list: a day with more than that is cut short rather than failing. */
export const MAX_PAGES = 10;

export const NO_TITLE = '(No title)';

const DAY_MS = 86_400_000;
/** The date after YYYY-MM-DD. */
export const nextDate = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);

const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const isDate = (value: string | undefined): value is string =>
  value !== undefined && DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));

/**
 * Whether an event the API listed belongs to the day. All-day events are matched by date: the APIs
 * place them in the calendar's zone, so the window can catch the end of yesterday's or the start of
 * tomorrow's.
 */
export const onDay = (event: SourceEvent, window: DayWindow) =>
  !event.allDay || (event.startDate <= window.date && window.date < event.endDate);
