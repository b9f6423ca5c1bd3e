// Invite tokens: random, stored only as a hash, optionally bound to an email, limited in uses and
// time, revocable. Signup consumes one use inside the transaction that creates the user.
import { createHash, randomBytes } from 'node:crypto';
import type { TInvite, TInviteLookupResponse } from '@daybook/contracts';
import type { Tx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { InviteListRow, InvitesRepo, InviteWithUses } from './invites.repo.ts';

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export type InviteProblem = 'invalid' | 'revoked' | 'expired' | 'exhausted' | 'wrong_email';

export const INVITE_MESSAGES: Record<InviteProblem, string> = {
  invalid: 'This invite token is not valid.',
  revoked: 'This invite has been revoked.',
  expired: 'This invite has expired.',
  exhausted: 'This invite has already been used.',
  wrong_email: 'This invite is for a different email address.',
};

export class InviteError extends Error {
  constructor(readonly problem: InviteProblem) {
    super(INVITE_MESSAGES[problem]);
    this.name = 'InviteError';
  }
}

export interface CreateInviteInput {
  maxUses?: number | null;
  expiresInDays?: number | null;
  email?: string | null;
  createdById?: number | null;
  /** The first-run invite: it makes the installation's first account an administrator. */
  grantsAdmin?: boolean;
}

export function createInvitesService({
  repo,
  clock,
  signupPage,
}: {
  repo: InvitesRepo;
  clock: Clock;
  /** The signup page invite links open (FRONTEND_URL_SIGNUP; by default this app's /auth/signup). */
  signupPage: string;
}) {
  type InviteFields = Omit<InviteListRow, 'usedBy'>;

  const statusOf = (invite: InviteFields, now: Date): TInvite['status'] => {
    if (invite.revokedAt) return 'revoked';
    if (invite.expiresAt && invite.expiresAt <= now) return 'expired';
    if (invite.maxUses !== null && invite.uses >= invite.maxUses) return 'exhausted';
    return 'active';
  };

  const presentWith = (invite: InviteFields, usedBy: TInvite['used_by'], now: Date): TInvite => ({
    id: invite.id,
    email: invite.email,
    max_uses: invite.maxUses,
    uses: invite.uses,
    expires_at: invite.expiresAt?.toISOString() ?? null,
    revoked_at: invite.revokedAt?.toISOString() ?? null,
    created_at: invite.createdAt.toISOString(),
    status: statusOf(invite, now),
    used_by: usedBy,
  });

  const present = (invite: InviteWithUses): TInvite =>
    presentWith(
      invite,
      invite.usedBy.map((u) => ({ email: u.user.email, used_at: u.usedAt.toISOString() })),
      clock.now(),
    );

  /** The invite `token` names when it can be used right now; otherwise why it cannot. */
  async function usable(token: string, tx?: Tx) {
    const invite = await repo.findByHash(hashToken(token.trim()), tx);
    if (!invite) throw new InviteError('invalid');
    if (invite.revokedAt) throw new InviteError('revoked');
    if (invite.expiresAt && invite.expiresAt <= clock.now()) throw new InviteError('expired');
    if (invite.maxUses !== null && invite.uses >= invite.maxUses) throw new InviteError('exhausted');
    return invite;
  }

  const signupUrl = (token: string) => {
    const url = new URL(signupPage);
    url.searchParams.set('itoken', token);
    return url.toString();
  };

  return {
    present,
    signupUrl,

    async create(input: CreateInviteInput) {
      const token = randomBytes(18).toString('base64url');
      const expiresAt = input.expiresInDays ? new Date(clock.now().getTime() + input.expiresInDays * 86_400_000) : null;
      const invite = await repo.create({
        tokenHash: hashToken(token),
        email: input.email?.trim().toLowerCase() || null,
        maxUses: input.maxUses ?? null,
        expiresAt,
        createdById: input.createdById ?? null,
        grantsAdmin: input.grantsAdmin ?? false,
      });
      return { invite: present(invite), token, signup_url: signupUrl(token) };
    },

    async list() {
      const now = clock.now();
      return (await repo.list()).map((row) => presentWith(row, row.usedBy, now));
    },

    async revoke(id: number) {
      const invite = await repo.findById(id);
      if (!invite) throw new AppError('not_found', 'Invite not found');
      return present(invite.revokedAt ? invite : await repo.revoke(id, clock.now()));
    },

    /** Why `token` cannot be used by `email` right now, or the invite when it can. */
    async check(token: string, email: string, tx?: Tx) {
      const invite = await usable(token, tx);
      if (invite.email && invite.email !== email) throw new InviteError('wrong_email');
      return invite;
    },

    /**
     * What the holder of `token` may know before signing up: the address the invite is bound to.
     * Only for an invite usable now; otherwise why not (an old link says nothing of whom it was for).
     */
    async lookup(token: string): Promise<TInviteLookupResponse> {
      const invite = await usable(token);
      return { valid: true, email: invite.email };
    },

    /** Takes a use for `userId`; throws when another signup took the last one first. */
    async consume(inviteId: number, userId: number, tx: Tx) {
      if (!(await repo.consume(inviteId, clock.now(), tx))) throw new InviteError('exhausted');
      await repo.recordUse(inviteId, userId, tx);
    },
  };
}

export type InvitesService = ReturnType<typeof createInvitesService>;
