// Server-side sessions. The cookie carries a random key; the table stores its SHA-256, so a
// database leak does not hand out live sessions.
import { createHash, randomBytes } from 'node:crypto';
import type { TSessionEndedReason } from '@daybook/contracts';
import type { Clock } from '../../lib/clock.ts';
import type { AccountsRepo, UserRow } from './accounts.repo.ts';
import type { SessionCache } from './session-cache.ts';

export const SESSION_TTL_SEC = 14 * 24 * 3600;
// How long a pending step (e.g. "verify your email" after a login attempt) stays in the session.
export const PENDING_TTL_SEC = 900;

export interface AuthMethodRecord {
  method: 'password' | 'password_reset';
  at: number;
  email?: string;
  reauthenticated?: boolean;
}

export interface SessionData {
  methods?: AuthMethodRecord[];
  pendingVerify?: { userId: number; email: string; at: number };
  /** A session ended by something its browser should hear of (see destroyAllFor): nobody's now. */
  ended?: TSessionEndedReason;
}

export interface LoadedSession {
  id: string;
  data: SessionData;
  user: UserRow | null;
}

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** Sessions that just ended: by id, or every session of a user but one. */
export type EndedSessions = { ids: string[] } | { userId: number; exceptId?: string };

export function createSessionsService({
  repo,
  clock,
  cache,
}: {
  repo: AccountsRepo;
  clock: Clock;
  /** On PostgreSQL: sessions kept for a few seconds (see session-cache.ts). */
  cache?: SessionCache;
}) {
  const expiry = () => new Date(clock.now().getTime() + SESSION_TTL_SEC * 1000);
  // Whatever holds a session open (chat sockets) hears when it ends, so it closes with it.
  const listeners = new Set<(ended: EndedSessions) => void>();
  const ended = (what: EndedSessions) => {
    for (const listener of listeners) listener(what);
  };

  /** The session and its user: this process's copy unless `fresh`, else the database's (then kept). */
  async function sessionRow(id: string, fresh: boolean) {
    let row = fresh ? undefined : cache?.get(id);
    if (!row) {
      const ticket = cache?.ticket() ?? 0;
      // One round trip: the session and its user (see AccountsRepo.findSessionWithUser).
      row = (await repo.findSessionWithUser(id)) ?? undefined;
      // Unknown keys are not cached: made-up cookies would fill the cache.
      if (row) cache?.put(ticket, id, row);
    }
    return row;
  }

  return {
    /** `fresh`: read the database, whatever is cached (requests that change something). */
    async load(key: string | undefined, { fresh = true }: { fresh?: boolean } = {}): Promise<LoadedSession | null> {
      if (!key || key.length > 100) return null;
      const row = await sessionRow(hashKey(key), fresh);
      if (!row || row.expiresAt <= clock.now()) return null;
      const user = row.user;
      // A deactivated user's session ends with the deactivation.
      if (row.userId && !user?.isActive) return null;
      const data = (row.data ?? {}) as SessionData;
      if (data.pendingVerify && clock.now().getTime() / 1000 - data.pendingVerify.at > PENDING_TTL_SEC) {
        delete data.pendingVerify;
      }
      return { id: row.id, data, user };
    },

    /** A new session (new key) for `userId`; the old one, if any, is deleted: login rotates keys. */
    async start(userId: number | null, data: SessionData, replacing?: string): Promise<{ key: string; id: string }> {
      if (replacing) {
        await repo.deleteSession(replacing);
        cache?.forgetSession(replacing);
        ended({ ids: [replacing] });
      }
      const key = randomBytes(32).toString('base64url');
      const id = hashKey(key);
      await repo.createSession({ id, userId, data, expiresAt: expiry() });
      return { key, id };
    },

    async save(id: string, data: SessionData): Promise<void> {
      await repo.updateSession(id, { data, lastSeenAt: clock.now() });
      cache?.forgetSession(id);
    },

    /**
     * Still signed in: the session exists, has not expired, and its user is active. Open sockets
     * ask before each frame, so an expiry, a deactivation or a sign-out on another instance reaches
     * them too. Answered from this process's copy when it has one (dropped at once on any change,
     * as for requests): a chat message then waits for no extra round trip.
     */
    async isLive(id: string): Promise<boolean> {
      if (!cache?.active) return repo.isSessionLive(id, clock.now());
      const row = await sessionRow(id, false);
      return Boolean(row?.user?.isActive) && (row?.expiresAt ?? new Date(0)) > clock.now();
    },

    /** Ends one session (sign-out). */
    async destroy(id: string) {
      await repo.deleteSession(id);
      cache?.forgetSession(id);
      ended({ ids: [id] });
    },
    /**
     * Ends every session of `userId` but `exceptId` (password reset or change, deactivation). With a
     * `reason`, each stays as an anonymous session that says only why it ended, so the browser's next
     * request can tell the person (signing in replaces it; the hourly sweep drops it when it expires).
     */
    async destroyAllFor(userId: number, exceptId?: string, reason?: TSessionEndedReason) {
      if (reason) await repo.endUserSessions(userId, exceptId, { ended: reason } satisfies SessionData);
      else await repo.deleteUserSessions(userId, exceptId);
      cache?.forgetUser(userId);
      ended(exceptId ? { userId, exceptId } : { userId });
    },
    prune: () => repo.deleteExpiredSessions(clock.now()),
    /**
     * After a request changed something: this process's copies of `userId`'s sessions, or of every
     * session (`'all'`, after an administrator's change to someone else), are dropped before it answers.
     */
    forgetCached(what: { userId: number } | 'all') {
      if (what === 'all') cache?.clear();
      else cache?.forgetUser(what.userId);
    },
    /** Calls `listener` after sessions end on this instance; returns the unsubscribe. */
    onEnded(listener: (ended: EndedSessions) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
