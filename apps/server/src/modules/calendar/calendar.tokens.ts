// OAuth access tokens of stored connections: the one on file while it is fresh, otherwise a refresh,
// one at a time per connection across every process.
import { OAuth2RequestError } from 'arctic';
import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { MESSAGES } from './calendar.messages.ts';
import { expiresAtOf, type OAuthProviders, SCOPES, transient } from './calendar.providers.ts';
import type { CalendarRepo, ConnectionRow } from './calendar.repo.ts';
import { NeedsReconnect, type OAuthSecret, openTokens } from './calendar.secrets.ts';
import { withTimeout } from './calendar.timeout.ts';
import { type OAuthProviderId, ProviderApiError } from './calendar.types.ts';

/** How often a process waiting for another one's refresh looks whether it is done. */
const LEASE_POLL_MS = 200;
/** Refreshed this long before the access token expires. */
const REFRESH_MARGIN_MS = 2 * 60_000;

export interface CalendarTokensDeps {
  repo: CalendarRepo;
  box: SecretBox;
  clock: Clock;
  providers: OAuthProviders;
  /** Token requests. */
  timeoutMs: number;
  /** Drops what is cached of a connection. */
  forget(id: number): void;
}

export function createCalendarTokens(deps: CalendarTokensDeps) {
  const { repo, box, clock, providers, timeoutMs, forget } = deps;
  // Longer than any refresh may take, so a lease runs out only when its process died.
  const leaseMs = timeoutMs + 5_000;
  const nowMs = () => clock.now().getTime();
  const refreshing = new Map<number, Promise<string>>();

  const fresh = (t: OAuthSecret) => t.expiresAt === null || t.expiresAt - nowMs() > REFRESH_MARGIN_MS;

  /**
   * A new access token, one refresh at a time per connection: in this process by sharing the
   * promise, across processes by a lease on the row (no transaction stays open while the provider
   * answers: on the embedded database that would hold up every other query). `stale` is a token the
   * API refused.
   */
  function refresh(row: ConnectionRow, stale?: string): Promise<string> {
    const running = refreshing.get(row.id);
    if (running) return running;
    const work = (async () => {
      const giveUp = nowMs() + 2 * leaseMs;
      for (;;) {
        const claimed = await repo.claimRefresh(row.id, clock.now(), new Date(nowMs() + leaseMs));
        if (claimed) return refreshClaimed(claimed, stale);
        // Another process is refreshing it: its token serves this read too.
        await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
        const latest = await repo.byId(row.id);
        if (!latest) throw new NeedsReconnect(MESSAGES.needsReconnect, true);
        if (latest.status === 'needs_reconnect')
          throw new NeedsReconnect(latest.lastError ?? MESSAGES.needsReconnect, true);
        const tokens = openTokens(box, latest);
        if (tokens.access !== stale && fresh(tokens)) return tokens.access;
        if (nowMs() > giveUp) throw new ProviderApiError('unavailable', 'another refresh of this token took too long');
      }
    })().finally(() => refreshing.delete(row.id));
    refreshing.set(row.id, work);
    return work;
  }

  /** The refresh itself, holding the lease; the lease ends with what it changed. */
  async function refreshClaimed(current: ConnectionRow, stale?: string): Promise<string> {
    const provider = providers.get(current.provider as OAuthProviderId);
    const reconnect = async (reason: string): Promise<never> => {
      await repo.endRefresh(current.id, { status: 'needs_reconnect', lastError: reason, updatedAt: clock.now() });
      forget(current.id);
      throw new NeedsReconnect(reason, true);
    };
    if (current.status === 'needs_reconnect') return reconnect(current.lastError ?? MESSAGES.needsReconnect);
    let tokens: OAuthSecret;
    try {
      tokens = openTokens(box, current);
    } catch (err) {
      if (err instanceof NeedsReconnect) return reconnect(err.reason);
      await repo.endRefresh(current.id, {});
      throw err;
    }
    // Another process (or request) refreshed it meanwhile.
    if (tokens.access !== stale && fresh(tokens)) {
      await repo.endRefresh(current.id, {});
      return tokens.access;
    }
    if (!tokens.refresh) return reconnect(MESSAGES.withdrawn);
    if (!provider) {
      await repo.endRefresh(current.id, {});
      throw new ProviderApiError('unavailable', 'provider not enabled');
    }
    let next: OAuthSecret;
    try {
      const result = await withTimeout(
        provider.client.refreshAccessToken(
          provider.endpoints.tokenUrl,
          tokens.refresh,
          SCOPES[current.provider as OAuthProviderId],
        ),
        timeoutMs,
        'The token refresh',
      );
      next = {
        access: result.accessToken(),
        // A rotated refresh token replaces the old one, which stops working.
        refresh: result.hasRefreshToken() ? result.refreshToken() : tokens.refresh,
        expiresAt: expiresAtOf(result),
      };
    } catch (err) {
      if (err instanceof OAuth2RequestError && (err.code === 'invalid_grant' || err.code === 'unauthorized_client'))
        return reconnect(MESSAGES.withdrawn);
      await repo.endRefresh(current.id, {});
      throw transient(err);
    }
    await repo.endRefresh(current.id, {
      secret: box.sealJson(next),
      accessExpiresAt: next.expiresAt === null ? null : new Date(next.expiresAt),
      lastError: null,
      updatedAt: clock.now(),
    });
    return next.access;
  }

  return {
    refresh,

    /** The stored access token while it is fresh, otherwise a refreshed one. */
    async accessToken(row: ConnectionRow): Promise<string> {
      const tokens = openTokens(box, row);
      return fresh(tokens) ? tokens.access : refresh(row);
    },
  };
}

export type CalendarTokens = ReturnType<typeof createCalendarTokens>;
