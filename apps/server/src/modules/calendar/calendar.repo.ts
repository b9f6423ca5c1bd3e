// Calendar connections and OAuth consents in progress. Secrets arrive here already sealed.
import type { TCalendarConnectionStatus, TCalendarProviderId } from '@daybook/contracts';
import type { Query } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export interface ConnectionRow {
  id: number;
  userId: number;
  provider: TCalendarProviderId;
  uid: string;
  display: string;
  status: TCalendarConnectionStatus;
  secret: string;
  accessExpiresAt: Date | null;
  lastSyncedAt: Date | null;
  lastError: string | null;
  createdAt: Date;
}

/** What connecting stores; the secret arrives sealed. */
export interface NewConnection {
  userId: number;
  provider: TCalendarProviderId;
  uid: string;
  display: string;
  secret: string;
  accessExpiresAt: Date | null;
}

export interface OAuthStateRow {
  userId: number;
  provider: string;
  verifier: string;
  callbackUrl: string;
  expiresAt: Date;
}

const asRow = (r: { provider: string; status: string }) => r as unknown as ConnectionRow;

/** A day's read: the user's own time zone and connections, in one prepared statement. */
const DAY_SQL = `SELECT u.time_zone AS "timeZone", c.id, c.user_id AS "userId", c.provider, c.uid, c.display,
    c.status, c.secret, c.access_expires_at AS "accessExpiresAt", c.last_synced_at AS "lastSyncedAt",
    c.last_error AS "lastError", c.created_at AS "createdAt"
  FROM users u LEFT JOIN calendar_connections c ON c.user_id = u.id
  WHERE u.id = $1 ORDER BY c.id`;

/** Serialises one user's additions (the connection cap) across processes. */
const lockUser = (tx: Tx, userId: number) =>
  tx.$queryRawUnsafe('SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext($1), $2)', 'calendar', userId);

