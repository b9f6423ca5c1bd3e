// /accounts/3rdparty/: the server-rendered Calendar Connections page, modelled on django-allauth's
// "Account Connections": plain links and form posts, no scripts, each post answered by a redirect.
//
// This plugin sets up the views, form bodies, headers and error pages; the pages themselves are in
// connections.pages.routes.ts and how they look in connections.view.ts.
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { CsrfError } from '../../plugins/csrf.ts';
import { endSession } from '../accounts/index.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import { connectionsPages } from './connections.pages.routes.ts';
import { createViews, pageStylesheet, VIEWS, WEB_STYLES } from './connections.view.ts';

const FORM_BODY_LIMIT = 8 * 1024;

export default async function connectionsRoutes(
  app: FastifyInstance,
  { calendar, webStyles = WEB_STYLES }: { calendar: CalendarService; webStyles?: string },
) {
  // Read once when the app starts; a missing file stops the start with its name.
  const stylesheet = pageStylesheet(webStyles);

  // Eta escapes every <%= %> interpolation; only the layout's body (already rendered) is raw.
  await app.register(view, {
    engine: { eta: new Eta({ autoEscape: true }) },
    root: VIEWS,
    options: { autoEscape: true },
  });

  // Forms come as urlencoded bodies; fields stay strings (a repeated field keeps its last value).
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );

  // Chrome and Safari hold the redirect that follows a form post to the page's form-action, so the
  // provider buttons (a post to us, answered by a redirect to the consent page) need its origin there.
  app.addHook('onSend', async (_request, reply, payload) => {
    const origins = [...new Set(calendar.providers().map((p) => p.consentOrigin))];
    const csp = reply.getHeader('content-security-policy');
    if (origins.length && typeof csp === 'string')
      reply.header(
        'Content-Security-Policy',
        csp.replace("form-action 'self'", `form-action 'self' ${origins.join(' ')}`),
      );
    return payload;
  });

  const views = createViews(calendar, stylesheet);

  // Pages answer pages, never the API's JSON: a stale form, a bad body or our own failure alike.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    let status: number;
    if (error instanceof CsrfError) status = 403;
    else if (error instanceof AppError) status = error.status;
    else if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) status = error.statusCode;
    else status = 500;
    if (status >= 500) request.log.error({ err: error }, 'connections page failed');
    else request.log.debug({ err: error }, 'connections request refused');
    return views.renderError(request, reply, status);
  });

  // Signing out without the app's script: the same as DELETE /_allauth/browser/v1/auth/session.
  app.post('/accounts/logout/', async (request, reply) => {
    await endSession(request, reply);
    return reply.redirect('/', 303);
  });

  await app.register(async (pages) => connectionsPages(pages, { calendar, stylesheet, views }), {
    prefix: '/accounts/3rdparty',
  });
}
