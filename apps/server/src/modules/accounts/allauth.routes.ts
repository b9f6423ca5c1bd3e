// django-allauth's headless browser API (/_allauth/browser/v1), wire-compatible: same paths,
// envelope, status codes and error codes, as described in shared/reference/allauth/.
import type { TAllauthProvider, TFlow, TProviderAccount } from '@daybook/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { localPath } from '../../lib/redirect.ts';
import { CsrfError, rotateCsrf } from '../../plugins/csrf.ts';
import { endSession, saveSession, startSession } from '../../plugins/session.ts';
import { PROVIDER_NAMES } from '../calendar/calendar.service.ts';
import { CalendarError, type CalendarService } from '../calendar/calendar.types.ts';
import { AccountError, formError, MESSAGES, required } from './account-error.ts';
import type { UserRow } from './accounts.repo.ts';
import type { AccountsService } from './accounts.service.ts';
import type { AuthMethodRecord, SessionData } from './sessions.service.ts';

const NEVER_CACHE = 'max-age=0, no-cache, no-store, must-revalidate, private';

// Every path this API answers, for telling 405 (known path, wrong method) from 404.
const KNOWN_PATHS = new Set([
  '/config',
  '/auth/session',
  '/auth/login',
  '/auth/signup',
  '/auth/email/verify',
  '/auth/email/verify/resend',
  '/auth/password/request',
  '/auth/password/reset',
  '/auth/reauthenticate',
  '/auth/provider/redirect',
  '/auth/provider/token',
  '/auth/provider/signup',
  '/account/password/change',
  '/account/email',
  '/account/providers',
  '/account/providers/disconnect',
  '/socialaccount/providers/connect',
]);

function envelope(
  reply: FastifyReply,
  status: number,
  body: { data?: unknown; meta?: unknown; errors?: unknown[] } = {},
) {
  const out: Record<string, unknown> = { status };
  if (body.data !== undefined) out.data = body.data;
  if (body.meta !== undefined) out.meta = body.meta;
  if (body.errors?.length) out.errors = body.errors;
  return reply.status(status).header('Cache-Control', NEVER_CACHE).send(out);
}

/** Where a connected calendar's page is, when a client gives no callback_url. */
const CONNECTIONS_PAGE = '/accounts/3rdparty/';
const CALLBACK_URL_MAX = 2000;

