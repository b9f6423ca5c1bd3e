// Account rules in allauth's terms (email login, mandatory verification, enumeration prevention),
// independent of HTTP: routes turn outcomes and AccountErrors into responses.
import type { TAllauthUser, TEmailAddress, TUserMe } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Signer } from '../../lib/signing.ts';
import { InviteError, type InvitesService } from '../invites/invites.service.ts';
import type { Mailer, MailMessage } from '../mail/mail.service.ts';
import { mails } from '../mail/templates.ts';
import { AccountError, type AccountErrorItem, fieldError, formError, MESSAGES, required } from './account-error.ts';
import type { AccountsRepo, UserRow } from './accounts.repo.ts';
import { hashPassword, passwordProblems, verifyPassword } from './passwords.ts';
import { LIMITS, type RateLimiter } from './rate-limit.ts';

const KEY_TTL_SEC = 3 * 24 * 3600;
const MAX_EMAIL_ADDRESSES = 5;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface RequestContext {
  ip: string;
}

export type LoginOutcome =
  | { kind: 'authenticated'; user: UserRow; email: string }
  | { kind: 'verify_email'; userId: number; email: string }
  | { kind: 'inactive' };

export interface AccountsDeps {
  repo: AccountsRepo;
  invites: InvitesService;
  mailer: Mailer;
  limiter: RateLimiter;
  signer: Signer;
  clock: Clock;
  publicUrl: string;
  log: FastifyBaseLogger;
}

/** Reads an email field the way Django's EmailField does: required, trimmed, lower-cased, valid. */
export function cleanEmail(value: unknown, param = 'email'): string {
  if (typeof value !== 'string' || !value.trim()) throw new AccountError(400, [required(param)]);
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email)) throw fieldError(param, 'invalid', MESSAGES.invalidEmail);
  return email;
}

function cleanPassword(value: unknown, param: string): string {
  if (typeof value !== 'string' || value === '') throw new AccountError(400, [required(param)]);
  return value;
}

function validateNewPassword(password: string, param: string, email?: string) {
  const problems = passwordProblems(password, email);
  if (problems.length)
    throw new AccountError(
      400,
      problems.map((p) => ({ ...p, param })),
    );
}

