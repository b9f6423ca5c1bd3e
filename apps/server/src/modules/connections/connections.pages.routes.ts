// The pages under /accounts/3rdparty/: the list of connections, the ICS form, and removing one.
// Every post is answered by a redirect back to the page, or by the page again with the form's errors.
import { CALENDAR_CONNECTIONS_MAX, ZIcsConnectForm } from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PROVIDER_NAMES } from '../calendar/calendar.service.ts';
import { CalendarError, type CalendarService } from '../calendar/calendar.types.ts';
import {
  type FormErrors,
  type IcsForm,
  type Notice,
  PAGE,
  present,
  type Stylesheet,
  type Views,
} from './connections.view.ts';

const INT4_MAX = 2_147_483_647;

/** allauth's `?error=` codes after a provider handshake; anything else gets the generic words. */
const CONNECT_ERRORS: Record<string, string> = {
  cancelled: 'You cancelled the connection.',
  denied: 'The provider did not allow access.',
  access_denied: 'The provider did not allow access.',
  connected_other: 'That account is already connected to another Daybook user.',
  too_many: `You can connect at most ${CALENDAR_CONNECTIONS_MAX} calendars. Remove one to add another.`,
};
const CONNECT_FAILED = 'The connection did not work. Please try again.';

export interface PagesDeps {
  calendar: CalendarService;
  stylesheet: Stylesheet;
  views: Views;
}

/** A query value as one string (a repeated parameter counts by its first value). */
function queryValue(request: FastifyRequest, key: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[key];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
}

/** The notice a redirect back to the page asked for; never the query's own text. */
function noticeFrom(request: FastifyRequest): Notice | null {
  const error = queryValue(request, 'error');
  if (error !== undefined)
    return {
      kind: 'error',
      text: Object.hasOwn(CONNECT_ERRORS, error) ? (CONNECT_ERRORS[error] as string) : CONNECT_FAILED,
    };
  if (queryValue(request, 'added') === '1') return { kind: 'success', text: 'The calendar was added.' };
  if (queryValue(request, 'removed') === '1') return { kind: 'success', text: 'The calendar was removed.' };
  const connected = queryValue(request, 'connected');
  if (connected === 'google' || connected === 'microsoft')
    return { kind: 'success', text: `Your ${PROVIDER_NAMES[connected]} calendar is connected.` };
  return null;
}

/** The connection id in a path, or null when it cannot be one (PostgreSQL int4, positive). */
function connectionId(raw: string): number | null {
  if (!/^[1-9]\d{0,9}$/.test(raw)) return null;
  const id = Number(raw);
  return id <= INT4_MAX ? id : null;
}

const loginUrl = (next: string) => `/auth/login?next=${encodeURIComponent(next)}`;

/** Registered under the /accounts/3rdparty prefix. */
export async function connectionsPages(pages: FastifyInstance, deps: PagesDeps) {
  // Under this prefix only, so every other path keeps the app's own not-found answer.
  pages.setNotFoundHandler((request, reply) => deps.views.renderError(request, reply, 404));
  listRoutes(pages, deps);
  icsRoutes(pages, deps);
  removeRoutes(pages, deps);
}

/** The page's stylesheet and the page itself, with the notice a redirect asked for. */
function listRoutes(pages: FastifyInstance, { stylesheet, views }: PagesDeps) {
  pages.get('/style.css', async (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(stylesheet.css),
  );

  pages.get('/', async (request, reply) => {
    if (!request.user) return reply.redirect(loginUrl(PAGE), 302);
    return views.renderPage(request, reply, request.user, { notice: noticeFrom(request) });
  });
}

/** Adding an ICS calendar by its address; refused forms come back with their errors. */
function icsRoutes(pages: FastifyInstance, { calendar, views }: PagesDeps) {
  pages.post('/ics/', async (request, reply) => {
    if (!request.user) return reply.redirect(loginUrl(PAGE), 303);
    const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
    const typed: IcsForm = {
      url: typeof body.url === 'string' ? body.url : '',
      name: typeof body.name === 'string' ? body.name : '',
    };
    const parsed = ZIcsConnectForm.safeParse({ url: typed.url, name: typed.name });
    if (!parsed.success) {
      const errors: FormErrors = {};
      for (const issue of parsed.error.issues) {
        const field = issue.path[0] === 'name' ? 'name' : 'url';
        errors[field] ??= issue.message;
      }
      return views.renderPage(request, reply, request.user, { status: 400, form: typed, errors });
    }
    try {
      await calendar.addIcs(request.user.id, parsed.data.url, parsed.data.name || undefined);
    } catch (err) {
      if (!(err instanceof CalendarError)) throw err;
      const errors: FormErrors = err.code === 'too_many' ? { form: err.message } : { url: err.message };
      return views.renderPage(request, reply, request.user, { status: 400, form: typed, errors });
    }
    return reply.redirect(`${PAGE}?added=1`, 303);
  });
}

/** Removing a connection: a page to confirm, and the post that does it. */
function removeRoutes(pages: FastifyInstance, { calendar, views }: PagesDeps) {
  pages.get<{ Params: { id: string } }>('/:id/remove/', async (request, reply) => {
    if (!request.user) return reply.redirect(loginUrl(PAGE), 302);
    const id = connectionId(request.params.id);
    const connection = id === null ? null : await calendar.get(request.user.id, id);
    if (!connection) return views.renderError(request, reply, 404);
    const item = present(connection, new Set(), new Date(), 'UTC');
    return views.render(request, reply, 200, 'remove', {
      title: `Remove ${connection.display}`,
      onConnections: true,
      connection: { ...item, provider: connection.provider },
    });
  });

  pages.post<{ Params: { id: string } }>('/:id/remove/', async (request, reply) => {
    if (!request.user) return reply.redirect(loginUrl(PAGE), 303);
    const id = connectionId(request.params.id);
    const removed = id !== null && (await calendar.disconnect(request.user.id, id));
    if (!removed) return views.renderError(request, reply, 404);
    return reply.redirect(`${PAGE}?removed=1`, 303);
  });
}