export default async function allauthRoutes(
  app: FastifyInstance,
  { accounts, calendar, publicUrl }: { accounts: AccountsService; calendar: CalendarService; publicUrl: string },
) {
  const ctx = (request: FastifyRequest) => ({ ip: request.ip });
  const nowSec = () => Date.now() / 1000;

  function flows(data: SessionData | undefined): TFlow[] {
    const list: TFlow[] = [{ id: 'login' }, { id: 'signup' }];
    if (data?.pendingVerify) list.push({ id: 'verify_email', is_pending: true });
    return list;
  }

  const authenticated = (reply: FastifyReply, user: UserRow, methods: AuthMethodRecord[]) =>
    envelope(reply, 200, { data: { user: accounts.serializeUser(user), methods }, meta: { is_authenticated: true } });

  // `session_ended` is additive: allauth clients ignore it; this web app says why the person was signed out.
  const unauthenticated = (reply: FastifyReply, data?: SessionData) =>
    envelope(reply, 401, {
      data: { flows: flows(data) },
      meta: data?.ended ? { is_authenticated: false, session_ended: data.ended } : { is_authenticated: false },
    });

  /** 401 flows unless signed in; narrows request.user. */
  function requireUser(request: FastifyRequest): UserRow {
    if (!request.user) throw new AccountError(401);
    return request.user;
  }

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AccountError) {
      if (error.status === 401) return unauthenticated(reply, request.session?.data);
      return envelope(reply, error.status, { errors: error.errors });
    }
    if (error instanceof CsrfError)
      return envelope(reply, 403, { errors: [{ code: 'csrf_failed', message: error.message }] });
    // Refused before any handler ran (a body nested too deeply): the client's fault, in allauth's shape.
    if (error instanceof AppError && error.status < 500)
      return envelope(reply, error.status, { errors: [{ code: 'invalid', message: error.message }] });
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.name === 'SyntaxError') {
      return envelope(reply, 400, { errors: [{ code: 'invalid', message: 'Invalid JSON.' }] });
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'account request failed');
    return envelope(reply, status);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? '').replace(/^\/_allauth\/browser\/v1/, '').replace(/\/$/, '');
    return envelope(reply, KNOWN_PATHS.has(path) ? 405 : 404);
  });

  // Forms only come from the provider-redirect form post.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const body = (request: FastifyRequest) =>
    request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};

  app.get('/config', async (request, reply) =>
    envelope(reply, 200, {
      data: {
        account: {
          login_methods: ['email'],
          is_open_for_signup: true,
          email_verification_by_code_enabled: false,
          login_by_code_enabled: false,
          password_reset_by_code_enabled: false,
          authentication_method: 'email',
        },
        socialaccount: { providers: enabledProviders() },
      },
      meta: { csrf_token: request.csrfSecret },
    }),
  );

  app.get('/auth/session', async (request, reply) => {
    if (!request.user) return unauthenticated(reply, request.session?.data);
    return authenticated(reply, request.user, request.session?.data.methods ?? []);
  });

  app.delete('/auth/session', async (request, reply) => {
    await endSession(request, reply);
    return unauthenticated(reply);
  });

  app.post('/auth/login', async (request, reply) => {
    if (request.user) return envelope(reply, 409);
    const outcome = await accounts.login(body(request), ctx(request));
    if (outcome.kind === 'inactive') return unauthenticated(reply);
    if (outcome.kind === 'verify_email') {
      const data: SessionData = { pendingVerify: { userId: outcome.userId, email: outcome.email, at: nowSec() } };
      await saveSession(request, reply, data);
      return unauthenticated(reply, data);
    }
    const methods: AuthMethodRecord[] = [{ method: 'password', at: nowSec(), email: outcome.email }];
    await startSession(request, reply, outcome.user, { methods });
    rotateCsrf(request, reply);
    return authenticated(reply, outcome.user, methods);
  });

  app.post('/auth/signup', async (request, reply) => {
    if (request.user) return envelope(reply, 409);
    const { userId, email } = await accounts.signupAllauth(body(request), ctx(request));
    // Mandatory verification: the new account waits for its email to be confirmed.
    const data: SessionData = { pendingVerify: { userId, email, at: nowSec() } };
    await saveSession(request, reply, data);
    return unauthenticated(reply, data);
  });

  app.get('/auth/email/verify', async (request, reply) => {
    const key = request.headers['x-email-verification-key'];
    const { email, user } = await accounts.checkVerifyKey(typeof key === 'string' ? key : undefined);
    return envelope(reply, 200, {
      data: { email, user: accounts.serializeUser(user) },
      meta: { is_authenticating: Boolean(request.session?.data.pendingVerify) },
    });
  });

  app.post('/auth/email/verify', async (request, reply) => {
    await accounts.confirmVerifyKey(body(request).key);
    if (request.user) return authenticated(reply, request.user, request.session?.data.methods ?? []);
    // Verified, but not signed in: "a status code of 401 does not imply failure".
    if (request.session?.data.pendingVerify)
      await saveSession(request, reply, { ...request.session.data, pendingVerify: undefined });
    return unauthenticated(reply);
  });

  // Link mode: there is no code to resend.
  app.post('/auth/email/verify/resend', async (_request, reply) => envelope(reply, 409));

  app.post('/auth/password/request', async (request, reply) => {
    await accounts.requestPasswordReset(body(request).email, ctx(request));
    return envelope(reply, 200);
  });

  app.get('/auth/password/reset', async (request, reply) => {
    const key = request.headers['x-password-reset-key'];
    const user = await accounts.checkResetKey(typeof key === 'string' ? key : undefined);
    return envelope(reply, 200, { data: { user: accounts.serializeUser(user) } });
  });

  app.post('/auth/password/reset', async (request, reply) => {
    const user = await accounts.resetPassword(body(request), ctx(request));
    // Every session of the account ends (each is told why); the person signs in with the new password.
    await request.server.sessionOptions.sessions.destroyAllFor(user.id, undefined, 'password_changed');
    if (request.session?.user?.id === user.id) await endSession(request, reply);
    return unauthenticated(reply, request.session?.data);
  });

  app.post('/auth/reauthenticate', async (request, reply) => {
    const user = requireUser(request);
    await accounts.reauthenticate(user, body(request).password);
    const methods: AuthMethodRecord[] = [
      ...(request.session?.data.methods ?? []),
      { method: 'password', at: nowSec(), reauthenticated: true },
    ];
    await saveSession(request, reply, { ...request.session?.data, methods });
    return authenticated(reply, user, methods);
  });

  app.post('/account/password/change', async (request, reply) => {
    const user = requireUser(request);
    const updated = await accounts.changePassword(user, body(request));
    // This device stays signed in (fresh key); every other session of the account ends, told why.
    await request.server.sessionOptions.sessions.destroyAllFor(user.id, request.session?.id, 'password_changed');
    await startSession(request, reply, updated, request.session?.data ?? {});
    return authenticated(reply, updated, request.session?.data.methods ?? []);
  });

  // ---- email addresses ----
  app.get('/account/email', async (request, reply) =>
    envelope(reply, 200, { data: await accounts.listEmails(requireUser(request)) }),
  );

  app.post('/account/email', async (request, reply) => {
    if (!request.user) return envelope(reply, 409);
    return envelope(reply, 200, { data: await accounts.addEmail(request.user, body(request).email) });
  });

  app.put('/account/email', async (request, reply) => {
    const sent = await accounts.resendEmail(requireUser(request), body(request).email);
    return envelope(reply, sent ? 200 : 403);
  });

  app.patch('/account/email', async (request, reply) =>
    envelope(reply, 200, { data: await accounts.setPrimaryEmail(requireUser(request), body(request)) }),
  );

  app.delete('/account/email', async (request, reply) =>
    envelope(reply, 200, { data: await accounts.removeEmail(requireUser(request), body(request).email) }),
  );

  // ---- third-party accounts: the user's calendar connections ----
  // Sign-in with a provider is not part of Daybook: providers connect calendars (process=connect),
  // so no provider_redirect flow is listed among the sign-in flows.
  function enabledProviders(): TAllauthProvider[] {
    return calendar
      .providers()
      .map((p) => ({ id: p.id, name: p.name, flows: ['provider_redirect'], client_id: p.clientId }));
  }

  async function providerAccounts(userId: number): Promise<TProviderAccount[]> {
    const enabled = new Map(enabledProviders().map((p) => [p.id, p]));
    return (await calendar.accounts(userId)).map((c) => ({
      uid: c.uid,
      display: c.display,
      provider: enabled.get(c.provider) ?? { id: c.provider, name: PROVIDER_NAMES[c.provider], flows: [] },
    }));
  }

  app.get('/account/providers', async (request, reply) => {
    const user = requireUser(request);
    return envelope(reply, 200, { data: await providerAccounts(user.id) });
  });

  const disconnect = async (request: FastifyRequest, reply: FastifyReply) => {
    const user = requireUser(request);
    const b = body(request);
    const errors = [];
    if (request.method === 'DELETE' && (typeof b.provider !== 'string' || !b.provider))
      errors.push(required('provider'));
    if (typeof b.account !== 'string' || !b.account) errors.push(required('account'));
    if (errors.length) throw new AccountError(400, errors);
    const account = b.account as string;
    const accounts = await providerAccounts(user.id);
    // The spec's POST form names only the account; allauth's DELETE names its provider too.
    const match = accounts.find(
      (a) => a.uid === account && (typeof b.provider !== 'string' || a.provider.id === b.provider),
    );
    if (!match || !(await calendar.disconnectAccount(user.id, match.provider.id, match.uid)))
      throw formError('account_not_found', MESSAGES.accountNotFound);
    return envelope(reply, 200, { data: await providerAccounts(user.id) });
  };
  app.delete('/account/providers', disconnect);
  app.post('/account/providers/disconnect', disconnect);

  /** A callback_url as a path on this site: a local path, or a full URL of this site. */
  function callbackPath(value: unknown, fallback = CONNECTIONS_PAGE): string {
    // It is stored with the consent in progress: an address, not a document.
    if (typeof value === 'string' && value.length > CALLBACK_URL_MAX) return fallback;
    if (typeof value === 'string' && value.startsWith(`${publicUrl}/`))
      return localPath(value.slice(publicUrl.length), fallback);
    return localPath(value, fallback);
  }

  // The spec's JSON call: answers the provider's consent address for the client to open.
  app.post('/socialaccount/providers/connect', async (request, reply) => {
    const user = requireUser(request);
    const b = body(request);
    const provider = b.provider;
    if (typeof provider !== 'string' || !provider) throw new AccountError(400, [required('provider')]);
    try {
      const url = await calendar.startConnect(user.id, provider, callbackPath(b.callback_url));
      return envelope(reply, 200, { data: { url } });
    } catch (err) {
      if (err instanceof CalendarError && err.code === 'unknown_provider')
        throw new AccountError(400, [
          { code: 'unknown_provider', message: MESSAGES.unknownProvider, param: 'provider' },
        ]);
      if (err instanceof CalendarError) throw formError(err.code, err.message);
      throw err;
    }
  });

  // A form post: answers with redirects, never JSON, as allauth does in headless-only mode.
  app.post('/auth/provider/redirect', async (request, reply) => {
    const b = body(request);
    // A login attempt has no business on the connections page; allauth falls back to the front page.
    const callback = callbackPath(b.callback_url, b.process === 'connect' ? CONNECTIONS_PAGE : '/');
    const failed = (error: string, process: string) => {
      const target = new URL(callback, 'http://x');
      target.searchParams.set('error', error);
      target.searchParams.set('error_process', process);
      return reply.header('Cache-Control', NEVER_CACHE).redirect(target.pathname + target.search, 302);
    };
    // Only connecting a calendar is supported; signing in with a provider is not.
    if (b.process !== 'connect') return failed('unknown', 'login');
    if (!request.user) return failed('unknown', 'connect');
    const provider = typeof b.provider === 'string' ? b.provider : '';
    try {
      const url = await calendar.startConnect(request.user.id, provider, callback);
      return reply.header('Cache-Control', NEVER_CACHE).redirect(url, 302);
    } catch (err) {
      if (err instanceof CalendarError) return failed(err.code === 'too_many' ? 'too_many' : 'unknown', 'connect');
      throw err;
    }
  });
}
