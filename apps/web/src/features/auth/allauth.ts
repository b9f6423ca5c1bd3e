// Client for the account API (/_allauth/browser/v1, django-allauth's headless wire format).
// Calls resolve with the envelope, whatever the HTTP status; only a network failure throws.
import {
  type TAllauthError,
  type TAllauthUser,
  type TSessionEndedReason,
  ZAllauthError,
  ZAllauthUser,
  ZFlow,
  ZSessionEndedReason,
} from '@daybook/contracts';
import { z } from 'zod';
import { takeBootAnswer } from '../../lib/boot.ts';
import { clearCsrfCache, getCsrfToken } from '../../lib/csrf.ts';

export const ALLAUTH_BASE = '/_allauth/browser/v1';
export const SESSION_CACHE_MS = 5_000;
export const RATE_LIMITED_MESSAGE = 'Too many attempts. Please wait a minute and try again.';

const ZEnvelope = z
  .object({
    data: z
      .object({ user: ZAllauthUser.optional(), flows: z.array(ZFlow).optional() })
      .loose()
      .optional(),
    meta: z.object({ is_authenticated: z.boolean().nullable().optional() }).loose().optional(),
    errors: z.array(ZAllauthError).optional(),
  })
  .loose();

export type AllauthResponse = z.infer<typeof ZEnvelope> & {
  /** The HTTP status, which allauth repeats in the body. */
  status: number;
};

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

function parseEnvelope(status: number, text: string): AllauthResponse {
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    // Not JSON, e.g. a proxy's HTML error page.
    return { status };
  }
  const parsed = ZEnvelope.safeParse(json);
  return parsed.success ? { ...parsed.data, status } : { status };
}

async function request(
  method: Method,
  path: string,
  { body, headers: extra }: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<AllauthResponse> {
  const answered = method === 'GET' ? takeBootAnswer(`${ALLAUTH_BASE}${path}`) : undefined;
  if (answered) return parseEnvelope(answered.status, await answered.text());
  const send = async (freshToken: boolean) => {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-Requested-With': 'XMLHttpRequest',
      ...extra,
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET') {
      const token = await getCsrfToken({ fresh: freshToken });
      if (token) headers['X-CSRFToken'] = token;
    }
    const response = await fetch(`${ALLAUTH_BASE}${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  };

  let result = await send(false);
  // A stale token (it rotates on login) is refused once; a fresh one from /config fixes it.
  if (result.status === 403 && method !== 'GET' && /csrf/i.test(result.text)) {
    clearCsrfCache();
    result = await send(true);
  }
  return parseEnvelope(result.status, result.text);
}

// ---- session ------------------------------------------------------------------------------------

export interface SessionInfo {
  user: TAllauthUser | null;
  /** Nobody signed in, because the server ended this browser's session for this reason. */
  ended: TSessionEndedReason | null;
}

const NOBODY: SessionInfo = { user: null, ended: null };

let sessionCache: { at: number; info: Promise<SessionInfo> } | null = null;

async function loadSession(): Promise<SessionInfo> {
  const res = await request('GET', '/auth/session');
  if (res.status === 200 && res.data?.user) return { user: res.data.user, ended: null };
  // Additive in the 401's meta (see ZSessionEndedReason); an unknown reason is no reason.
  const ended = ZSessionEndedReason.safeParse(res.status === 401 ? res.meta?.session_ended : undefined);
  return { user: null, ended: ended.success ? ended.data : null };
}

/** Who is signed in, or why nobody is. Cached 5 s; a failed check is not cached. */
export function getSessionInfo(): Promise<SessionInfo> {
  if (sessionCache && Date.now() - sessionCache.at < SESSION_CACHE_MS) return sessionCache.info;
  const entry = {
    at: Date.now(),
    info: loadSession().catch(() => {
      if (sessionCache === entry) sessionCache = null;
      return NOBODY;
    }),
  };
  sessionCache = entry;
  return entry.info;
}

/** The signed-in user, or null (see getSessionInfo). */
export async function getSession(): Promise<TAllauthUser | null> {
  return (await getSessionInfo()).user;
}

export function invalidateSession() {
  sessionCache = null;
}

/** Forgets the cached session and CSRF token (tests, and after the session changes hands). */
export function clearAuthCaches() {
  invalidateSession();
  clearCsrfCache();
}

// ---- calls --------------------------------------------------------------------------------------

export async function login(credentials: { email: string; password: string }): Promise<AllauthResponse> {
  invalidateSession();
  try {
    return await request('POST', '/auth/login', { body: credentials });
  } finally {
    invalidateSession();
  }
}

/** Always answers 401 (logged out), even when nobody was signed in. */
export async function logout(): Promise<AllauthResponse> {
  try {
    return await request('DELETE', '/auth/session');
  } finally {
    clearAuthCaches();
  }
}

/** 200 (signed in) and 401 (verified, not signed in) both mean success; 400 means a bad key. */
export async function verifyEmail(key: string): Promise<AllauthResponse> {
  try {
    await request('GET', '/auth/email/verify', { headers: { 'X-Email-Verification-Key': key } });
  } catch {
    // Only a look-ahead: the POST below decides.
  }
  const res = await request('POST', '/auth/email/verify', { body: { key } });
  invalidateSession();
  return res;
}

/** 200 when the reset key is valid, 400 `invalid_password_reset` when not. */
export function checkPasswordResetKey(key: string): Promise<AllauthResponse> {
  return request('GET', '/auth/password/reset', { headers: { 'X-Password-Reset-Key': key } });
}

/** 401 means success: the password changed and nobody is signed in. */
export async function resetPassword(body: { key: string; password: string }): Promise<AllauthResponse> {
  const res = await request('POST', '/auth/password/reset', { body });
  invalidateSession();
  return res;
}

/** 200 on success (still signed in). */
export function changePassword(body: { current_password?: string; new_password: string }): Promise<AllauthResponse> {
  return request('POST', '/account/password/change', { body });
}

// ---- reading responses --------------------------------------------------------------------------

export function hasPendingFlow(res: AllauthResponse, id: string): boolean {
  return res.data?.flows?.some((flow) => flow.id === id && flow.is_pending) ?? false;
}

/** Messages of field errors, by field (`param`). */
export function fieldErrors(res: AllauthResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const error of res.errors ?? []) {
    if (error.param && !out[error.param]) out[error.param] = error.message;
  }
  return out;
}

export function errorMessages(res: AllauthResponse, predicate: (error: TAllauthError) => boolean = () => true) {
  return (res.errors ?? []).filter(predicate).map((error) => error.message);
}
