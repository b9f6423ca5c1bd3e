// Fixed-window-free rate limits: each counted attempt is a row, so limits hold across restarts
// and across every server instance sharing the database.
import type { Clock } from '../../lib/clock.ts';
import type { AccountsRepo } from './accounts.repo.ts';

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
  changePassword: (userId: number): Limit => ({ key: `change_password:user:${userId}`, max: 5, windowSec: 60 }),
  manageEmail: (userId: number): Limit => ({ key: `manage_email:user:${userId}`, max: 10, windowSec: 60 }),
  reauthenticate: (userId: number): Limit => ({ key: `reauthenticate:user:${userId}`, max: 10, windowSec: 60 }),
  confirmEmail: (email: string): Limit => ({ key: `confirm_email:key:${email}`, max: 1, windowSec: 180 }),
  resendVerificationIp: (ip: string): Limit => ({ key: `resend_verification:ip:${ip}`, max: 20, windowSec: 60 }),
};

export function createRateLimiter({ repo, clock }: { repo: AccountsRepo; clock: Clock }) {
  const since = (limit: Limit) => new Date(clock.now().getTime() - limit.windowSec * 1000);
  return {
    /** True when another attempt would exceed the limit. Counts nothing. */
    async exceeded(limit: Limit): Promise<boolean> {
      return (await repo.countHits(limit.key, since(limit))) >= limit.max;
    },
    async record(limit: Limit): Promise<void> {
      await repo.addHit(limit.key, clock.now());
    },
    /** Counts the attempt when allowed; false when the limit is already reached. */
    async consume(...limits: Limit[]): Promise<boolean> {
      for (const limit of limits) if (await this.exceeded(limit)) return false;
      for (const limit of limits) await this.record(limit);
      return true;
    },
    async clear(limit: Limit): Promise<void> {
      await repo.clearHits(limit.key);
    },
    /** Drops rows older than any window. */
    async prune(): Promise<void> {
      await repo.deleteHitsBefore(new Date(clock.now().getTime() - 3600 * 1000));
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
