// The administrators' area: /api/admin/users/... and mailing invites (/api/admin/invites/send/).
// Creating, listing and revoking invites are in accounts.ts (ZInvite, ZCreateInviteRequest).
import { z } from 'zod';
import { ZCreateInviteRequest, ZCreateInviteResponse } from './accounts.ts';

export const ADMIN_USERS_PAGE_SIZE = 25;
export const ADMIN_SEARCH_MAX = 254;

export const ZAdminUser = z.object({
  id: z.number().int(),
  email: z.string(),
  date_joined: z.string(),
  /** The last sign-in: a password sign-in, or the session a signup starts; null for never. */
  last_login: z.string().nullable(),
  email_verified: z.boolean(),
  is_active: z.boolean(),
  is_admin: z.boolean(),
});
export type TAdminUser = z.infer<typeof ZAdminUser>;

/** GET /api/admin/users/: newest first; `search` matches part of the address. */
export const ZAdminUserListQuery = z.object({
  search: z
    .string()
    .trim()
    .max(ADMIN_SEARCH_MAX, `Search must be at most ${ADMIN_SEARCH_MAX} characters.`)
    .optional()
    .default(''),
  limit: z.coerce
    .number({ error: 'Limit must be a whole number.' })
    .int('Limit must be a whole number.')
    .min(1, 'Limit must be between 1 and 100.')
    .max(100, 'Limit must be between 1 and 100.')
    .optional()
    .default(ADMIN_USERS_PAGE_SIZE),
  offset: z.coerce
    .number({ error: 'Offset must be a whole number.' })
    .int('Offset must be a whole number.')
    .min(0, 'Offset must be 0 or more.')
    .max(1_000_000, 'Offset is too large.')
    .optional()
    .default(0),
});
export type TAdminUserListQuery = z.infer<typeof ZAdminUserListQuery>;

export const ZAdminUserPage = z.object({
  results: z.array(ZAdminUser),
  count: z.number().int(),
  next: z.string().nullable(),
  previous: z.string().nullable(),
});
export type TAdminUserPage = z.infer<typeof ZAdminUserPage>;

/**
 * PATCH /api/admin/users/{id}/: deactivate or reactivate (deactivating signs the user out
 * everywhere at once), make or unmake an administrator. Nobody can deactivate or demote themselves,
 * and the last active administrator stays one.
 */
export const ZUpdateAdminUserRequest = z
  .object({
    is_active: z.boolean({ error: 'Must be true or false.' }).optional(),
    is_admin: z.boolean({ error: 'Must be true or false.' }).optional(),
  })
  .strict()
  .refine((v) => v.is_active !== undefined || v.is_admin !== undefined, {
    message: 'Send is_active or is_admin.',
  });
export type TUpdateAdminUserRequest = z.infer<typeof ZUpdateAdminUserRequest>;

/**
 * POST /api/admin/invites/send/: creates an invite bound to `email` and mails its link there. Invite
 * tokens are stored only as a hash, so a link can be mailed only when it is made.
 */
export const ZSendInviteRequest = ZCreateInviteRequest.extend({
  email: z.email('Invalid email address').max(254),
}).strict();
export type TSendInviteRequest = z.infer<typeof ZSendInviteRequest>;

export const ZSendInviteResponse = ZCreateInviteResponse.extend({ sent_to: z.string() });
export type TSendInviteResponse = z.infer<typeof ZSendInviteResponse>;

/** One thing the model check tried: what happened, and what the operator could change. */
export const ZModelCheckItem = z.object({
  name: z.string(),
  /** ok: works; degraded: Daybook works around it (said in detail); failed: it does not work; skipped. */
  status: z.enum(['ok', 'degraded', 'failed', 'skipped']),
  detail: z.string(),
  /** What the operator could change on the model server, when something can. */
  advice: z.string().nullable(),
});
export type TModelCheckItem = z.infer<typeof ZModelCheckItem>;

/** POST /api/admin/model-check/ (and `npm run check-model`): one probe of each capability. */
export const ZModelCheck = z.object({
  /** The configured endpoint (scheme, host and path) and model; null when no model is configured. */
  endpoint: z.string().nullable(),
  model: z.string().nullable(),
  checks: z.array(ZModelCheckItem),
  /** What Daybook will use, in a sentence per part. */
  uses: z.array(z.string()),
  /** The chat can answer (the checks that failed are worked around or optional). */
  ok: z.boolean(),
});
export type TModelCheck = z.infer<typeof ZModelCheck>;

/** What Daybook uses the model for: the chat (and onboarding), learning memories, research, daily messages. */
export const MODEL_PURPOSES = ['chat', 'learning', 'research', 'daily'] as const;
export const ZModelPurpose = z.enum(MODEL_PURPOSES);
/** Days the usage report covers at most (and by default). */
export const MODEL_USAGE_DAYS = 30;
/** Users the usage report lists, those who spent most first. */
export const MODEL_USAGE_TOP_USERS = 10;

/** Tokens as the model endpoint reported them (cached: of the prompt tokens, those it had cached). */
export const ZTokenCounts = z.object({
  calls: z.number().int().nonnegative(),
  prompt_tokens: z.number().int().nonnegative(),
  cached_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
});

export const ZModelUsageQuery = z.object({
  days: z.coerce
    .number({ error: 'Enter a whole number of days.' })
    .int('Enter a whole number of days.')
    .min(1, 'Enter at least 1 day.')
    .max(MODEL_USAGE_DAYS, `Enter at most ${MODEL_USAGE_DAYS} days.`)
    .default(MODEL_USAGE_DAYS),
});

/** GET /api/admin/usage/: the model's tokens over the last `days` days (UTC), today included. */
export const ZModelUsage = z.object({
  days: z.number().int(),
  /** The allowance of tokens per user and day (LLM_USER_DAILY_TOKENS); null: none. */
  daily_limit: z.number().int().nullable(),
  totals: ZTokenCounts,
  by_purpose: z.array(ZTokenCounts.extend({ purpose: ZModelPurpose })),
  by_day: z.array(ZTokenCounts.extend({ day: z.string() })),
  top_users: z.array(ZTokenCounts.extend({ id: z.number().int(), email: z.string() })),
});
export type TModelUsage = z.infer<typeof ZModelUsage>;
