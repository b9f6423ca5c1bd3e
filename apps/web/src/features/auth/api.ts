// The product's account calls under /api/ (error shape: { error, code, field_errors? }).
import {
  type TSignupRequest,
  type TUpdateUserMeRequest,
  ZInviteLookupResponse,
  ZPasswordResetResponse,
  ZResendVerificationResponse,
  ZSignupResponse,
  ZUserMe,
} from '@daybook/contracts';
import { apiRequest } from '../../lib/api.ts';

/**
 * 201 for a new address and for one that already has an account alike; only a new account is
 * signed in (the session tells which).
 */
export const signup = (body: TSignupRequest) =>
  apiRequest('/api/auth/signup/', ZSignupResponse, { method: 'POST', body });

/**
 * 200 whether or not the address exists; mails a new link when it is unverified. `sent: false` when
 * a link went to the address in the last 3 minutes (any address: it tells nothing about accounts).
 */
export const resendVerification = (email: string) =>
  apiRequest('/api/auth/verification/resend/', ZResendVerificationResponse, { method: 'POST', body: { email } });

/**
 * The invite a signup link carries: its bound address (null: any address). Throws ApiError 404,
 * with the reason as its message, when the token cannot be used.
 */
export const lookupInvite = (token: string, signal?: AbortSignal) =>
  apiRequest(`/api/auth/invite/?${new URLSearchParams({ token })}`, ZInviteLookupResponse, { signal });

export const requestPasswordReset = (email: string) =>
  apiRequest('/api/auth/password/reset/', ZPasswordResetResponse, { method: 'POST', body: { email } });

export const ACCOUNT_PATH = '/api/users/me/';

export const getMe = (signal?: AbortSignal) => apiRequest(ACCOUNT_PATH, ZUserMe, { signal });

export const updateMe = (body: TUpdateUserMeRequest) => apiRequest(ACCOUNT_PATH, ZUserMe, { method: 'PATCH', body });
