// The product's account calls under /api/ (error shape: { error, code, field_errors? }).
import {
  type TSignupRequest,
  type TUpdateUserMeRequest,
  ZPasswordResetResponse,
  ZSignupResponse,
  ZUserMe,
} from '@daybook/contracts';
import { z } from 'zod';
import { apiRequest } from '../../lib/api.ts';

const ZDetailResponse = z.object({ detail: z.string() });

/** 201; the server also signs the new user in. */
export const signup = (body: TSignupRequest) =>
  apiRequest('/api/auth/signup/', ZSignupResponse, { method: 'POST', body });

/** 200 whether or not the address exists; mails a new link when it is unverified. */
export const resendVerification = (email: string) =>
  apiRequest('/api/auth/verification/resend/', ZDetailResponse, { method: 'POST', body: { email } });

export const requestPasswordReset = (email: string) =>
  apiRequest('/api/auth/password/reset/', ZPasswordResetResponse, { method: 'POST', body: { email } });

export const getMe = (signal?: AbortSignal) => apiRequest('/api/users/me/', ZUserMe, { signal });

export const updateMe = (body: TUpdateUserMeRequest) =>
  apiRequest('/api/users/me/', ZUserMe, { method: 'PATCH', body });
