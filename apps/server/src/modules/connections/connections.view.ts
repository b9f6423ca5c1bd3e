// How the Calendar Connections pages look: their stylesheet, the layout's data, the error pages and
// each connection as the page shows it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CALENDAR_CONNECTIONS_MAX, type TCalendarConnection } from '@daybook/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { REPO_ROOT } from '../../config.ts';
import type { UserRow } from '../accounts/index.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';

export const PAGE = '/accounts/3rdparty/';
const PROVIDER_ACTION = '/_allauth/browser/v1/auth/provider/redirect';
export const VIEWS = path.join(import.meta.dirname, 'views');
/** The web app's own stylesheets this page's markup uses, in index.css's order: one source for both. */
export const WEB_STYLES = path.join(REPO_ROOT, 'apps/web/src/styles');
const WEB_STYLE_FILES = ['tokens.css', 'base.css', 'components.css', 'layout.css', 'auth.css'];

export type Notice = { kind: 'success' | 'error'; text: string };
export type IcsForm = { url: string; name: string };
export type FormErrors = { url?: string; name?: string; form?: string };
export type Stylesheet = { css: Buffer; url: string };

/** "Google Calendar and Microsoft Outlook are not enabled on this server.", or null when both are. */
function notEnabled(enabled: Set<string>): string | null {
  const off = (['google', 'microsoft'] as const).filter((id) => !enabled.has(id)).map((id) => OAUTH_NAMES[id]);
  if (!off.length) return null;
  return `${off.join(' and ')} ${off.length === 1 ? 'is' : 'are'} not enabled on this server. Ask whoever runs this Daybook to turn ${off.length === 1 ? 'it' : 'them'} on.`;
}

const OAUTH_NAMES = { google: 'Google Calendar', microsoft: 'Microsoft Outlook' } as const;

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

/**
 * The page's stylesheet: the web app's source CSS (plain CSS, no build step needed) followed by the
 * few rules only this page has. Its hash names the URL, so a changed file is fetched anew.
 */
export function pageStylesheet(webStyles: string): Stylesheet {
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

export type Views = ReturnType<typeof createViews>;

/** Renders the pages (with @fastify/view, registered on the app) in the layout. */
export function createViews(calendar: CalendarService, stylesheet: Stylesheet) {
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

  /** The Calendar Connections page itself: the user's connections, the provider buttons, the ICS form. */
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
        label: connections.some((c) => c.provider === p.id) ? `Connect another ${p.name} account` : `Connect ${p.name}`,
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

  return { render, renderError, renderPage };
}

/** One connection as the page shows it. */
export function present(c: TCalendarConnection, enabled: Set<string>, now: Date, timeZone: string) {
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
