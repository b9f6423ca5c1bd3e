// Connecting a Google or Microsoft calendar: OAuth 2.0 with PKCE, from the consent address to the
// callback's code exchange, with the state kept (sealed verifier, hashed state) in the database.
import { createHash } from 'node:crypto';
import { CALENDAR_CONNECTIONS_MAX } from '@daybook/contracts';
import { CodeChallengeMethod, generateCodeVerifier, generateState } from 'arctic';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { type CalendarConnections, presentConnection } from './calendar.connections.ts';
import { MESSAGES, PROVIDER_NAMES } from './calendar.messages.ts';
import {
  EXTRA_AUTHORIZE_PARAMS,
  expiresAtOf,
  type OAuthProviders,
  revokeToken,
  SCOPES,
  transient,
} from './calendar.providers.ts';
import type { CalendarRepo, ConnectionRow } from './calendar.repo.ts';
import { type OAuthSecret, openTokens } from './calendar.secrets.ts';
import { withTimeout } from './calendar.timeout.ts';
import {
  CalendarError,
  type CalendarService,
  type ConnectOutcome,
  type EnabledProvider,
  type OAuthProviderId,
} from './calendar.types.ts';

const STATE_TTL_MS = 10 * 60_000;
/** Consents one user may have in progress (several tabs); older ones are dropped. */
const STATES_PER_USER = 5;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export interface CalendarOAuthDeps {
  repo: CalendarRepo;
  box: SecretBox;
  clock: Clock;
  log: FastifyBaseLogger;
  providers: OAuthProviders;
  /** Token requests. */
  timeoutMs: number;
  /** Stores the connection the handshake made. */
  save: CalendarConnections['save'];
}

export function createCalendarOAuth(
  deps: CalendarOAuthDeps,
): Pick<CalendarService, 'providers' | 'startConnect' | 'finishConnect'> {
  const { repo, box, clock, log, providers: oauth, timeoutMs, save } = deps;
  const nowMs = () => clock.now().getTime();

  function openTokensOrNull(row: ConnectionRow): OAuthSecret | null {
    try {
      return openTokens(box, row);
    } catch {
      return null;
    }
  }

  return {
    providers(): EnabledProvider[] {
      return [...oauth.entries()].map(([id, p]) => ({
        id,
        name: PROVIDER_NAMES[id],
        clientId: p.clientId,
        consentOrigin: new URL(p.endpoints.authorizeUrl).origin,
      }));
    },

    async startConnect(userId, providerId, callbackUrl) {
      const provider = oauth.get(providerId as OAuthProviderId);
      if (!provider) throw new CalendarError('unknown_provider', MESSAGES.unknownProvider);
      const existing = await repo.list(userId);
      // At the cap only a reconnect makes sense; say so before the user goes through consent.
      if (existing.length >= CALENDAR_CONNECTIONS_MAX && !existing.some((c) => c.provider === providerId))
        throw new CalendarError('too_many', MESSAGES.tooMany);
      const state = generateState();
      const verifier = generateCodeVerifier();
      await repo.pruneStates(clock.now());
      await repo.saveState(
        sha256(state),
        {
          userId,
          provider: providerId,
          verifier: box.seal(verifier),
          callbackUrl,
          expiresAt: new Date(nowMs() + STATE_TTL_MS),
        },
        STATES_PER_USER,
      );
      const url = provider.client.createAuthorizationURLWithPKCE(
        provider.endpoints.authorizeUrl,
        state,
        CodeChallengeMethod.S256,
        verifier,
        SCOPES[providerId as OAuthProviderId],
      );
      for (const [k, v] of Object.entries(EXTRA_AUTHORIZE_PARAMS[providerId as OAuthProviderId]))
        url.searchParams.set(k, v);
      return url.href;
    },

    async finishConnect(userId, providerId, params): Promise<ConnectOutcome> {
      const fallback = '/accounts/3rdparty/';
      const fail = (callbackUrl: string, error: Extract<ConnectOutcome, { ok: false }>['error']): ConnectOutcome => ({
        ok: false,
        callbackUrl,
        error,
      });
      if (!params.state || userId === null) return fail(fallback, 'unknown');
      // Single use: a replayed state finds nothing. Only the user who started it takes it: a link
      // opened in someone else's session neither finishes nor spends it.
      const pending = await repo.takeState(sha256(params.state), userId);
      if (!pending || pending.expiresAt.getTime() < nowMs() || pending.provider !== providerId)
        return fail(pending?.callbackUrl ?? fallback, 'unknown');
      if (params.error) return fail(pending.callbackUrl, params.error === 'access_denied' ? 'cancelled' : 'denied');
      const provider = oauth.get(providerId as OAuthProviderId);
      if (!provider || !params.code) return fail(pending.callbackUrl, 'unknown');
      try {
        const verifier = box.open(pending.verifier);
        const tokens = await withTimeout(
          provider.client.validateAuthorizationCode(provider.endpoints.tokenUrl, params.code, verifier),
          timeoutMs,
          'The code exchange',
        );
        const access = tokens.accessToken();
        // Google lets people untick scopes on its consent screen: without calendar access there is nothing to read.
        const granted = tokens.hasScopes() ? tokens.scopes() : null;
        if (
          granted &&
          !SCOPES[providerId as OAuthProviderId].every(
            (s) => s === 'offline_access' || granted.some((g) => g.endsWith(s)),
          )
        ) {
          await revokeToken(provider, tokens.hasRefreshToken() ? tokens.refreshToken() : access, timeoutMs).catch(
            () => {},
          );
          return fail(pending.callbackUrl, 'denied');
        }
        const account = await provider.api.account(access);
        const existing = await repo.findByUid(providerId, account.uid);
        const previous = existing && existing.userId === userId ? openTokensOrNull(existing) : null;
        const secret: OAuthSecret = {
          access,
          // Without a new refresh token (a provider that sends one only once), the old one stays.
          refresh: tokens.hasRefreshToken() ? tokens.refreshToken() : (previous?.refresh ?? null),
          expiresAt: expiresAtOf(tokens),
        };
        const saved = await save({
          userId: pending.userId,
          provider: providerId as OAuthProviderId,
          uid: account.uid,
          display: account.display,
          secret: box.sealJson(secret),
          accessExpiresAt: secret.expiresAt === null ? null : new Date(secret.expiresAt),
        });
        if (saved === 'other_user') {
          // The grant just made is of no use to Daybook: give it back.
          await revokeToken(provider, secret.refresh ?? access, timeoutMs).catch(() => {});
          return fail(pending.callbackUrl, 'connected_other');
        }
        if (!saved) return fail(pending.callbackUrl, 'unknown');
        return { ok: true, callbackUrl: pending.callbackUrl, connection: presentConnection(saved) };
      } catch (err) {
        log.warn({ provider: providerId, reason: transient(err).message }, 'calendar connection failed');
        return fail(pending.callbackUrl, 'unknown');
      }
    },
  };
}
