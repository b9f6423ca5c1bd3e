// The product's own account calls (/api/auth/...), in the /api error shape.
import {
  resendThrottled,
  type TInviteLookupResponse,
  type TResendVerificationResponse,
  type TSignupResponse,
  ZInviteLookupQuery,
  ZInviteLookupResponse,
  ZPasswordResetRequest,
  ZPasswordResetResponse,
  ZResendVerificationResponse,
  ZSignupRequest,
  ZSignupResponse,
} from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../../lib/errors.ts';
import { rotateCsrf } from '../../plugins/csrf.ts';
import { InviteError } from '../invites/invites.service.ts';
import { AccountError } from './account-error.ts';
import type { AccountsService } from './accounts.service.ts';
import { saveSession, startSession } from './session.plugin.ts';

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

const PUBLIC = { auth: 'public' } as const;

export default async function productAuthRoutes(fastify: FastifyInstance, { accounts }: { accounts: AccountsService }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/auth/signup/',
    {
      config: {
        ...PUBLIC,
        docs: {
          tag: 'Accounts',
          summary: 'Sign up with an invite',
          description:
            'Creates an account and signs it in (a session cookie and a new CSRF cookie). The answer is the same whether the address is new or already has an account; `GET /api/users/me/` then tells which.',
          responses: { 201: { description: 'A verification email is on its way.' } },
          errors: { 409: 'Already signed in.', 429: 'Too many attempts from this address.' },
          body: { schema: ZSignupRequest },
        },
      },
      schema: { response: { 201: ZSignupResponse } },
    },
    async (request, reply) => {
      if (request.user) throw new AppError('conflict', 'You are already signed in.');
      // Read here, not in `schema`: a signed-in caller hears 409 whatever the body.
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
    },
  );

  // Public: the token is the secret (144 random bits), and look-ups are limited per client address.
  app.get(
    '/api/auth/invite/',
    {
      config: {
        ...PUBLIC,
        docs: {
          tag: 'Accounts',
          summary: 'Look up the invite a signup link carries',
          description:
            'For the signup page: whether the token can be used now and, for an invite bound to an address, that address (the only one it signs up). Holding the token is the permission; look-ups are limited per client address.',
          responses: { 200: { description: 'The invite can be used.' } },
          errors: {
            404: 'The token is unknown, used up, expired or revoked (`error` says which).',
            429: 'Too many look-ups from this address.',
          },
        },
      },
      schema: { querystring: ZInviteLookupQuery, response: { 200: ZInviteLookupResponse } },
    },
    async (request, reply) => {
      const { token } = request.query;
      let body: TInviteLookupResponse;
      try {
        body = await accounts.lookupInvite(token, { ip: request.ip });
      } catch (err) {
        if (err instanceof InviteError) throw new AppError('not_found', err.message);
        if (err instanceof AccountError) throw toAppError(err);
        throw err;
      }
      return reply.header('Cache-Control', 'no-store').send(body);
    },
  );

  app.post(
    '/api/auth/password/reset/',
    {
      config: {
        ...PUBLIC,
        docs: {
          tag: 'Accounts',
          summary: 'Ask for a password reset email',
          description: 'Addresses without an account get the same answer.',
          responses: { 200: { description: 'The email is on its way.' } },
          errors: { 429: 'Too many attempts.' },
        },
      },
      schema: { body: ZPasswordResetRequest, response: { 200: ZPasswordResetResponse } },
    },
    async (request) => {
      const { email } = request.body;
      try {
        await accounts.requestPasswordReset(email, { ip: request.ip });
      } catch (err) {
        if (err instanceof AccountError) throw toAppError(err);
        throw err;
      }
      return { detail: 'Password reset email sent. Please check your inbox.' };
    },
  );

  app.post(
    '/api/auth/verification/resend/',
    {
      config: {
        ...PUBLIC,
        docs: {
          tag: 'Accounts',
          summary: 'Send the verification email again',
          description:
            '`sent: false` when a link went to this address moments ago; `retry_after` is then the seconds until another may be asked for. Addresses without an account get the same answers.',
          responses: { 200: { description: 'Sent, or held back for a while.' } },
          errors: { 429: 'Too many attempts.' },
        },
      },
      schema: { body: ZPasswordResetRequest, response: { 200: ZResendVerificationResponse } },
    },
    async (request) => {
      const { email } = request.body;
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
    },
  );
}
