// Signing in with email and password, and confirming the password again before a sensitive step.
import type { Clock } from '../../lib/clock.ts';
import { LIMITS, type RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { AccountError, type AccountErrorItem, fieldError, formError, MESSAGES, required } from './account-error.ts';
import { cleanEmail, cleanPassword } from './accounts.fields.ts';
import type { AccountsRepo, UserRow } from './accounts.repo.ts';
import type { LoginOutcome, RequestContext, SendVerification } from './accounts.types.ts';
import { verifyPassword } from './passwords.ts';

export function createLogin(deps: {
  repo: Pick<AccountsRepo, 'findUserByAnyEmail' | 'updateUser'>;
  limiter: RateLimiter;
  clock: Clock;
  sendVerification: SendVerification;
}) {
  const { repo, limiter, clock, sendVerification } = deps;

  return {
    async login(body: { email?: unknown; password?: unknown }, ctx: RequestContext): Promise<LoginOutcome> {
      const errors: AccountErrorItem[] = [];
      if (typeof body.email !== 'string' || !body.email.trim()) errors.push(required('email'));
      if (typeof body.password !== 'string' || body.password === '') errors.push(required('password'));
      if (errors.length) throw new AccountError(400, errors);
      const email = cleanEmail(body.email);
      const password = body.password as string;

      if (!(await limiter.consume(LIMITS.login(ctx.ip)))) throw new AccountError(429);
      // Counted as a failure before the password is checked, and given back if it is right: a burst
      // of parallel guesses gets no more checks than the limit allows.
      const attempt = await limiter.attempt(LIMITS.loginFailedIp(ctx.ip), LIMITS.loginFailedKey(email));
      if (!attempt.allowed) throw formError('too_many_login_attempts', MESSAGES.tooManyLoginAttempts);

      const found = await repo.findUserByAnyEmail(email);
      // One argon2 verification either way (a dummy hash for an unknown address): same time.
      const matches = await verifyPassword(found?.user.passwordHash, password);
      if (!found || !matches) throw fieldError('password', 'email_password_mismatch', MESSAGES.emailPasswordMismatch);
      await limiter.release(attempt);
      const { user, address } = found;
      if (!user.isActive) return { kind: 'inactive' };
      if (!address.verified) {
        await sendVerification(address.id, address.email);
        return { kind: 'verify_email', userId: user.id, email: address.email };
      }
      const updated = await repo.updateUser(user.id, { lastLoginAt: clock.now() });
      return { kind: 'authenticated', user: updated, email };
    },

    async reauthenticate(user: UserRow, password: unknown) {
      if (!(await limiter.consume(LIMITS.reauthenticate(user.id)))) throw new AccountError(429);
      const value = cleanPassword(password, 'password');
      if (!(await verifyPassword(user.passwordHash, value)))
        throw fieldError('password', 'incorrect_password', MESSAGES.incorrectPassword);
    },
  };
}
