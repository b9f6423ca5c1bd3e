// The product's own account calls (/api/auth/...), in the /api error shape.
import {
  resendThrottled,
  type TInviteLookupResponse,
  type TResendVerificationResponse,
  type TSignupResponse,
  ZInviteLookupQuery,
  ZPasswordResetRequest,
  ZSignupRequest,
} from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { rotateCsrf } from '../../plugins/csrf.ts';
import { saveSession, startSession } from '../../plugins/session.ts';
import { InviteError } from '../invites/invites.service.ts';
import { AccountError } from './account-error.ts';
import type { AccountsService } from './accounts.service.ts';

const RATE_LIMITED = 'Too many attempts. Please wait a minute and try again.';

/** An AccountError in the /api shape, with allauth's params renamed to the product's fields. */
export function toAppError(err: AccountError, fields: Record<string, string> = {}): AppError {
  if (err.status === 429) return new AppError('rate_limited', RATE_LIMITED);
  if (err.status === 401) return new AppError('unauthorized', 'Authentication credentials were not provided.');
  const fieldErrors: Record<string, string[]> = {};
  for (const e of err.errors) {
    const key = e.param ? (fields[e.param] ?? e.param) : 'non_field_errors';
    fieldErrors[key] = [...(fieldErrors[key] ?? []), e.message];
  }
  return new AppError('validation_error', err.errors[0]?.message ?? 'Bad request', fieldErrors);
}

export default async function productAuthRoutes(app: FastifyInstance, { accounts }: { accounts: AccountsService }) {
  app.post('/api/auth/signup/', async (request, reply) => {
    if (request.user) throw new AppError('conflict', 'You are already signed in.');
    const input = ZSignupRequest.parse(request.body ?? {});
    try {
      const result = await accounts.signupProduct(input, { ip: request.ip });
      if (result.user) {
        // The new account's first session starts now; signing in later needs the verified address.
        await startSession(request, reply, result.user, { methods: [] });
      } else {
        // A taken address: a session of nobody, waiting for a verification, as allauth's signup keeps.
        const pendingVerify = { userId: result.existingUserId, email: result.email, at: Date.now() / 1000 };
        await saveSession(request, reply, { pendingVerify });
      }
      rotateCsrf(request, reply);
      const body: TSignupResponse = { verification_sent: true };
      return reply.status(201).send(body);
    } catch (err) {
      if (err instanceof InviteError)
        throw new AppError('validation_error', err.message, { inviteToken: [err.message] });
      if (err instanceof AccountError) throw toAppError(err, { password: 'password1' });
      throw err;
    }
  });

  // Public: the token is the secret (144 random bits), and look-ups are limited per client address.
  app.get('/api/auth/invite/', async (request, reply) => {
    const { token } = ZInviteLookupQuery.parse(request.query ?? {});
    let body: TInviteLookupResponse;
    try {
      body = await accounts.lookupInvite(token, { ip: request.ip });
    } catch (err) {
      if (err instanceof InviteError) throw new AppError('not_found', err.message);
      if (err instanceof AccountError) throw toAppError(err);
      throw err;
    }
    return reply.header('Cache-Control', 'no-store').send(body);
  });

  app.post('/api/auth/password/reset/', async (request) => {
    const { email } = ZPasswordResetRequest.parse(request.body ?? {});
    try {
      await accounts.requestPasswordReset(email, { ip: request.ip });
    } catch (err) {
      if (err instanceof AccountError) throw toAppError(err);
      throw err;
    }
    return { detail: 'Password reset email sent. Please check your inbox.' };
  });

  app.post('/api/auth/verification/resend/', async (request) => {
    const { email } = ZPasswordResetRequest.parse(request.body ?? {});
    let result: Awaited<ReturnType<AccountsService['resendVerification']>>;
    try {
      result = await accounts.resendVerification(email, { ip: request.ip });
    } catch (err) {
      if (err instanceof AccountError) throw toAppError(err);
      throw err;
    }
    if (result.sent) {
      const body: TResendVerificationResponse = {
        sent: true,
        detail: 'If this address has an account waiting for verification, a new link is on its way.',
      };
      return body;
    }
    const body: TResendVerificationResponse = {
      sent: false,
      retry_after: result.retryAfterSec,
      detail: resendThrottled(result.retryAfterSec),
    };
    return body;
  });
}
