// Types the accounts service and its parts share (kept apart so the parts need not import the service).
import type { UserRow } from './accounts.repo.ts';

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

/** A verification mail went out, or the per-address cooldown held it back for this long. */
export type VerificationMail = { sent: true } | { sent: false; retryAfterSec: number };

/** Mails a verification link unless the per-address cooldown holds it back (accounts.verification.ts). */
export type SendVerification = (addressId: number | null, email: string) => Promise<VerificationMail>;
