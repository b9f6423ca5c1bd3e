// /accounts/3rdparty/: the server-rendered Calendar Connections page, modelled on django-allauth's
// "Account Connections": plain links and form posts, no scripts, each post answered by a redirect.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CALENDAR_CONNECTIONS_MAX, type TCalendarConnection, ZIcsConnectForm } from '@daybook/contracts';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { REPO_ROOT } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { CsrfError } from '../../plugins/csrf.ts';
import { endSession } from '../../plugins/session.ts';
import type { UserRow } from '../accounts/accounts.repo.ts';
import { PROVIDER_NAMES } from '../calendar/calendar.service.ts';

/** "Google Calendar and Microsoft Outlook are not enabled on this server.", or null when both are. */
function notEnabled(enabled: Set<string>): string | null {
  const off = (['google', 'microsoft'] as const).filter((id) => !enabled.has(id)).map((id) => OAUTH_NAMES[id]);
  if (!off.length) return null;
  return `${off.join(' and ')} ${off.length === 1 ? 'is' : 'are'} not enabled on this server. Ask whoever runs this Daybook to turn ${off.length === 1 ? 'it' : 'them'} on.`;
}

const OAUTH_NAMES = { google: 'Google Calendar', microsoft: 'Microsoft Outlook' } as const;

import { CalendarError, type CalendarService } from '../calendar/calendar.types.ts';

const PAGE = '/accounts/3rdparty/';
const PROVIDER_ACTION = '/_allauth/browser/v1/auth/provider/redirect';
const VIEWS = path.join(import.meta.dirname, 'views');
/** The web app's own stylesheets this page's markup uses, in index.css's order: one source for both. */
const WEB_STYLES = path.join(REPO_ROOT, 'apps/web/src/styles');
const WEB_STYLE_FILES = ['tokens.css', 'base.css', 'components.css', 'layout.css', 'auth.css'];
const INT4_MAX = 2_147_483_647;
const FORM_BODY_LIMIT = 8 * 1024;

/** allauth's `?error=` codes after a provider handshake; anything else gets the generic words. */
const CONNECT_ERRORS: Record<string, string> = {
  cancelled: 'You cancelled the connection.',
  denied: 'The provider did not allow access.',
  access_denied: 'The provider did not allow access.',
  connected_other: 'That account is already connected to another Daybook user.',
  too_many: `You can connect at most ${CALENDAR_CONNECTIONS_MAX} calendars. Remove one to add another.`,
};
const CONNECT_FAILED = 'The connection did not work. Please try again.';

type Notice = { kind: 'success' | 'error'; text: string };
type IcsForm = { url: string; name: string };
type FormErrors = { url?: string; name?: string; form?: string };

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

/** "5 minutes ago" within a week, else the date in the user's time zone. */
function syncedText(at: Date, now: Date, timeZone: string) {
  const full = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(at);
  const seconds = Math.round((now.getTime() - at.getTime()) / 1000);
  let text: string;
  if (seconds < 0 || seconds >= 7 * 86400) {
    text = `on ${new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone }).format(at)}`;
  } else if (seconds < 60) {
    text = 'just now';
  } else {
    const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
    if (seconds < 3600) text = rtf.format(-Math.floor(seconds / 60), 'minute');
    else if (seconds < 86400) text = rtf.format(-Math.floor(seconds / 3600), 'hour');
    else text = rtf.format(-Math.floor(seconds / 86400), 'day');
  }
  return { iso: at.toISOString(), text, full };
}

