// Account rules in allauth's terms (email login, mandatory verification, enumeration prevention),
// independent of HTTP: routes turn outcomes and AccountErrors into responses.
import type {
  TAllauthUser,
  TEmailAddress,
  TTemperatureUnit,
  TUpdateUserMeRequest,
  TUserLocation,
  TUserMe,
} from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Signer } from '../../lib/signing.ts';
import { InviteError, type InvitesService } from '../invites/invites.service.ts';
import type { MailQueue } from '../mail/mail.service.ts';
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

/** Where mailed links point: URLs with a `{key}` placeholder (allauth's HEADLESS_FRONTEND_URLS). */
export interface FrontendUrls {
  verifyEmail: string;
  resetPassword: string;
  signup: string;
}

export interface AccountsDeps {
  repo: AccountsRepo;
  invites: InvitesService;
  mail: MailQueue;
  limiter: RateLimiter;
  signer: Signer;
  clock: Clock;
  publicUrl: string;
  frontendUrls: FrontendUrls;
  log: FastifyBaseLogger;
}

/** A verification mail went out, or the per-address cooldown held it back for this long. */
export type VerificationMail = { sent: true } | { sent: false; retryAfterSec: number };

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

/** The weather's place as the API shows it: set only with its coordinates. */
export function presentLocation(
  user: Pick<UserRow, 'locationName' | 'locationCountry' | 'latitude' | 'longitude'>,
): TUserLocation | null {
  return user.locationName !== null && user.latitude !== null && user.longitude !== null
    ? {
        name: user.locationName,
        country_code: user.locationCountry,
        latitude: user.latitude,
        longitude: user.longitude,
      }
    : null;
}

export function createAccountsService(deps: AccountsDeps) {
  const { repo, invites, mail, limiter, signer, clock, publicUrl, frontendUrls, log } = deps;
  const nowSec = () => Math.floor(clock.now().getTime() / 1000);
  const withKey = (template: string, key: string) => template.replaceAll('{key}', encodeURIComponent(key));

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

  const mailAccountExists = (email: string) =>
    mail.send(mails.accountAlreadyExists(email, `${publicUrl}/auth/login`, `${publicUrl}/auth/forgot-password`));

  const presentEmails = async (userId: number): Promise<TEmailAddress[]> =>
    (await repo.listEmails(userId)).map((e) => ({ email: e.email, primary: e.primary, verified: e.verified }));

  async function createAccount(input: { email: string; password: string; inviteToken: string }, ctx: RequestContext) {
    if (!(await limiter.consume(LIMITS.signup(ctx.ip)))) throw new AccountError(429);
    const invite = await invites.check(input.inviteToken, input.email);
    validateNewPassword(input.password, 'password', input.email);
    // Hashed before looking the address up: a taken address costs the same time as a new one.
    const passwordHash = await hashPassword(input.password);
    const existing = await repo.findUserByAnyEmail(input.email);
    if (existing) return { existing: existing.user };
    try {
      const user = await repo.transaction(async (tx) => {
        const created = await repo.createUser({ email: input.email, passwordHash }, tx);
        await invites.consume(invite.id, created.id, tx);
        // The first-run invite makes the first account an administrator; a leftover one (the server
        // restarted before anyone signed up) gives a later account no more than any invite.
        if (invite.grantsAdmin && (await repo.claimFirstAdmin(created.id, tx))) return { ...created, isAdmin: true };
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
      const emailVerified = await repo.isEmailVerified(user.id, user.email);
      return {
        id: user.id,
        email: user.email,
        display: user.email,
        has_usable_password: user.passwordHash !== null,
        email_verified: emailVerified,
        is_admin: user.isAdmin,
        is_daily_message_paused: user.isDailyMessagePaused,
        daily_message_time: user.dailyMessageTime,
        time_zone: user.timeZone,
        location: presentLocation(user),
        temperature_unit: user.temperatureUnit as TTemperatureUnit,
        daily_message_email: user.dailyMessageEmail,
        learn_from_chats: user.learnFromChats,
        onboarded: user.onboardedAt !== null,
        date_joined: user.createdAt.toISOString(),
      };
    },

    /** `location` here is already geocoded (the users routes do it); null clears it. */
    async updateSettings(
      user: UserRow,
      patch: Omit<TUpdateUserMeRequest, 'location'> & { location?: TUserLocation | null },
    ) {
      const changes: Partial<UserRow> = {};
      if (patch.is_daily_message_paused !== undefined) changes.isDailyMessagePaused = patch.is_daily_message_paused;
      if (patch.learn_from_chats !== undefined) changes.learnFromChats = patch.learn_from_chats;
      if (patch.daily_message_time !== undefined) changes.dailyMessageTime = patch.daily_message_time;
      if (patch.daily_message_email !== undefined) changes.dailyMessageEmail = patch.daily_message_email;
      if (patch.time_zone !== undefined) changes.timeZone = patch.time_zone;
      if (patch.temperature_unit !== undefined) changes.temperatureUnit = patch.temperature_unit;
      if (patch.location !== undefined) {
        changes.locationName = patch.location?.name ?? null;
        changes.locationCountry = patch.location?.country_code ?? null;
        changes.latitude = patch.location?.latitude ?? null;
        changes.longitude = patch.location?.longitude ?? null;
      }
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
          mailAccountExists(email);
          return { userId: result.existing?.id ?? 0, email };
        }
        return { userId: result.user.id, email };
      } catch (err) {
        if (err instanceof InviteError) throw fieldError(inviteParam, 'invalid_invite', err.message);
        throw err;
      }
    },

    /**
     * The product's POST /api/auth/signup/: a new account's first session starts at once. A taken
     * address gets the same answer (no session), its owner a mail, and the invite stays unused.
     */
    async signupProduct(input: { email: string; password1: string; inviteToken: string }, ctx: RequestContext) {
      const email = cleanEmail(input.email);
      const result = await createAccount({ email, password: input.password1, inviteToken: input.inviteToken }, ctx);
      if ('existing' in result) {
        mailAccountExists(email);
        return { user: null, existingUserId: result.existing?.id ?? 0, email };
      }
      return { user: result.user, existingUserId: null, email };
    },

    /** GET /api/auth/invite/: the invite a signup link carries, for its page (rate-limited per address). */
    async lookupInvite(token: string, ctx: RequestContext) {
      if (!(await limiter.consume(LIMITS.inviteLookup(ctx.ip)))) throw new AccountError(429);
      return invites.lookup(token);
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

    /** A one-use invite for the first account (an administrator), made when the installation has no users. */
    async bootstrapInvite() {
      if ((await repo.countUsers()) > 0) return null;
      return invites.create({ maxUses: 1, expiresInDays: 7, grantsAdmin: true });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
