// A signed-in user's email addresses: list, add (then verify), resend, make primary, remove.
import type { TEmailAddress } from '@daybook/contracts';
import { LIMITS, type RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { AccountError, fieldError, MESSAGES, required } from './account-error.ts';
import { cleanEmail } from './accounts.fields.ts';
import type { AccountsRepo, UserRow } from './accounts.repo.ts';
import type { SendVerification } from './accounts.types.ts';

const MAX_EMAIL_ADDRESSES = 5;

export function createEmailAddresses(deps: {
  repo: Pick<AccountsRepo, 'listEmails' | 'findEmail' | 'addEmail' | 'setPrimary' | 'deleteEmail'>;
  limiter: RateLimiter;
  sendVerification: SendVerification;
}) {
  const { repo, limiter, sendVerification } = deps;

  const presentEmails = async (userId: number): Promise<TEmailAddress[]> =>
    (await repo.listEmails(userId)).map((e) => ({ email: e.email, primary: e.primary, verified: e.verified }));

  return {
    listEmails: (user: UserRow) => presentEmails(user.id),

    async addEmail(user: UserRow, value: unknown) {
      if (!(await limiter.consume(LIMITS.manageEmail(user.id)))) throw new AccountError(429);
      const email = cleanEmail(value);
      if (await repo.findEmail(user.id, email)) throw fieldError('email', 'duplicate_email', MESSAGES.duplicateEmail);
      if ((await repo.listEmails(user.id)).length >= MAX_EMAIL_ADDRESSES) {
        throw fieldError('email', 'max_email_addresses', MESSAGES.maxEmailAddresses);
      }
      // An address another account owns is accepted too (no enumeration); verifying it then fails.
      const address = await repo.addEmail(user.id, email);
      await sendVerification(address.id, email);
      return presentEmails(user.id);
    },

    /** PUT /account/email: false when the per-address cooldown held the mail back. */
    async resendEmail(user: UserRow, value: unknown): Promise<boolean> {
      if (!(await limiter.consume(LIMITS.manageEmail(user.id)))) throw new AccountError(429);
      const email = cleanEmail(value);
      const address = await repo.findEmail(user.id, email);
      if (!address) throw fieldError('email', 'unknown_email', MESSAGES.unknownEmail);
      if (address.verified) return false;
      return (await sendVerification(address.id, email)).sent;
    },

    async setPrimaryEmail(user: UserRow, body: { email?: unknown; primary?: unknown }) {
      if (!(await limiter.consume(LIMITS.manageEmail(user.id)))) throw new AccountError(429);
      const email = cleanEmail(body.email);
      if (body.primary !== true) throw new AccountError(400, [required('primary')]);
      const address = await repo.findEmail(user.id, email);
      if (!address) throw fieldError('email', 'unknown_email', MESSAGES.unknownEmail);
      if (!address.verified) throw fieldError('email', 'unverified_primary_email', MESSAGES.unverifiedPrimary);
      await repo.setPrimary(user.id, address.id, email);
      return presentEmails(user.id);
    },

    async removeEmail(user: UserRow, value: unknown) {
      if (!(await limiter.consume(LIMITS.manageEmail(user.id)))) throw new AccountError(429);
      const email = cleanEmail(value);
      const address = await repo.findEmail(user.id, email);
      if (!address) throw fieldError('email', 'unknown_email', MESSAGES.unknownEmail);
      if (address.primary) throw fieldError('email', 'cannot_remove_primary_email', MESSAGES.cannotRemovePrimary);
      await repo.deleteEmail(address.id);
      return presentEmails(user.id);
    },
  };
}
