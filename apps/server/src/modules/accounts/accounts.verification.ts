import { mails } from '../mail/index.ts';
import { LIMITS } from '../rate-limit/rate-limit.service.ts';
import { AccountError, fieldError, MESSAGES, required } from './account-error.ts';
import { cleanEmail } from './accounts.fields.ts';
import { KEY_TTL_SEC, type MailedKeyDeps, nowSecOf, withKey } from './accounts.keys.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import type { RequestContext, VerificationMail } from './accounts.types.ts';

export function createEmailVerification(
  deps: {
    repo: Pick<
      AccountsRepo,
      'findEmailById' | 'isVerifiedElsewhere' | 'findUserById' | 'markVerified' | 'findUserByAnyEmail'
    >;
  } & MailedKeyDeps,
) {
  const { repo, mail, limiter, signer, clock, frontendUrls, log } = deps;
  const nowSec = () => nowSecOf(clock);

  const verifyKeyFor = (addressId: number, email: string) =>
    signer.sign('email-verify', [addressId.toString(36), nowSec().toString(36)], [email]);

  async function resolveVerifyKey(key: unknown) {
    if (typeof key !== 'string' || !key) throw new AccountError(400, [required('key')]);
    let address: Awaited<ReturnType<AccountsRepo['findEmailById']>> = null;
    const parts = await signer.unsign('email-verify', key, 2, async ([id]) => {
      address = await repo.findEmailById(Number.parseInt(id ?? '', 36));
      return address ? [address.email] : null;
    });
    const issued = parts ? Number.parseInt(parts[1] ?? '', 36) : Number.NaN;
    const row = address as Awaited<ReturnType<AccountsRepo['findEmailById']>>;
    // A genuine link opened again: nothing is pending any more (allauth's 409 for a used code), so
    // the page can say the address is verified instead of calling the link broken.
    if (parts && row?.verified) throw new AccountError(409);
    if (!parts || !row || nowSec() - issued > KEY_TTL_SEC) {
      throw fieldError('key', 'invalid_or_expired_key', MESSAGES.invalidOrExpiredKey);
    }
    if (await repo.isVerifiedElsewhere(row.email, row.userId))
      throw fieldError('key', 'email_taken', MESSAGES.emailTaken);
    const user = await repo.findUserById(row.userId);
    if (!user) throw fieldError('key', 'invalid_or_expired_key', MESSAGES.invalidOrExpiredKey);
    return { address: row, user };
  }

  /**
   * Mails a verification link unless one went to this address in the last 180 s. With no address
   * to verify (`null`) the cooldown still counts, so the answer is the same as for one.
   */
  async function sendVerification(addressId: number | null, email: string): Promise<VerificationMail> {
    const attempt = await limiter.attempt(LIMITS.confirmEmail(email));
    if (!attempt.allowed) return { sent: false, retryAfterSec: attempt.retryAfterSec };
    if (addressId !== null)
      mail.send(mails.verifyEmail(email, withKey(frontendUrls.verifyEmail, verifyKeyFor(addressId, email))));
    return { sent: true };
  }

  return {
    sendVerification,

    async checkVerifyKey(key: unknown) {
      const { address, user } = await resolveVerifyKey(key);
      return { email: address.email, user };
    },

    async confirmVerifyKey(key: unknown) {
      const { address, user } = await resolveVerifyKey(key);
      await repo.markVerified(address.id);
      log.info({ userId: user.id }, 'email verified');
      return { email: address.email, user };
    },

    /**
     * Product call: mail a new verification link. The per-address cooldown applies to every address,
     * with an account or without, so its answer tells nothing about who has one.
     */
    async resendVerification(emailValue: unknown, ctx: RequestContext): Promise<VerificationMail> {
      const email = cleanEmail(emailValue);
      if (!(await limiter.consume(LIMITS.resendVerificationIp(ctx.ip)))) throw new AccountError(429);
      const found = await repo.findUserByAnyEmail(email);
      const waiting = found && !found.address.verified && found.user.isActive ? found.address.id : null;
      return sendVerification(waiting, email);
    },
  };
}
