// A user's calendar connections as the pages show them: listing, storing (within the cap) and
// removing them, with the grant given back to the provider where it can be.
import { CALENDAR_CONNECTIONS_MAX, type TCalendarConnection } from '@daybook/contracts';
import { OAuth2RequestError } from 'arctic';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { PROVIDER_NAMES } from './calendar.messages.ts';
import { type OAuthProviders, revokeToken, transient } from './calendar.providers.ts';
import type { CalendarRepo, ConnectionRow, NewConnection } from './calendar.repo.ts';
import type { OAuthSecret } from './calendar.secrets.ts';
import type { OAuthProviderId } from './calendar.types.ts';

export const presentConnection = (row: ConnectionRow): TCalendarConnection => ({
  id: row.id,
  provider: row.provider,
  provider_name: PROVIDER_NAMES[row.provider],
  display: row.display,
  status: row.status,
  last_synced: row.lastSyncedAt?.toISOString() ?? null,
  last_error: row.lastError,
  created: row.createdAt.toISOString(),
});

export interface CalendarConnectionsDeps {
  repo: CalendarRepo;
  box: SecretBox;
  clock: Clock;
  log: FastifyBaseLogger;
  providers: OAuthProviders;
  /** Token revocation requests. */
  timeoutMs: number;
  /** Drops what is cached of a connection. */
  forget(id: number): void;
}

export function createCalendarConnections(deps: CalendarConnectionsDeps) {
  const { repo, box, clock, log, providers, timeoutMs, forget } = deps;

  async function revoke(row: ConnectionRow) {
    const provider = providers.get(row.provider as OAuthProviderId);
    if (!provider?.endpoints.revokeUrl) return;
    try {
      const tokens = box.openJson<OAuthSecret>(row.secret);
      // Revoking the refresh token ends the whole grant (Google).
      await revokeToken(provider, tokens.refresh ?? tokens.access, timeoutMs);
    } catch (err) {
      // Already revoked (by the user at Google) is as good as done.
      if (err instanceof OAuth2RequestError && err.code === 'invalid_token') return;
      log.warn(
        { connectionId: row.id, provider: row.provider, reason: transient(err).message },
        'token revocation failed',
      );
    }
  }

  async function disconnect(userId: number, id: number) {
    const row = await repo.remove(userId, id);
    if (!row) return false;
    forget(row.id);
    await revoke(row);
    return true;
  }

  return {
    async list(userId: number) {
      return (await repo.list(userId)).map(presentConnection);
    },

    async accounts(userId: number) {
      return (await repo.list(userId)).map((row) => ({ ...presentConnection(row), uid: row.uid }));
    },

    async get(userId: number, id: number) {
      const row = await repo.get(userId, id);
      return row ? presentConnection(row) : null;
    },

    /** Stores a new or reconnected connection: the row, 'other_user' (someone else's), or null (the cap). */
    async save(data: NewConnection) {
      const result = await repo.upsert({ ...data, now: clock.now() }, CALENDAR_CONNECTIONS_MAX);
      if (result && result !== 'other_user') forget(result.id);
      return result;
    },

    disconnect,

    async disconnectAccount(userId: number, providerId: string, uid: string) {
      const row = (await repo.list(userId)).find((c) => c.provider === providerId && c.uid === uid);
      return row ? disconnect(userId, row.id) : false;
    },
  };
}

export type CalendarConnections = ReturnType<typeof createCalendarConnections>;
