// A fake network for the web unit tests: answers fetch() by "METHOD /path" and records every request.
import { vi } from 'vitest';

export const ALLAUTH = '/_allauth/browser/v1';

export interface RecordedRequest {
  method: string;
  path: string;
  search: string;
  headers: Headers;
  credentials: RequestCredentials | undefined;
  body: unknown;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** Sent as is instead of JSON (e.g. an HTML error page). */
  text?: string;
}

/** A reply, or a function of the request and of how many times this route was called before. */
export type Handler = Reply | ((request: RecordedRequest, previousCalls: number) => Reply | Promise<Reply>);

export const reply = (status: number, body?: unknown): Reply => ({ status, body: body ?? { status } });

export const TEST_USER = { id: 1, display: 'sam@example.com', email: 'sam@example.com', has_usable_password: true };

export const SESSION_ANONYMOUS = reply(401, {
  status: 401,
  data: { flows: [{ id: 'login' }, { id: 'signup' }] },
  meta: { is_authenticated: false },
});

export const SESSION_SIGNED_IN = reply(200, {
  status: 200,
  data: { user: TEST_USER, methods: [{ method: 'password', at: 1_750_000_000.5, email: TEST_USER.email }] },
  meta: { is_authenticated: true },
});

export const configReply = (csrfToken: string) =>
  reply(200, {
    status: 200,
    data: {
      account: {
        login_methods: ['email'],
        is_open_for_signup: true,
        email_verification_by_code_enabled: false,
        login_by_code_enabled: false,
        password_reset_by_code_enabled: false,
        authentication_method: 'email',
      },
      socialaccount: { providers: [] },
    },
    meta: { csrf_token: csrfToken },
  });

export const allauthErrors = (...errors: { message: string; code: string; param?: string }[]) =>
  reply(400, { status: 400, errors });

export const USER_ME = {
  id: 1,
  email: 'sam@example.com',
  display: 'sam@example.com',
  has_usable_password: true,
  email_verified: true,
  is_admin: false,
  is_daily_message_paused: false,
  daily_message_time: '07:00',
  time_zone: 'Europe/Lisbon',
  location: null,
  temperature_unit: 'auto',
  daily_message_email: false,
  learn_from_chats: true,
  onboarded: false,
  date_joined: '2025-03-14T09:30:00.000Z',
};

const DEFAULTS: Record<string, Handler> = {
  [`GET ${ALLAUTH}/config`]: configReply('config-token'),
  [`GET ${ALLAUTH}/auth/session`]: SESSION_ANONYMOUS,
};

export function mockFetch(routes: Record<string, Handler> = {}) {
  const requests: RecordedRequest[] = [];
  const counts = new Map<string, number>();
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(
      typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      'http://localhost',
    );
    const method = (init.method ?? 'GET').toUpperCase();
    const request: RecordedRequest = {
      method,
      path: url.pathname,
      search: url.search,
      headers: new Headers(init.headers),
      credentials: init.credentials,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    requests.push(request);
    const key = `${method} ${url.pathname}`;
    const previous = counts.get(key) ?? 0;
    counts.set(key, previous + 1);
    const handler = routes[key] ?? DEFAULTS[key];
    const answer = !handler
      ? reply(404, { error: 'Not found', code: 'not_found' })
      : typeof handler === 'function'
        ? await handler(request, previous)
        : handler;
    if (answer.text !== undefined) return new Response(answer.text, { status: answer.status });
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'Content-Type': 'application/json' },
    });
  });
  vi.stubGlobal('fetch', fetchMock);
  const calls = (key: string) => requests.filter((r) => `${r.method} ${r.path}` === key);
  return { fetchMock, requests, calls };
}

export interface SignInOptions {
  /** The other routes, as mockFetch takes them. */
  routes?: Record<string, Handler>;
  /** The session before the sign-in. */
  before?: Reply;
  /** The session after it. */
  after?: Reply;
}

/**
 * The fake network of mockFetch, with the account API's session as the server keeps it: `before`
 * until the request `signIn` (e.g. `POST .../auth/login`) is answered with a success, then `after`.
 */
export function mockSignIn(
  signIn: string,
  handler: Handler,
  { routes = {}, before = SESSION_ANONYMOUS, after = SESSION_SIGNED_IN }: SignInOptions = {},
) {
  let signedIn = false;
  return mockFetch({
    ...routes,
    [signIn]: async (request, previousCalls) => {
      const answer = typeof handler === 'function' ? await handler(request, previousCalls) : handler;
      signedIn = answer.status >= 200 && answer.status < 300;
      return answer;
    },
    [`GET ${ALLAUTH}/auth/session`]: () => (signedIn ? after : before),
  });
}

/** A promise to resolve by hand, to look at a screen while a request is in flight. */
export function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function setCookie(value: string) {
  // biome-ignore lint/suspicious/noDocumentCookie: jsdom's cookie jar is what the client reads
  document.cookie = value;
}

export function clearCookies() {
  for (const part of document.cookie.split('; ')) {
    const name = part.split('=')[0];
    if (name) setCookie(`${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`);
  }
}
