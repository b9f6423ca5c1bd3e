// Signing up with an invite: allauth's signup (mandatory verification, never signs in) and the
// product's (signs in at once). A taken address gets the same answer as a new one, its owner a mail.
import type { FastifyBaseLogger } from 'fastify';
import { InviteError, type InvitesService } from '../invites/invites.service.ts';
import { mails } from '../mail/index.ts';
import type { MailQueue } from '../mail/mail.service.ts';
import { LIMITS, type RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { AccountError, type AccountErrorItem, fieldError, MESSAGES, required } from './account-error.ts';
import { cleanEmail, validateNewPassword } from './accounts.fields.ts';
import type { AccountsRepo } from './accounts.repo.ts';
import type { RequestContext, SendVerification } from './accounts.types.ts';
import { hashPassword, passwordProblems } from './passwords.ts';

export function createSignup(deps: {
  repo: Pick<
    AccountsRepo,
    'findUserByAnyEmail' | 'transaction' | 'createUser' | 'claimFirstAdmin' | 'listEmails' | 'countUsers'
  >;
  invites: InvitesService;
  mail: MailQueue;
  limiter: RateLimiter;
  publicUrl: string;
  log: FastifyBaseLogger;
  sendVerification: SendVerification;
}) {
  const { repo, invites, mail, limiter, publicUrl, log, sendVerification } = deps;

  const mailAccountExists = (email: string) =>
    mail.send(mails.accountAlreadyExists(email, `${publicUrl}/auth/login`, `${publicUrl}/auth/forgot-password`));

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

    /** A one-use invite for the first account (an administrator), made when the installation has no users. */
    async bootstrapInvite() {
      if ((await repo.countUsers()) > 0) return null;
      return invites.create({ maxUses: 1, expiresInDays: 7, grantsAdmin: true });
    },
  };
}
