// What administrators do from the web app: see every account, deactivate and reactivate accounts,
// choose other administrators, and mail invites. The CLI (scripts/invite.ts, scripts/user.ts) stays.
import type { TAdminUser, TSendInviteRequest, TSendInviteResponse, TUpdateAdminUserRequest } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import type { UserRow } from '../accounts/index.ts';
import type { SessionsService } from '../accounts/sessions.service.ts';
import type { UsersService } from '../accounts/users.service.ts';
import type { InvitesService } from '../invites/invites.service.ts';
import { mails } from '../mail/index.ts';
import type { MailQueue } from '../mail/mail.service.ts';
import { LIMITS, type RateLimiter } from '../rate-limit/rate-limit.service.ts';
import type { AdminRepo, AdminUserRow } from './admin.repo.ts';

export const ADMIN_ERRORS = {
  userNotFound: 'User not found.',
  deactivateSelf: 'You cannot deactivate your own account.',
  demoteSelf: 'You cannot remove your own administrator rights.',
  lastAdmin: 'Daybook needs at least one active administrator: make someone else an administrator first.',
  inviteMailLimit: 'Too many invites mailed. Please try again later.',
} as const;

export function presentUser(user: AdminUserRow): TAdminUser {
  const newestSession = user.sessions[0]?.createdAt ?? null;
  const lastLogin =
    user.lastLoginAt && newestSession
      ? user.lastLoginAt > newestSession
        ? user.lastLoginAt
        : newestSession
      : (user.lastLoginAt ?? newestSession);
  return {
    id: user.id,
    email: user.email,
    date_joined: user.createdAt.toISOString(),
    last_login: lastLogin?.toISOString() ?? null,
    email_verified: user.emailAddresses[0]?.verified ?? false,
    is_active: user.isActive,
    is_admin: user.isAdmin,
  };
}

export function createAdminService({
  repo,
  users,
  sessions,
  invites,
  mail,
  limiter,
  log,
}: {
  repo: AdminRepo;
  /** Standing changes go through accounts, which owns the user's row, under its administrators' lock. */
  users: Pick<UsersService, 'lockAdmins' | 'isLastActiveAdmin' | 'setStanding'>;
  sessions: Pick<SessionsService, 'destroyAllFor'>;
  invites: Pick<InvitesService, 'create'>;
  mail: Pick<MailQueue, 'send'>;
  limiter: Pick<RateLimiter, 'consume'>;
  log: FastifyBaseLogger;
}) {
  return {
    async listUsers(query: { search: string; limit: number; offset: number }) {
      const { rows, count } = await repo.listUsers(query);
      const results: TAdminUser[] = rows.map((row) => ({
        id: row.id,
        email: row.email,
        date_joined: row.dateJoined,
        last_login: row.lastLogin,
        email_verified: row.emailVerified,
        is_active: row.isActive,
        is_admin: row.isAdmin,
      }));
      return { results, count };
    },

    /** Applies `patch` to user `id` on behalf of `actor`, refusing what would lock everyone out. */
    async updateUser(actor: UserRow, id: number, patch: TUpdateAdminUserRequest): Promise<TAdminUser> {
      const { before, after } = await repo.transaction(async (tx) => {
        await users.lockAdmins(tx);
        const user = await repo.findUser(id, tx);
        if (!user) throw new AppError('not_found', ADMIN_ERRORS.userNotFound);
        if (id === actor.id && patch.is_active === false)
          throw new AppError('bad_request', ADMIN_ERRORS.deactivateSelf);
        if (id === actor.id && patch.is_admin === false) throw new AppError('bad_request', ADMIN_ERRORS.demoteSelf);
        const staysActiveAdmin = (patch.is_active ?? user.isActive) && (patch.is_admin ?? user.isAdmin);
        if (!staysActiveAdmin && (await users.isLastActiveAdmin(id, tx))) {
          throw new AppError('bad_request', ADMIN_ERRORS.lastAdmin);
        }
        await users.setStanding(id, { isActive: patch.is_active, isAdmin: patch.is_admin }, tx);
        const changed = await repo.findUser(id, tx);
        if (!changed) throw new AppError('not_found', ADMIN_ERRORS.userNotFound);
        return { before: user, after: changed };
      });
      // Signed out everywhere now: sessions go, and with them the user's open chat sockets.
      if (before.isActive && !after.isActive) await sessions.destroyAllFor(id);
      if (before.isActive !== after.isActive || before.isAdmin !== after.isAdmin) {
        log.info(
          { actorId: actor.id, userId: id, isActive: after.isActive, isAdmin: after.isAdmin },
          'account changed by an administrator',
        );
      }
      return presentUser(after);
    },

    /** Makes an invite bound to `input.email` and mails its link there. */
    async sendInvite(actor: UserRow, input: TSendInviteRequest): Promise<TSendInviteResponse> {
      const to = input.email.trim().toLowerCase();
      if (!(await limiter.consume(LIMITS.inviteMail(actor.id), LIMITS.inviteMailTo(to)))) {
        throw new AppError('rate_limited', ADMIN_ERRORS.inviteMailLimit);
      }
      const created = await invites.create({
        maxUses: input.max_uses,
        expiresInDays: input.expires_in_days,
        email: to,
        createdById: actor.id,
      });
      mail.send(
        mails.invite(to, created.signup_url, { from: actor.email, expiresInDays: input.expires_in_days ?? null }),
      );
      log.info({ actorId: actor.id, inviteId: created.invite.id }, 'invite mailed');
      return { ...created, sent_to: to };
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
