// The account API at /_allauth/browser/v1 (django-allauth headless wire format) and the product's
// account calls under /api/. The server validates requests with these; the web parses responses.
import { z } from 'zod';
import { canonicalZone, ZAllauthProvider, ZTimeZone } from './calendar.ts';
import { LOCATION_NAME_MAX, ZDailyTime, ZTemperatureUnit, ZUserLocation } from './daily.ts';

export const PASSWORD_MIN_LENGTH = 8;

// ---- allauth envelope -------------------------------------------------------------------------

export const ZAllauthUser = z.object({
  id: z.union([z.number().int(), z.string()]),
  display: z.string().optional(),
  email: z.string().optional(),
  username: z.string().optional(),
  has_usable_password: z.boolean(),
});
export type TAllauthUser = z.infer<typeof ZAllauthUser>;

export const ZFlow = z.object({
  id: z.string(),
  is_pending: z.boolean().optional(),
  providers: z.array(z.string()).optional(),
  types: z.array(z.string()).optional(),
});
export type TFlow = z.infer<typeof ZFlow>;

export const ZAuthMethod = z.object({
  method: z.string(),
  at: z.number(),
  email: z.string().optional(),
  reauthenticated: z.boolean().optional(),
});

export const ZAuthenticatedResponse = z.object({
  status: z.literal(200),
  data: z.object({ user: ZAllauthUser, methods: z.array(ZAuthMethod) }),
  meta: z.object({ is_authenticated: z.literal(true) }),
});
export type TAuthenticatedResponse = z.infer<typeof ZAuthenticatedResponse>;

/**
 * Why this browser's session ended, when the server knows and it is worth telling: the account's
 * password was changed (or reset) on another device. Sent in a 401's `meta.session_ended`
 * (additive: allauth clients ignore it) until the browser signs in again or the session would have expired.
 */
export const ZSessionEndedReason = z.enum(['password_changed']);
export type TSessionEndedReason = z.infer<typeof ZSessionEndedReason>;

export const ZUnauthenticatedResponse = z.object({
  status: z.literal(401),
  data: z.object({ flows: z.array(ZFlow), user: ZAllauthUser.optional() }),
  meta: z.object({ is_authenticated: z.boolean(), session_ended: ZSessionEndedReason.optional() }),
});
export type TUnauthenticatedResponse = z.infer<typeof ZUnauthenticatedResponse>;

export const ZAllauthError = z.object({
  message: z.string(),
  code: z.string(),
  param: z.string().optional(),
});
export type TAllauthError = z.infer<typeof ZAllauthError>;

export const ZAllauthErrorResponse = z.object({ status: z.literal(400), errors: z.array(ZAllauthError) });
export type TAllauthErrorResponse = z.infer<typeof ZAllauthErrorResponse>;

export const ZConfigResponse = z.object({
  status: z.literal(200),
  data: z.object({
    account: z.object({
      login_methods: z.array(z.string()),
      is_open_for_signup: z.boolean(),
      email_verification_by_code_enabled: z.boolean(),
      login_by_code_enabled: z.boolean(),
      password_reset_by_code_enabled: z.boolean(),
      authentication_method: z.string(),
    }),
    socialaccount: z.object({ providers: z.array(ZAllauthProvider) }),
  }),
  meta: z.object({ csrf_token: z.string() }).optional(),
});

export const ZEmailAddress = z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() });
export type TEmailAddress = z.infer<typeof ZEmailAddress>;

// ---- allauth request bodies (both allauth's names and the spec's names are accepted) -----------

export const ZLoginRequest = z.object({ email: z.unknown().optional(), password: z.unknown().optional() });

export const ZAllauthSignupRequest = z.object({
  email: z.unknown().optional(),
  password: z.unknown().optional(),
  password1: z.unknown().optional(),
  password2: z.unknown().optional(),
  inviteToken: z.unknown().optional(),
  invite_token: z.unknown().optional(),
});

export const ZPasswordChangeRequest = z.object({
  current_password: z.unknown().optional(),
  new_password: z.unknown().optional(),
  oldPassword: z.unknown().optional(),
  password1: z.unknown().optional(),
  password2: z.unknown().optional(),
});

// ---- product account calls (/api/) ----------------------------------------------------------------

export const ZUserMe = z.object({
  id: z.number().int(),
  email: z.string(),
  display: z.string(),
  has_usable_password: z.boolean(),
  email_verified: z.boolean(),
  is_admin: z.boolean(),
  is_daily_message_paused: z.boolean(),
  /** Daily message: when (HH:MM in time_zone), where the weather is for, and whether it is emailed too. */
  daily_message_time: ZDailyTime,
  /** IANA time zone; null until the browser, the onboarding or the user sets one (UTC meanwhile). */
  time_zone: z.string().nullable(),
  location: ZUserLocation.nullable(),
  temperature_unit: ZTemperatureUnit,
  daily_message_email: z.boolean(),
  /** "Learn from my chats": the assistant saves what it learns from messages as memories. */
  learn_from_chats: z.boolean(),
  onboarded: z.boolean(),
  date_joined: z.string(),
});
export type TUserMe = z.infer<typeof ZUserMe>;

