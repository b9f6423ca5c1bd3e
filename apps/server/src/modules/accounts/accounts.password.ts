import { mails } from '../mail/index.ts';
import { LIMITS } from '../rate-limit/rate-limit.service.ts';
import { AccountError, type AccountErrorItem, fieldError, MESSAGES, required } from './account-error.ts';
import { cleanEmail, cleanPassword, validateNewPassword } from './accounts.fields.ts';
import { KEY_TTL_SEC, type MailedKeyDeps, nowSecOf, withKey } from './accounts.keys.ts';
import type { AccountsRepo, UserRow } from './accounts.repo.ts';
import type { RequestContext } from './accounts.types.ts';
import { hashPassword, verifyPassword } from './passwords.ts';

export function createPasswordChanges(
  deps: {
    repo: Pick<AccountsRepo, 'listEmails' | 'findUserById' | 'findUserByAnyEmail' | 'updateUser'>;
  } & MailedKeyDeps,
) {
  const { repo, mail, limiter, signer, clock, frontendUrls, log } = deps;
  const nowSec = () => nowSecOf(clock);

  const resetFacts = async (user: UserRow) => {
    const emails = (await repo.listEmails(user.id)).map((e) => e.email).sort();
    return [user.passwordHash, user.passwordChangedAt.getTime(), user.lastLoginAt?.getTime() ?? null, emails.join(',')];
  };

  async function resetKeyFor(user: UserRow) {
    return signer.sign('password-reset', [user.id.toString(36), nowSec().toString(36)], await resetFacts(user));
  }

  async function resolveResetKey(key: unknown): Promise<UserRow> {
    const invalid = fieldError('key', 'invalid_password_reset', MESSAGES.invalidPasswordReset);
    if (typeof key !== 'string' || !key) throw new AccountError(400, [required('key')]);
    let user: UserRow | null = null;
    const parts = await signer.unsign('password-reset', key, 2, async ([id]) => {
      user = await repo.findUserById(Number.parseInt(id ?? '', 36));
      return user ? resetFacts(user) : null;
    });
    const found = user as UserRow | null;
    if (!parts || !found?.isActive || nowSec() - Number.parseInt(parts[1] ?? '', 36) > KEY_TTL_SEC) throw invalid;
    return found;
  }

  return {
    async requestPasswordReset(emailValue: unknown, ctx: RequestContext) {
      const email = cleanEmail(emailValue);
      if (!(await limiter.consume(LIMITS.resetPasswordIp(ctx.ip), LIMITS.resetPasswordKey(email)))) {
        throw new AccountError(429);
      }
      const found = await repo.findUserByAnyEmail(email);
      if (found?.user.isActive) {
        mail.send(mails.passwordReset(email, withKey(frontendUrls.resetPassword, await resetKeyFor(found.user))));
      } else {
        mail.send(mails.unknownAccount(email, frontendUrls.signup));
      }
    },

    checkResetKey: (key: unknown) => resolveResetKey(key),

    async resetPassword(
      body: { key?: unknown; password?: unknown; password1?: unknown; password2?: unknown },
      ctx: RequestContext,
    ) {
      if (!(await limiter.consume(LIMITS.resetPasswordFromKey(ctx.ip)))) throw new AccountError(429);
      const user = await resolveResetKey(body.key);
      const param = body.password === undefined && body.password1 !== undefined ? 'password1' : 'password';
      const password = cleanPassword(body.password ?? body.password1, param);
      if (body.password2 !== undefined && body.password2 !== password) {
        throw fieldError('password2', 'password_mismatch', MESSAGES.passwordMismatch);
      }
      validateNewPassword(password, param, user.email);
      await repo.updateUser(user.id, { passwordHash: await hashPassword(password), passwordChangedAt: clock.now() });
      for (const e of await repo.listEmails(user.id)) await limiter.clear(LIMITS.loginFailedKey(e.email));
      mail.send(mails.passwordWasReset(user.email));
      log.info({ userId: user.id }, 'password reset');
      return user;
    },

    async changePassword(user: UserRow, body: Record<string, unknown>) {
      if (!(await limiter.consume(LIMITS.changePassword(user.id)))) throw new AccountError(429);
      const current = body.current_password ?? body.oldPassword;
      const currentParam =
        body.current_password === undefined && body.oldPassword !== undefined ? 'oldPassword' : 'current_password';
      const next = body.new_password ?? body.password1;
      const nextParam = body.new_password === undefined && body.password1 !== undefined ? 'password1' : 'new_password';
      const errors: AccountErrorItem[] = [];
      if (user.passwordHash && (typeof current !== 'string' || current === '')) errors.push(required(currentParam));
      if (typeof next !== 'string' || next === '') errors.push(required(nextParam));
      if (errors.length) throw new AccountError(400, errors);
      if (user.passwordHash && !(await verifyPassword(user.passwordHash, current as string))) {
        throw fieldError(currentParam, 'enter_current_password', MESSAGES.enterCurrentPassword);
      }
      if (body.password2 !== undefined && body.password2 !== next) {
        throw fieldError('password2', 'password_mismatch', MESSAGES.passwordMismatch);
      }
      validateNewPassword(next as string, nextParam, user.email);
      const updated = await repo.updateUser(user.id, {
        passwordHash: await hashPassword(next as string),
        passwordChangedAt: clock.now(),
      });
      mail.send(mails.passwordChanged(user.email));
      return updated;
    },
  };
}