export function createCalendarRepo(prisma: PrismaClient, query: Query) {
  const repo = {
    /**
     * What reading a day needs, straight to the driver (it runs on every Today page): the user's
     * time zone and their connections by id (as `list`). An unknown user has neither.
     */
    async dayOf(userId: number): Promise<{ timeZone: string | null; connections: ConnectionRow[] }> {
      const rows = await query<(ConnectionRow & { timeZone: string | null }) | { timeZone: string | null; id: null }>(
        DAY_SQL,
        [userId],
        'daybook_calendar_day',
      );
      const connections: ConnectionRow[] = [];
      for (const { timeZone: _, ...row } of rows) if (row.id !== null) connections.push(row as ConnectionRow);
      return { timeZone: rows[0]?.timeZone ?? null, connections };
    },

    async list(userId: number): Promise<ConnectionRow[]> {
      const rows = await prisma.calendarConnection.findMany({ where: { userId }, orderBy: { id: 'asc' } });
      return rows.map(asRow);
    },

    async get(userId: number, id: number): Promise<ConnectionRow | null> {
      const row = await prisma.calendarConnection.findFirst({ where: { id, userId } });
      return row ? asRow(row) : null;
    },

    async findByUid(provider: string, uid: string): Promise<ConnectionRow | null> {
      const row = await prisma.calendarConnection.findUnique({ where: { provider_uid: { provider, uid } } });
      return row ? asRow(row) : null;
    },

    /**
     * Adds a connection unless the user is at `max`; an OAuth account the user already connected is
     * updated (a reconnect). Null: at the cap. 'other_user': the account is another user's.
     */
    async upsert(data: NewConnection & { now: Date }, max: number): Promise<ConnectionRow | null | 'other_user'> {
      return (
        prisma
          .$transaction(async (tx) => {
            await lockUser(tx, data.userId);
            const existing = await tx.calendarConnection.findUnique({
              where: { provider_uid: { provider: data.provider, uid: data.uid } },
            });
            if (existing && existing.userId !== data.userId) return 'other_user';
            if (existing) {
              const row = await tx.calendarConnection.update({
                where: { id: existing.id },
                data: {
                  display: data.display,
                  secret: data.secret,
                  accessExpiresAt: data.accessExpiresAt,
                  status: 'connected',
                  lastError: null,
                  updatedAt: data.now,
                },
              });
              return asRow(row);
            }
            const count = await tx.calendarConnection.count({ where: { userId: data.userId } });
            if (count >= max) return null;
            const row = await tx.calendarConnection.create({
              data: {
                userId: data.userId,
                provider: data.provider,
                uid: data.uid,
                display: data.display,
                secret: data.secret,
                accessExpiresAt: data.accessExpiresAt,
                createdAt: data.now,
                updatedAt: data.now,
              },
            });
            return asRow(row);
          })
          // Another user connected the same account in the same moment (each holds only their own lock).
          .catch((err: unknown) => {
            if ((err as { code?: unknown }).code === 'P2002') return 'other_user' as const;
            throw err;
          })
      );
    },

    async remove(userId: number, id: number): Promise<ConnectionRow | null> {
      const row = await repo.get(userId, id);
      if (!row) return null;
      const { count } = await prisma.calendarConnection.deleteMany({ where: { id, userId } });
      return count ? row : null;
    },

    async byId(id: number): Promise<ConnectionRow | null> {
      const row = await prisma.calendarConnection.findUnique({ where: { id } });
      return row ? asRow(row) : null;
    },

    /**
     * Takes the connection's refresh lease until `until`, unless another process holds one: the row
     * as it is now, or null. No transaction stays open while the provider answers.
     */
    async claimRefresh(id: number, now: Date, until: Date): Promise<ConnectionRow | null> {
      const { count } = await prisma.calendarConnection.updateMany({
        where: { id, OR: [{ refreshLockUntil: null }, { refreshLockUntil: { lt: now } }] },
        data: { refreshLockUntil: until },
      });
      return count ? repo.byId(id) : null;
    },

    /** Ends the lease, saving what the refresh changed. */
    async endRefresh(id: number, update: RefreshUpdate): Promise<void> {
      await prisma.calendarConnection.updateMany({ where: { id }, data: { ...update, refreshLockUntil: null } });
    },

    async setStatus(
      id: number,
      update: { status?: TCalendarConnectionStatus; lastError?: string | null; lastSyncedAt?: Date; updatedAt: Date },
    ): Promise<void> {
      await prisma.calendarConnection.updateMany({ where: { id }, data: update });
    },

    /** Keeps a user's newest consents in progress only: nobody needs more at once. */
    async saveState(hash: string, state: OAuthStateRow, keep: number): Promise<void> {
      await prisma.calendarOAuthState.create({ data: { stateHash: hash, ...state } });
      await prisma.$executeRawUnsafe(
        `DELETE FROM calendar_oauth_states WHERE user_id = $1 AND state_hash NOT IN (
           SELECT state_hash FROM calendar_oauth_states WHERE user_id = $1 ORDER BY expires_at DESC LIMIT $2)`,
        state.userId,
        keep,
      );
    },

    /** Takes a state: whoever takes it first gets it, and nobody gets it twice. */
    /** Takes (deletes) a pending consent of `userId`'s: another user's session leaves it in place. */
    async takeState(hash: string, userId: number): Promise<OAuthStateRow | null> {
      const rows = await prisma.$queryRawUnsafe<OAuthStateRow[]>(
        `DELETE FROM calendar_oauth_states WHERE state_hash = $1 AND user_id = $2
         RETURNING user_id AS "userId", provider, verifier, callback_url AS "callbackUrl", expires_at AS "expiresAt"`,
        hash,
        userId,
      );
      return rows[0] ?? null;
    },

    async pruneStates(now: Date): Promise<void> {
      await prisma.calendarOAuthState.deleteMany({ where: { expiresAt: { lt: now } } });
    },
  };
  return repo;
}

export interface RefreshUpdate {
  secret?: string;
  accessExpiresAt?: Date | null;
  status?: TCalendarConnectionStatus;
  lastError?: string | null;
  updatedAt?: Date;
}

export type CalendarRepo = ReturnType<typeof createCalendarRepo>;