/** POST /api/onboarding/skip/ ("Skip for now"): the onboarding has ended; the chat is where to go on. */
export const ZSkipOnboardingResponse = z.object({ onboarded: z.literal(true), redirect: z.literal('/chat') });
export type TSkipOnboardingResponse = z.infer<typeof ZSkipOnboardingResponse>;

export const ZUpdateUserMeRequest = z
  .object({
    is_daily_message_paused: z.boolean({ error: 'Must be true or false.' }),
    learn_from_chats: z.boolean({ error: 'Must be true or false.' }),
    daily_message_time: ZDailyTime,
    /** Stored with the runtime's case (europe/berlin becomes Europe/Berlin); see canonicalZone. */
    time_zone: ZTimeZone.transform(canonicalZone),
    /** A place name, geocoded when saved; null or blank clears it. */
    location: z
      .string({ error: 'Must be a place name or null.' })
      .trim()
      .max(LOCATION_NAME_MAX, `At most ${LOCATION_NAME_MAX} characters.`)
      .nullable()
      .transform((v) => v || null),
    temperature_unit: ZTemperatureUnit,
    daily_message_email: z.boolean({ error: 'Must be true or false.' }),
  })
  .partial()
  .strict();
export type TUpdateUserMeRequest = z.infer<typeof ZUpdateUserMeRequest>;

const email = z
  .string({ error: 'Email is required' })
  .trim()
  .min(1, 'Email is required')
  .max(254)
  .pipe(z.email('Invalid email address'));

/** POST /api/auth/signup/ */
export const ZSignupRequest = z
  .object({
    email,
    password1: z.string({ error: 'Password is required' }).min(1, 'Password is required').max(4096),
    password2: z.string({ error: 'Please confirm your password' }).min(1, 'Please confirm your password'),
    inviteToken: z.string({ error: 'Invite token is required' }).trim().min(1, 'Invite token is required').max(200),
  })
  .refine((v) => v.password1 === v.password2, { message: 'Passwords do not match', path: ['password2'] });
export type TSignupRequest = z.infer<typeof ZSignupRequest>;

// The same answer whether the address is new or already has an account (enumeration prevention):
// a new account is signed in by the session cookie, so GET /api/users/me/ tells the page which.
export const ZSignupResponse = z.object({ verification_sent: z.boolean() });
export type TSignupResponse = z.infer<typeof ZSignupResponse>;

/** POST /api/auth/password/reset/ */
export const ZPasswordResetRequest = z.object({ email });
export const ZPasswordResetResponse = z.object({ detail: z.string() });

/**
 * POST /api/auth/verification/resend/ (body as the reset request). `sent: false` when a link went to
 * this address moments ago; `retry_after` is then the seconds until another may be asked for.
 * Addresses without an account get the same answers.
 */
export const ZResendVerificationResponse = z.object({
  detail: z.string(),
  sent: z.boolean(),
  retry_after: z.number().int().optional(),
});
export type TResendVerificationResponse = z.infer<typeof ZResendVerificationResponse>;

/** "3 minutes" from a resend's retry_after seconds. */
export function retryIn(seconds: number | undefined): string {
  const minutes = Math.max(1, Math.ceil((seconds ?? 180) / 60));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** What a resend held back by the 3-minute cooldown says, on the server and in the app alike. */
export const resendThrottled = (seconds: number | undefined) =>
  `We sent one a moment ago; you can ask again in ${retryIn(seconds)}.`;

// ---- invites -----------------------------------------------------------------------------------

export const ZInviteStatus = z.enum(['active', 'expired', 'exhausted', 'revoked']);

export const ZInvite = z.object({
  id: z.number().int(),
  email: z.string().nullable(),
  max_uses: z.number().int().nullable(),
  uses: z.number().int(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  created_at: z.string(),
  status: ZInviteStatus,
  used_by: z.array(z.object({ email: z.string(), used_at: z.string() })),
});
export type TInvite = z.infer<typeof ZInvite>;

export const ZCreateInviteRequest = z
  .object({
    max_uses: z.number().int().min(1).max(10_000).nullable().optional(),
    expires_in_days: z.number().int().min(1).max(3650).nullable().optional(),
    email: z.email('Invalid email address').max(254).nullable().optional(),
  })
  .strict();
export type TCreateInviteRequest = z.infer<typeof ZCreateInviteRequest>;

export const ZCreateInviteResponse = z.object({ invite: ZInvite, token: z.string(), signup_url: z.string() });
export const ZInviteList = z.object({ results: z.array(ZInvite), count: z.number().int() });

/** GET /api/auth/invite/?token=: the signup page asks about the invite its link carries. */
export const ZInviteLookupQuery = z.object({
  token: z.string({ error: 'Invite token is required' }).trim().min(1, 'Invite token is required').max(200),
});
export type TInviteLookupQuery = z.infer<typeof ZInviteLookupQuery>;

/**
 * An invite that can be used now (any other token answers 404 with the reason): `email` is the
 * address it is bound to, the only one it signs up, or null for any address.
 */
export const ZInviteLookupResponse = z.object({ valid: z.literal(true), email: z.string().nullable() });
export type TInviteLookupResponse = z.infer<typeof ZInviteLookupResponse>;