export function createAccountsService(deps: AccountsDeps) {
  const { repo, invites, mailer, limiter, signer, clock, publicUrl, log } = deps;
  const nowSec = () => Math.floor(clock.now().getTime() / 1000);

  async function send(message: MailMessage) {
    // A mail server hiccup must not lose the account change that triggered the mail.
    try {
      await mailer.send(message);
    } catch (err) {
      log.error({ err, to: message.to, subject: message.subject }, 'could not send mail');
    }
  }

  // ---- keys ----
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
    if (!parts || !row || row.verified || nowSec() - issued > KEY_TTL_SEC) {
      throw fieldError('key', 'invalid_or_expired_key', MESSAGES.invalidOrExpiredKey);
    }
    if (await repo.isVerifiedElsewhere(row.email, row.userId))
      throw fieldError('key', 'email_taken', MESSAGES.emailTaken);
    const user = await repo.findUserById(row.userId);
    if (!user) throw fieldError('key', 'invalid_or_expired_key', MESSAGES.invalidOrExpiredKey);
    return { address: row, user };
  }

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

  /** Mails a verification link unless one went to this address in the last 180 s. */
  async function sendVerification(addressId: number, email: string): Promise<boolean> {
    if (!(await limiter.consume(LIMITS.confirmEmail(email)))) return false;
    await send(mails.verifyEmail(email, `${publicUrl}/auth/verify-email/${verifyKeyFor(addressId, email)}`));
    return true;
  }

  const presentEmails = async (userId: number): Promise<TEmailAddress[]> =>
    (await repo.listEmails(userId)).map((e) => ({ email: e.email, primary: e.primary, verified: e.verified }));

  async function createAccount(input: { email: string; password: string; inviteToken: string }, ctx: RequestContext) {
    if (!(await limiter.consume(LIMITS.signup(ctx.ip)))) throw new AccountError(429);
    const invite = await invites.check(input.inviteToken, input.email);
    validateNewPassword(input.password, 'password', input.email);
    const existing = await repo.findUserByAnyEmail(input.email);
    if (existing) return { existing: existing.user };
    const passwordHash = await hashPassword(input.password);
    try {
      const user = await repo.transaction(async (tx) => {
        const created = await repo.createUser({ email: input.email, passwordHash }, tx);
        await invites.consume(invite.id, created.id, tx);
        return created;
      });
      const [address] = await repo.listEmails(user.id);
      if (address) await sendVerification(address.id, address.email);
      log.info({ userId: user.id, inviteId: invite.id }, 'account created');
      return { user };
    } catch (err) {
      // Two signups for one address at once: the unique index lets one through.
      if ((err as { code?: string }).code === 'P2002') return { existing: null };
      throw err;
    }
  }

  return {
    serializeUser(user: UserRow): TAllauthUser {
      return { id: user.id, display: user.email, email: user.email, has_usable_password: user.passwordHash !== null };
    },

    async userMe(user: UserRow): Promise<TUserMe> {
      const primary = await repo.findEmail(user.id, user.email);
      return {
        id: user.id,
        email: user.email,
        display: user.email,
        has_usable_password: user.passwordHash !== null,
        email_verified: primary?.verified ?? false,
        is_admin: user.isAdmin,
        is_daily_message_paused: user.isDailyMessagePaused,
        learn_from_chats: user.learnFromChats,
        onboarded: user.onboardedAt !== null,
        date_joined: user.createdAt.toISOString(),
      };
    },

    async updateSettings(user: UserRow, patch: { is_daily_message_paused?: boolean; learn_from_chats?: boolean }) {
      const changes: Partial<UserRow> = {};
      if (patch.is_daily_message_paused !== undefined) changes.isDailyMessagePaused = patch.is_daily_message_paused;
      if (patch.learn_from_chats !== undefined) changes.learnFromChats = patch.learn_from_chats;
      const updated = Object.keys(changes).length ? await repo.updateUser(user.id, changes) : user;
      return this.userMe(updated);
    },

    async login(body: { email?: unknown; password?: unknown }, ctx: RequestContext): Promise<LoginOutcome> {
      const errors: AccountErrorItem[] = [];
      if (typeof body.email !== 'string' || !body.email.trim()) errors.push(required('email'));
      if (typeof body.password !== 'string' || body.password === '') errors.push(required('password'));
      if (errors.length) throw new AccountError(400, errors);
      const email = cleanEmail(body.email);
      const password = body.password as string;

      if (!(await limiter.consume(LIMITS.login(ctx.ip)))) throw new AccountError(429);
      const failedIp = LIMITS.loginFailedIp(ctx.ip);
      const failedKey = LIMITS.loginFailedKey(email);
      if ((await limiter.exceeded(failedIp)) || (await limiter.exceeded(failedKey))) {
        throw formError('too_many_login_attempts', MESSAGES.tooManyLoginAttempts);
      }

      const found = await repo.findUserByAnyEmail(email);
      if (!found || !(await verifyPassword(found.user.passwordHash, password))) {
        await limiter.record(failedIp);
        await limiter.record(failedKey);
        throw fieldError('password', 'email_password_mismatch', MESSAGES.emailPasswordMismatch);
      }
      const { user, address } = found;
      if (!user.isActive) return { kind: 'inactive' };
      if (!address.verified) {
        await sendVerification(address.id, address.email);
        return { kind: 'verify_email', userId: user.id, email: address.email };
      }
      const updated = await repo.updateUser(user.id, { lastLoginAt: clock.now() });
      return { kind: 'authenticated', user: updated, email };
    },

    /** allauth's POST /auth/signup: mandatory verification, so never signs in. */
    async signupAllauth(body: Record<string, unknown>, ctx: RequestContext) {
      const errors: AccountErrorItem[] = [];
      let email = '';
      try {
        email = cleanEmail(body.email);
      } catch (err) {
        errors.push(...(err as AccountError).errors);
      }
      const password = body.password ?? body.password1;
      const passwordParam = body.password === undefined && body.password1 !== undefined ? 'password1' : 'password';
      if (typeof password !== 'string' || !password) errors.push(required(passwordParam));
      else {
        errors.push(...passwordProblems(password, email).map((p) => ({ ...p, param: passwordParam })));
        if (body.password2 !== undefined && body.password2 !== password) {
          errors.push({ code: 'password_mismatch', message: MESSAGES.passwordMismatch, param: 'password2' });
        }
      }
      const inviteToken = body.inviteToken ?? body.invite_token;
      const inviteParam =
        body.inviteToken === undefined && body.invite_token !== undefined ? 'invite_token' : 'inviteToken';
      if (typeof inviteToken !== 'string' || !inviteToken.trim()) errors.push(required(inviteParam));
      if (errors.length) throw new AccountError(400, errors);
      try {
        const result = await createAccount(
          { email, password: password as string, inviteToken: inviteToken as string },
          ctx,
        );
        if ('existing' in result) {
          // Same answer as a fresh signup, so the response does not reveal the account.
          await send(mails.accountAlreadyExists(email, `${publicUrl}/auth/login`, `${publicUrl}/auth/forgot-password`));
          return { userId: result.existing?.id ?? 0, email };
        }
        return { userId: result.user.id, email };
      } catch (err) {
        if (err instanceof InviteError) throw fieldError(inviteParam, 'invalid_invite', err.message);
        throw err;
      }
    },

    /** The product's POST /api/auth/signup/: the new account's first session starts at once. */
    async signupProduct(input: { email: string; password1: string; inviteToken: string }, ctx: RequestContext) {
      const email = cleanEmail(input.email);
      const result = await createAccount({ email, password: input.password1, inviteToken: input.inviteToken }, ctx);
      if ('existing' in result) {
        // The invite is checked first, so only invite holders can learn that an address is taken.
        throw fieldError('email', 'email_taken', MESSAGES.emailTaken);
      }
      return result.user;
    },

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

    /** Product call: mail a new verification link. Same answer whether or not the address exists. */
    async resendVerification(emailValue: unknown, ctx: RequestContext) {
      const email = cleanEmail(emailValue);
      if (!(await limiter.consume(LIMITS.resendVerificationIp(ctx.ip)))) throw new AccountError(429);
      const found = await repo.findUserByAnyEmail(email);
      if (found && !found.address.verified && found.user.isActive) await sendVerification(found.address.id, email);
    },

    async requestPasswordReset(emailValue: unknown, ctx: RequestContext) {
      const email = cleanEmail(emailValue);
      if (!(await limiter.consume(LIMITS.resetPasswordIp(ctx.ip), LIMITS.resetPasswordKey(email)))) {
        throw new AccountError(429);
      }
      const found = await repo.findUserByAnyEmail(email);
      if (found?.user.isActive) {
        await send(mails.passwordReset(email, `${publicUrl}/auth/reset-password/${await resetKeyFor(found.user)}`));
      } else {
        await send(mails.unknownAccount(email, `${publicUrl}/`));
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
      await send(mails.passwordWasReset(user.email));
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
      await send(mails.passwordChanged(user.email));
      return updated;
    },

    async reauthenticate(user: UserRow, password: unknown) {
      if (!(await limiter.consume(LIMITS.reauthenticate(user.id)))) throw new AccountError(429);
      const value = cleanPassword(password, 'password');
      if (!(await verifyPassword(user.passwordHash, value)))
        throw fieldError('password', 'incorrect_password', MESSAGES.incorrectPassword);
    },

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
      return sendVerification(address.id, email);
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

    /** A one-use invite for the first account, made when the installation has no users. */
    async bootstrapInvite() {
      if ((await repo.countUsers()) > 0) return null;
      return invites.create({ maxUses: 1, expiresInDays: 7 });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
