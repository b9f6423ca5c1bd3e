// What every allauth route shares: the response envelope, the signed-in/signed-out answers with
// their flows, and reading the request.
import type { TFlow } from '@daybook/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountError } from './account-error.ts';
import type { UserRow } from './accounts.repo.ts';
import type { AccountsService } from './accounts.service.ts';
import type { AuthMethodRecord, SessionData } from './sessions.service.ts';

export const NEVER_CACHE = 'max-age=0, no-cache, no-store, must-revalidate, private';

export function envelope(
  reply: FastifyReply,
  status: number,
  body: { data?: unknown; meta?: unknown; errors?: unknown[] } = {},
) {
  const out: Record<string, unknown> = { status };
  if (body.data !== undefined) out.data = body.data;
  if (body.meta !== undefined) out.meta = body.meta;
  if (body.errors?.length) out.errors = body.errors;
  return reply.status(status).header('Cache-Control', NEVER_CACHE).send(out);
}

export const ctx = (request: FastifyRequest) => ({ ip: request.ip });

export const nowSec = () => Date.now() / 1000;

export const body = (request: FastifyRequest) =>
  request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};

/** 401 flows unless signed in; narrows request.user. */
export function requireUser(request: FastifyRequest): UserRow {
  if (!request.user) throw new AccountError(401);
  return request.user;
}

function flows(data: SessionData | undefined): TFlow[] {
  const list: TFlow[] = [{ id: 'login' }, { id: 'signup' }];
  if (data?.pendingVerify) list.push({ id: 'verify_email', is_pending: true });
  return list;
}

export function createReplies(accounts: Pick<AccountsService, 'serializeUser'>) {
  return {
    authenticated: (reply: FastifyReply, user: UserRow, methods: AuthMethodRecord[]) =>
      envelope(reply, 200, { data: { user: accounts.serializeUser(user), methods }, meta: { is_authenticated: true } }),

    // `session_ended` is additive: allauth clients ignore it; this web app says why the person was signed out.
    unauthenticated: (reply: FastifyReply, data?: SessionData) =>
      envelope(reply, 401, {
        data: { flows: flows(data) },
        meta: data?.ended ? { is_authenticated: false, session_ended: data.ended } : { is_authenticated: false },
      }),
  };
}

export type AllauthReplies = ReturnType<typeof createReplies>;

/** What each group of allauth routes is given. */
export interface AllauthRouteDeps {
  accounts: AccountsService;
  replies: AllauthReplies;
}
