// django-allauth's headless browser API (/_allauth/browser/v1), wire-compatible: same paths,
// envelope, status codes and error codes, as described in shared/reference/allauth/.
//
// This plugin answers errors, unknown paths and /config; the routes are in groups: the session
// (allauth.session.routes.ts), email addresses (allauth.email.routes.ts), passwords
// (allauth.password.routes.ts) and calendar providers (allauth.providers.routes.ts).
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { CsrfError } from '../../plugins/csrf.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import { AccountError } from './account-error.ts';
import type { AccountsService } from './accounts.service.ts';
import { emailRoutes } from './allauth.email.routes.ts';
import { passwordRoutes } from './allauth.password.routes.ts';
import { enabledProviders, providerRoutes } from './allauth.providers.routes.ts';
import { createReplies, envelope } from './allauth.reply.ts';
import { sessionRoutes } from './allauth.session.routes.ts';

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

export default async function allauthRoutes(
  app: FastifyInstance,
  { accounts, calendar, publicUrl }: { accounts: AccountsService; calendar: CalendarService; publicUrl: string },
) {
  const replies = createReplies(accounts);
  const { unauthenticated } = replies;

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
        socialaccount: { providers: enabledProviders(calendar) },
      },
      meta: { csrf_token: request.csrfSecret },
    }),
  );

  // Called, not registered: the groups' routes share this plugin's error, not-found and form handling.
  sessionRoutes(app, { accounts, replies });
  emailRoutes(app, { accounts, replies });
  passwordRoutes(app, { accounts, replies });
  providerRoutes(app, { calendar, publicUrl });
}
