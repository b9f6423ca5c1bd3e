// Calendar connections (Google and Microsoft by OAuth 2.0 with PKCE, any ICS address) and a user's
// events for a day. Tokens and ICS addresses are sealed at rest and never leave this module.
//
// The parts, each in its own file: the OAuth providers (calendar.providers.ts), connecting one
// (calendar.oauth.ts), its tokens (calendar.tokens.ts), ICS subscriptions (calendar.subscriptions.ts),
// the stored connections (calendar.connections.ts) and a day's events (calendar.events.ts).
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { SafeFetch } from '../../lib/safe-fetch.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { createCalendarCaches } from './calendar.cache.ts';
import { createCalendarConnections } from './calendar.connections.ts';
import { createCalendarEvents } from './calendar.events.ts';
import { createCalendarOAuth } from './calendar.oauth.ts';
import { createOAuthProviders, type OAuthProvidersDeps } from './calendar.providers.ts';
import type { CalendarRepo } from './calendar.repo.ts';
import { createIcsSubscriptions } from './calendar.subscriptions.ts';
import { createCalendarTokens } from './calendar.tokens.ts';
import type { CalendarService, OAuthEndpoints, OAuthProviderId } from './calendar.types.ts';
import type { IcsReader } from './ics-reader.ts';

export { DAY_EVENTS_MAX } from './calendar.events.ts';
export { MESSAGES, PROVIDER_NAMES } from './calendar.messages.ts';
export { defaultEndpoints } from './calendar.providers.ts';
export { icsAddress } from './calendar.subscriptions.ts';

const DEFAULT_CACHE_MS = 5 * 60_000;

export interface CalendarServiceDeps {
  repo: CalendarRepo;
  /** Seals tokens and ICS addresses. */
  box: SecretBox;
  clock: Clock;
  log: FastifyBaseLogger;
  publicUrl: string;
  clients: OAuthProvidersDeps['clients'];
  /** Test configuration only: local fakes of the providers. */
  endpoints?: Partial<Record<OAuthProviderId, OAuthEndpoints>>;
  /** The SSRF-safe fetcher (ICS addresses are the user's choice). */
  safeFetch: SafeFetch;
  /** Parses ICS calendars off the event loop. */
  icsReader: IcsReader;
  /** One ICS read in all, waiting for a fetch slot included (default 30 s). */
  icsDeadlineMs?: number;
  /** How long a connection's events (and a parsed ICS calendar) are reused. */
  cacheMs?: number;
  /** Token and calendar API requests. */
  timeoutMs?: number;
}

export function createCalendarService(deps: CalendarServiceDeps): CalendarService {
  const { repo, box, clock, log } = deps;
  const timeoutMs = deps.timeoutMs ?? 15_000;
  const providers = createOAuthProviders({
    publicUrl: deps.publicUrl,
    clients: deps.clients,
    endpoints: deps.endpoints,
    timeoutMs,
  });
  const caches = createCalendarCaches({
    ttlMs: deps.cacheMs ?? DEFAULT_CACHE_MS,
    now: () => clock.now().getTime(),
  });
  const { forget } = caches;
  const connections = createCalendarConnections({ repo, box, clock, log, providers, timeoutMs, forget });
  const oauth = createCalendarOAuth({ repo, box, clock, log, providers, timeoutMs, save: connections.save });
  const tokens = createCalendarTokens({ repo, box, clock, providers, timeoutMs, forget });
  const ics = createIcsSubscriptions({
    repo,
    box,
    clock,
    safeFetch: deps.safeFetch,
    icsReader: deps.icsReader,
    deadlineMs: deps.icsDeadlineMs ?? 30_000,
    cache: caches.ics,
    save: connections.save,
  });
  const events = createCalendarEvents({ repo, clock, log, cache: caches.events, forget, providers, tokens, ics });

  return {
    providers: oauth.providers,
    list: connections.list,
    accounts: connections.accounts,
    get: connections.get,
    startConnect: oauth.startConnect,
    finishConnect: oauth.finishConnect,
    addIcs: ics.add,
    disconnect: connections.disconnect,
    disconnectAccount: connections.disconnectAccount,
    eventsForDay: events.eventsForDay,
  };
}
