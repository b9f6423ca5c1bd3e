import { ACCOUNT_EXPORTS_PER_HOUR, DAILY_SEND_NOW_PER_DAY, MEMORY_EXPORTS_PER_HOUR } from '@daybook/contracts';
import type { Tx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
// Sliding-window rate limits: each counted attempt is a row, so limits hold across restarts
// and across every server instance sharing the database.
import { createKeyedLock } from '../../lib/keyed-lock.ts';
import type { RateLimitRepo } from './rate-limit.repo.ts';

export interface Limit {
  key: string;
  max: number;
  windowSec: number;
}

// allauth's ACCOUNT_RATE_LIMITS defaults.
export const LIMITS = {
  login: (ip: string): Limit => ({ key: `login:ip:${ip}`, max: 30, windowSec: 60 }),
  loginFailedIp: (ip: string): Limit => ({ key: `login_failed:ip:${ip}`, max: 10, windowSec: 60 }),
  loginFailedKey: (email: string): Limit => ({ key: `login_failed:key:${email}`, max: 5, windowSec: 300 }),
  signup: (ip: string): Limit => ({ key: `signup:ip:${ip}`, max: 20, windowSec: 60 }),
  resetPasswordIp: (ip: string): Limit => ({ key: `reset_password:ip:${ip}`, max: 20, windowSec: 60 }),
  resetPasswordKey: (email: string): Limit => ({ key: `reset_password:key:${email}`, max: 5, windowSec: 60 }),
  resetPasswordFromKey: (ip: string): Limit => ({ key: `reset_password_from_key:ip:${ip}`, max: 20, windowSec: 60 }),
  dailySendNow: (userId: number): Limit => ({
    key: `daily_send_now:user:${userId}`,
    max: DAILY_SEND_NOW_PER_DAY,
    windowSec: 86_400,
  }),
  // Each look-up is a request to the weather provider, whose allowance every user's weather shares.
  geocode: (userId: number): Limit => ({ key: `geocode:user:${userId}`, max: 20, windowSec: 3600 }),
  changePassword: (userId: number): Limit => ({ key: `change_password:user:${userId}`, max: 5, windowSec: 60 }),
  manageEmail: (userId: number): Limit => ({ key: `manage_email:user:${userId}`, max: 10, windowSec: 60 }),
  reauthenticate: (userId: number): Limit => ({ key: `reauthenticate:user:${userId}`, max: 10, windowSec: 60 }),
  confirmEmail: (email: string): Limit => ({ key: `confirm_email:key:${email}`, max: 1, windowSec: 180 }),
  resendVerificationIp: (ip: string): Limit => ({ key: `resend_verification:ip:${ip}`, max: 20, windowSec: 60 }),
  // The signup page asks once per visit; more from one address is someone trying tokens.
  inviteLookup: (ip: string): Limit => ({ key: `invite_lookup:ip:${ip}`, max: 20, windowSec: 60 }),
  // Invites mailed from the admin area: what one administrator sends, and what one address receives.
  inviteMail: (userId: number): Limit => ({ key: `invite_mail:user:${userId}`, max: 20, windowSec: 3600 }),
  inviteMailTo: (email: string): Limit => ({ key: `invite_mail:to:${email}`, max: 3, windowSec: 86_400 }),
  // Each export reads every row the user has; deleting the account checks the password like a login.
  accountExport: (userId: number): Limit => ({
    key: `account_export:user:${userId}`,
    max: ACCOUNT_EXPORTS_PER_HOUR,
    windowSec: 3600,
  }),
  // A memory export reads every memory the user has.
  memoryExport: (userId: number): Limit => ({
    key: `memory_export:user:${userId}`,
    max: MEMORY_EXPORTS_PER_HOUR,
    windowSec: 3600,
  }),
  accountDeleteFailed: (userId: number): Limit => ({
    key: `account_delete_failed:user:${userId}`,
    max: 5,
    windowSec: 300,
  }),
};

/** The longest window of any limit: the clean-up keeps every attempt that still counts. */
const LONGEST_WINDOW_SEC = Math.max(...Object.values(LIMITS).map((limit) => limit(0 as never).windowSec));

/** A counted attempt (`release` gives it back), or the seconds until one would be allowed. */
export type Attempt = { allowed: true; hitIds: bigint[] } | { allowed: false; retryAfterSec: number };

export function createRateLimiter({ repo, clock }: { repo: RateLimitRepo; clock: Clock }) {
  const since = (limit: Limit, now: Date) => new Date(now.getTime() - limit.windowSec * 1000);
  // Attempts on one key wait their turn here, each holding no database connection: a burst on one
  // address or IP otherwise fills the pool with transactions queued on the same advisory lock (which
  // still orders the instances), until they time out and everyone else's requests wait too.
  const local = createKeyedLock();
  return {
    /**
     * Counts the attempt against every limit, atomically, when all of them have room. Count before
     * acting, never after: a burst of parallel requests then gets at most `max` through.
     */
    async attempt(...limits: Limit[]): Promise<Attempt> {
      // The windows end when this attempt's turn comes, not when it began to wait.
      const { now, result } = await local.run(
        limits.map((l) => l.key),
        async () => {
          const now = clock.now();
          const result = await repo.reserveHits(
            limits.map((l) => ({ key: l.key, max: l.max, since: since(l, now) })),
            now,
          );
          return { now, result };
        },
      );
      if ('ids' in result) return { allowed: true, hitIds: result.ids };
      const windowSec = limits.find((l) => l.key === result.key)?.windowSec ?? 0;
      const freeAt = result.fullSince.getTime() + windowSec * 1000;
      return { allowed: false, retryAfterSec: Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)) };
    },
    /** Counts the attempt when allowed; false when a limit is already reached. */
    async consume(...limits: Limit[]): Promise<boolean> {
      return (await this.attempt(...limits)).allowed;
    },
    /** Takes back a counted attempt (a login that succeeded does not count as a failure). */
    async release(attempt: Attempt): Promise<void> {
      if (attempt.allowed) await repo.deleteHits(attempt.hitIds);
    },
    async clear(limit: Limit): Promise<void> {
      await repo.clearHits(limit.key);
    },
    /** Forgets a deleted user's attempts, inside the deletion's transaction. */
    async forgetUser(userId: number, emails: string[], tx: Tx): Promise<void> {
      await repo.deleteUserHits(userId, emails, tx);
    },
    /** Drops rows older than any window (send-now's is a day: an hour would reset it hourly). */
    async prune(): Promise<void> {
      await repo.deleteHitsBefore(new Date(clock.now().getTime() - LONGEST_WINDOW_SEC * 1000));
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