function validTimeZone(zone: string | null | undefined): string {
  if (!zone) return 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

/** The connection id in a path, or null when it cannot be one (PostgreSQL int4, positive). */
function connectionId(raw: string): number | null {
  if (!/^[1-9]\d{0,9}$/.test(raw)) return null;
  const id = Number(raw);
  return id <= INT4_MAX ? id : null;
}

const loginUrl = (next: string) => `/auth/login?next=${encodeURIComponent(next)}`;

/**
 * The page's stylesheet: the web app's source CSS (plain CSS, no build step needed) followed by the
 * few rules only this page has. Its hash names the URL, so a changed file is fetched anew.
 */
function pageStylesheet(webStyles: string): { css: Buffer; url: string } {
  const files = [...WEB_STYLE_FILES.map((name) => path.join(webStyles, name)), path.join(VIEWS, 'connections.css')];
  const parts = files.map((file) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`The Calendar Connections page cannot read its stylesheet ${file}: ${(err as Error).message}`);
    }
  });
  const css = Buffer.concat(parts.flatMap((part) => [part, Buffer.from('\n')]));
  return { css, url: `${PAGE}style.css?v=${createHash('sha256').update(css).digest('hex').slice(0, 12)}` };
}

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

  const layoutData = (request: FastifyRequest, title: string) => {
    const user = request.user;
    return {
      title,
      cssUrl: stylesheet.url,
      csrf: request.csrfSecret,
      year: new Date().getFullYear(),
      user: user ? { email: user.email, initial: (user.email.trim()[0] ?? '?').toUpperCase() } : null,
      onConnections: false,
    };
  };

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    template: string,
    data: Record<string, unknown>,
  ) {
    const html = await reply.viewAsync(template, { ...layoutData(request, String(data.title)), ...data });
    return reply
      .status(status)
      .header('Cache-Control', 'private, no-store')
      .type('text/html; charset=utf-8')
      .send(html);
  }

  const ERROR_PAGES: Record<number, { title: string; heading: string; message: string }> = {
    400: {
      title: 'Bad request',
      heading: 'The form could not be read',
      message: 'Go back, reload the page and try again.',
    },
    403: {
      title: 'Form expired',
      heading: 'This form has expired',
      message: 'Go back, reload the page and try again.',
    },
    404: {
      title: 'Page not found',
      heading: 'Page not found',
      message: 'There is no such page or calendar here. It may have been removed already.',
    },
    413: {
      title: 'Too large',
      heading: 'That was too much',
      message: 'What you sent is too large. Go back and shorten it.',
    },
    500: {
      title: 'Something went wrong',
      heading: 'Sorry, something went wrong',
      message: 'Something went wrong on our side. Please try again in a moment.',
    },
  };

  async function renderError(request: FastifyRequest, reply: FastifyReply, status: number) {
    const page = ERROR_PAGES[status] ?? ERROR_PAGES[status < 500 ? 400 : 500];
    try {
      return await render(request, reply, status, 'error', { ...page });
    } catch (err) {
      request.log.error({ err }, 'connections error page failed');
      return reply
        .status(status)
        .type('text/plain; charset=utf-8')
        .send(page?.message ?? 'Error');
    }
  }

  // Pages answer pages, never the API's JSON: a stale form, a bad body or our own failure alike.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    let status: number;
    if (error instanceof CsrfError) status = 403;
    else if (error instanceof AppError) status = error.status;
    else if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) status = error.statusCode;
    else status = 500;
    if (status >= 500) request.log.error({ err: error }, 'connections page failed');
    else request.log.debug({ err: error }, 'connections request refused');
    return renderError(request, reply, status);
  });

  // Signing out without the app's script: the same as DELETE /_allauth/browser/v1/auth/session.
  app.post('/accounts/logout/', async (request, reply) => {
    await endSession(request, reply);
    return reply.redirect('/', 303);
  });

  await app.register(
    async (pages) => {
      // Under this prefix only, so every other path keeps the app's own not-found answer.
      pages.setNotFoundHandler((request, reply) => renderError(request, reply, 404));

      pages.get('/style.css', async (_request, reply) =>
        reply.header('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(stylesheet.css),
      );

      async function renderPage(
        request: FastifyRequest,
        reply: FastifyReply,
        user: UserRow,
        opts: { status?: number; form?: IcsForm; errors?: FormErrors; notice?: Notice | null } = {},
      ) {
        const enabled = calendar.providers();
        const enabledIds = new Set<string>(enabled.map((p) => p.id));
        const connections = await calendar.list(user.id);
        const now = new Date();
        const zone = validTimeZone(user.timeZone);
        const items = connections.map((c) => present(c, enabledIds, now, zone));
        return render(request, reply, opts.status ?? 200, 'connections', {
          title: 'Calendar Connections',
          onConnections: true,
          notice: opts.notice ?? null,
          connections: items,
          providers: enabled.map((p) => ({
            id: p.id,
            // Connecting a second account of a provider is possible; say so rather than repeat the first label.
            label: connections.some((c) => c.provider === p.id)
              ? `Connect another ${p.name} account`
              : `Connect ${p.name}`,
          })),
          // Named one by one, in the user's words: what is not enabled on this server.
          notEnabled: notEnabled(enabledIds),
          providerAction: PROVIDER_ACTION,
          callbackUrl: PAGE,
          atMax: connections.length >= CALENDAR_CONNECTIONS_MAX,
          max: CALENDAR_CONNECTIONS_MAX,
          form: opts.form ?? { url: '', name: '' },
          errors: opts.errors ?? {},
        });
      }

      pages.get('/', async (request, reply) => {
        if (!request.user) return reply.redirect(loginUrl(PAGE), 302);
        return renderPage(request, reply, request.user, { notice: noticeFrom(request) });
      });

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
          return renderPage(request, reply, request.user, { status: 400, form: typed, errors });
        }
        try {
          await calendar.addIcs(request.user.id, parsed.data.url, parsed.data.name || undefined);
        } catch (err) {
          if (!(err instanceof CalendarError)) throw err;
          const errors: FormErrors = err.code === 'too_many' ? { form: err.message } : { url: err.message };
          return renderPage(request, reply, request.user, { status: 400, form: typed, errors });
        }
        return reply.redirect(`${PAGE}?added=1`, 303);
      });

      pages.get<{ Params: { id: string } }>('/:id/remove/', async (request, reply) => {
        if (!request.user) return reply.redirect(loginUrl(PAGE), 302);
        const id = connectionId(request.params.id);
        const connection = id === null ? null : await calendar.get(request.user.id, id);
        if (!connection) return renderError(request, reply, 404);
        const item = present(connection, new Set(), new Date(), 'UTC');
        return render(request, reply, 200, 'remove', {
          title: `Remove ${connection.display}`,
          onConnections: true,
          connection: { ...item, provider: connection.provider },
        });
      });

      pages.post<{ Params: { id: string } }>('/:id/remove/', async (request, reply) => {
        if (!request.user) return reply.redirect(loginUrl(PAGE), 303);
        const id = connectionId(request.params.id);
        const removed = id !== null && (await calendar.disconnect(request.user.id, id));
        if (!removed) return renderError(request, reply, 404);
        return reply.redirect(`${PAGE}?removed=1`, 303);
      });
    },
    { prefix: '/accounts/3rdparty' },
  );
}

/** One connection as the page shows it. */
function present(c: TCalendarConnection, enabled: Set<string>, now: Date, timeZone: string) {
  const needsReconnect = c.status === 'needs_reconnect';
  const canReconnect = needsReconnect && c.provider !== 'ics' && enabled.has(c.provider);
  const providerName = c.provider_name;
  let reconnectNote = '';
  if (needsReconnect) {
    if (c.provider === 'ics') reconnectNote = 'Daybook cannot read this address any more. Remove it and add it again.';
    else if (canReconnect)
      reconnectNote = `${providerName} no longer accepts Daybook's access. Reconnect to give it again.`;
    else
      reconnectNote = `${providerName} no longer accepts Daybook's access, and ${providerName} is not set up on this Daybook any more to reconnect it.`;
  }
  return {
    id: c.id,
    providerName,
    display: c.display,
    needsReconnect,
    reconnect: canReconnect ? c.provider : null,
    reconnectNote,
    synced: c.last_synced ? syncedText(new Date(c.last_synced), now, timeZone) : null,
    lastError: c.last_error,
    removeUrl: `${PAGE}${c.id}/remove/`,
  };
}
