// allauth's third-party accounts: the user's calendar connections.
// Sign-in with a provider is not part of Daybook: providers connect calendars (process=connect),
// so no provider_redirect flow is listed among the sign-in flows.
import type { TAllauthProvider, TProviderAccount } from '@daybook/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { localPath } from '../../lib/redirect.ts';
import { PROVIDER_NAMES } from '../calendar/calendar.service.ts';
import { CalendarError, type CalendarService } from '../calendar/calendar.types.ts';
import { AccountError, formError, MESSAGES, required } from './account-error.ts';
import { body, envelope, NEVER_CACHE, requireUser } from './allauth.reply.ts';

/** Where a connected calendar's page is, when a client gives no callback_url. */
const CONNECTIONS_PAGE = '/accounts/3rdparty/';
const CALLBACK_URL_MAX = 2000;

export function enabledProviders(calendar: CalendarService): TAllauthProvider[] {
  return calendar
    .providers()
    .map((p) => ({ id: p.id, name: p.name, flows: ['provider_redirect'], client_id: p.clientId }));
}

export function providerRoutes(
  app: FastifyInstance,
  { calendar, publicUrl }: { calendar: CalendarService; publicUrl: string },
) {
  async function providerAccounts(userId: number): Promise<TProviderAccount[]> {
    const enabled = new Map(enabledProviders(calendar).map((p) => [p.id, p]));
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
