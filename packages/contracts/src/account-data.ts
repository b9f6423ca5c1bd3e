// A user's own data: GET /api/users/me/export/ (one JSON document, downloaded as a file) and
// POST /api/users/me/delete/ (the account and everything in it, after the password).
import { z } from 'zod';
import { ZTemperatureUnit, ZUserLocation } from './daily.ts';

/** What the file says it is, so a reader (or a later import) knows how to read it. */
export const ACCOUNT_EXPORT_FORMAT = 'daybook-export';
/** Bumped when a field changes meaning or goes away; new fields keep the version. */
export const ACCOUNT_EXPORT_VERSION = 1;
/** Exports a user may download per hour: each reads all their rows. */
export const ACCOUNT_EXPORTS_PER_HOUR = 5;

/** Texts the web app shows as they are. */
export const ACCOUNT_DATA_MESSAGES = {
  exportLimit: `You can download your data at most ${ACCOUNT_EXPORTS_PER_HOUR} times an hour. Try again later.`,
  exportFailed: 'Your data could not be downloaded. Please try again.',
  wrongPassword: 'The password is not correct.',
  passwordRequired: 'Enter your password to delete your account.',
  tooManyAttempts: 'Too many wrong passwords. Try again in a few minutes.',
  noPassword:
    'Your account has no password yet. Set one on the Change password page, then delete your account with it.',
  lastAdmin:
    'You are the only administrator of this Daybook, and other people use it. Make someone else an administrator first (npm run user -- promote <email>), then delete your account.',
  deleteFailed: 'Your account could not be deleted. Please try again.',
  deleted: 'Your account and everything in it were deleted.',
} as const;

// ---- the export document ------------------------------------------------------------------------

const ZIso = z.string();

export const ZExportEmailAddress = z.object({
  email: z.string(),
  primary: z.boolean(),
  verified: z.boolean(),
  created: ZIso,
});

export const ZExportAccount = z.object({
  id: z.number().int(),
  email: z.string(),
  email_addresses: z.array(ZExportEmailAddress),
  is_admin: z.boolean(),
  has_usable_password: z.boolean(),
  created: ZIso,
  last_sign_in: ZIso.nullable(),
  onboarded: ZIso.nullable(),
  settings: z.object({
    learn_from_chats: z.boolean(),
    time_zone: z.string().nullable(),
    location: ZUserLocation.nullable(),
    temperature_unit: ZTemperatureUnit,
    daily_message: z.object({
      paused: z.boolean(),
      /** HH:MM in time_zone. */
      time: z.string(),
      email: z.boolean(),
    }),
  }),
});

export const ZExportMemory = z.object({
  id: z.number().int(),
  key: z.string(),
  data: z.string(),
  memory_type: z.string(),
  url: z.string().nullable(),
  frequency_description: z.string().nullable(),
  /** user | chat | onboarding | import */
  source: z.string(),
  created: ZIso,
  updated: ZIso,
  /** Set on a deleted memory: kept (and restorable on the Memories page) until the account is deleted. */
  deleted_at: ZIso.nullable(),
  deleted_reason: z.string().nullable(),
});

export const ZExportChatMessage = z.object({
  id: z.number().int(),
  /** chat | onboarding */
  channel: z.string(),
  author_type: z.string(),
  message_type: z.string(),
  raw_text: z.string(),
  url: z.string().nullable(),
  created: ZIso,
  /** On an answer: the human message it answers. */
  reply_to_id: z.number().int().nullable(),
});

export const ZExportSource = z.object({ url: z.string(), title: z.string() });

export const ZExportResearch = z.object({
  id: z.number().int(),
  query: z.string(),
  /** queued | running | done | failed */
  status: z.string(),
  /** chat | daily */
  origin: z.string(),
  introduction: z.string().nullable(),
  body: z.string().nullable(),
  conclusion: z.string().nullable(),
  sources: z.array(ZExportSource),
  error: z.string().nullable(),
  created: ZIso,
  finished: ZIso.nullable(),
  /** The daily message it was made for (origin daily). */
  daily_message_id: z.number().int().nullable(),
  /** The chat message that asked for it. */
  request_message_id: z.number().int().nullable(),
});

export const ZExportDailyMessage = z.object({
  id: z.number().int(),
  /** The local date it is for (YYYY-MM-DD). */
  delivery_date: z.string(),
  /** pending | ready | failed */
  status: z.string(),
  /** schedule | now */
  trigger: z.string(),
  /** Markdown; null until written. */
  message_text: z.string().nullable(),
  created: ZIso,
  delivered: ZIso.nullable(),
  emailed: ZIso.nullable(),
  /** Its research reports (full text under `researches`, by id). */
  research_ids: z.array(z.number().int()),
});

/** A connected calendar as the user named it: never its tokens or its ICS address. */
export const ZExportCalendarConnection = z.object({
  /** google | microsoft | ics */
  provider: z.string(),
  provider_name: z.string(),
  /** The account's address or the calendar's name, as the connections page shows it. */
  name: z.string(),
  /** connected | needs_reconnect */
  status: z.string(),
  created: ZIso,
  last_synced: ZIso.nullable(),
});

/** What the assistant's model spent for the user on one day (UTC) and purpose, as the admin's Usage tab counts it. */
export const ZExportModelUsage = z.object({
  /** YYYY-MM-DD, UTC. */
  day: z.string(),
  /** chat | learning | research | daily */
  purpose: z.string(),
  calls: z.number().int(),
  prompt_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  completion_tokens: z.number().int(),
});

export const ZAccountExport = z.object({
  format: z.literal(ACCOUNT_EXPORT_FORMAT),
  version: z.literal(ACCOUNT_EXPORT_VERSION),
  exported_at: ZIso,
  account: ZExportAccount,
  /** Active and deleted memories; a deleted one has `deleted_at`. */
  memories: z.array(ZExportMemory),
  /** Both channels (chat and onboarding), oldest first. */
  chat_messages: z.array(ZExportChatMessage),
  daily_messages: z.array(ZExportDailyMessage),
  researches: z.array(ZExportResearch),
  calendar_connections: z.array(ZExportCalendarConnection),
  model_usage: z.array(ZExportModelUsage),
});
export type TAccountExport = z.infer<typeof ZAccountExport>;
export type TExportAccount = z.infer<typeof ZExportAccount>;
export type TExportMemory = z.infer<typeof ZExportMemory>;
export type TExportChatMessage = z.infer<typeof ZExportChatMessage>;
export type TExportResearch = z.infer<typeof ZExportResearch>;
export type TExportDailyMessage = z.infer<typeof ZExportDailyMessage>;
export type TExportCalendarConnection = z.infer<typeof ZExportCalendarConnection>;
export type TExportModelUsage = z.infer<typeof ZExportModelUsage>;

// ---- deleting the account -----------------------------------------------------------------------

export const ZDeleteAccountRequest = z.object({
  password: z
    .string({ error: ACCOUNT_DATA_MESSAGES.passwordRequired })
    .min(1, ACCOUNT_DATA_MESSAGES.passwordRequired)
    .max(4096, ACCOUNT_DATA_MESSAGES.wrongPassword),
});
export type TDeleteAccountRequest = z.infer<typeof ZDeleteAccountRequest>;

export const ZDeleteAccountResponse = z.object({ deleted: z.literal(true) });
export type TDeleteAccountResponse = z.infer<typeof ZDeleteAccountResponse>;
