// What the assistant knows about a user: /api/memories/...
import { z } from 'zod';
import { MAX_ROW_ID, thousands } from './common.ts';

export const MEMORY_PAGE_SIZE = 30;
export const MEMORY_KEY_MAX = 200;
export const MEMORY_DATA_MAX = 10_000;
export const MEMORY_URL_MAX = 2000;
export const MEMORY_FREQUENCY_MAX = 200;
/** Active memories one user may keep; creating, restoring, importing and learning stop there. */
export const MEMORY_MAX = 10_000;
/** Memories in one import file: a whole export of a full account fits. */
export const MEMORY_IMPORT_MAX = MEMORY_MAX;
/** Size of an import upload. */
export const MEMORY_IMPORT_BYTES_MAX = 20 * 1024 * 1024;
/** Memory exports one user may download an hour: each reads every memory they have. */
export const MEMORY_EXPORTS_PER_HOUR = 10;

/** Texts the web app shows as they are. */
export const MEMORY_MESSAGES = {
  exportLimit: `You can export your memories at most ${MEMORY_EXPORTS_PER_HOUR} times an hour. Try again later.`,
  exportRunning: 'Your memories are already being exported. Wait for that download to finish, then try again.',
  exportFailed: 'Failed to export your memories. Please try again.',
};

/** The fixed set of memory types; the assistant's learning uses the same set. */
export const MEMORY_TYPES = [
  { value: 'text', label: 'Fact', description: 'A general fact about you.' },
  {
    value: 'interest',
    label: 'Interest',
    description: 'A topic to follow. With a frequency, it feeds research in your daily message.',
  },
  {
    value: 'activity',
    label: 'Activity',
    description: 'Something you do regularly, with how often (e.g. "runs on Tuesdays").',
  },
  { value: 'location', label: 'Location', description: 'Where you live; used for the weather in your daily message.' },
  { value: 'preference', label: 'Preference', description: 'How you like things done.' },
  { value: 'person', label: 'Person', description: 'Someone in your life.' },
  { value: 'website', label: 'Website', description: 'A site to keep an eye on.' },
] as const;

export const ZMemoryType = z.enum(['text', 'interest', 'activity', 'location', 'preference', 'person', 'website'], {
  error: `Choose one of: ${MEMORY_TYPES.map((t) => t.value).join(', ')}.`,
});
export type TMemoryType = z.infer<typeof ZMemoryType>;

export const ZMemoryCategory = z.object({ value: ZMemoryType, label: z.string(), description: z.string() });
export const ZMemoryCategories = z.array(ZMemoryCategory);
export type TMemoryCategory = z.infer<typeof ZMemoryCategory>;

/** Who made a memory: the user, the assistant in the chat or in onboarding, or an import. */
export const ZMemorySource = z.enum(['user', 'chat', 'onboarding', 'import']);

export const ZMemory = z.object({
  id: z.number().int(),
  key: z.string(),
  data: z.string(),
  memory_type: ZMemoryType,
  memory_type_display: z.string(),
  url: z.string().nullable(),
  frequency_description: z.string().nullable(),
  source: ZMemorySource,
  /** The message the assistant learned this from, when source is "chat" or "onboarding". */
  source_message_id: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
  deleted_reason: z.string().nullable(),
});
export type TMemory = z.infer<typeof ZMemory>;

export const ZMemoryPage = z.object({
  results: z.array(ZMemory),
  count: z.number().int(),
  next: z.string().nullable(),
  previous: z.string().nullable(),
});
export type TMemoryPage = z.infer<typeof ZMemoryPage>;

const key = z
  .string({ error: 'Key is required.' })
  .trim()
  .min(1, 'Key is required.')
  .max(MEMORY_KEY_MAX, `Key must be at most ${MEMORY_KEY_MAX} characters.`);
const data = z
  .string({ error: 'Data is required.' })
  .trim()
  .min(1, 'Memory data cannot be blank.')
  .max(MEMORY_DATA_MAX, `Data must be at most ${thousands(MEMORY_DATA_MAX)} characters.`);
const url = z
  .string()
  .trim()
  .max(MEMORY_URL_MAX, `URL must be at most ${MEMORY_URL_MAX} characters.`)
  .refine((v) => v === '' || /^https?:\/\/[^\s/$.?#][^\s]*$/i.test(v), 'Enter a URL starting with http:// or https://.')
  .transform((v) => v || null)
  .nullable();
const frequency = z
  .string()
  .trim()
  .max(MEMORY_FREQUENCY_MAX, `Frequency must be at most ${MEMORY_FREQUENCY_MAX} characters.`)
  .transform((v) => v || null)
  .nullable();

/** POST /api/memories/ and PUT /api/memories/{id}/ */
export const ZMemoryInput = z
  .object({
    key,
    data,
    memory_type: ZMemoryType.default('text'),
    url: url.optional(),
    frequency_description: frequency.optional(),
    restore_deleted: z.boolean().optional(),
  })
  .strict();
export type TMemoryInput = z.input<typeof ZMemoryInput>;

/** PATCH /api/memories/{id}/ */
export const ZMemoryPatch = z
  .object({
    key: key.optional(),
    data: data.optional(),
    memory_type: ZMemoryType.optional(),
    url: url.optional(),
    frequency_description: frequency.optional(),
    restore_deleted: z.boolean().optional(),
  })
  .strict();
export type TMemoryPatch = z.input<typeof ZMemoryPatch>;

/** DELETE /api/memories/{id}/ (body optional) */
export const ZMemoryDelete = z.object({ reason: z.string().trim().max(500).optional() }).strict();

const LIMIT_ERROR = 'limit must be a whole number from 1 to 100.';
const OFFSET_ERROR = 'offset must be a whole number, 0 or more.';

export const ZMemoryListQuery = z.object({
  // One message per field, whichever way a value is wrong.
  limit: z.coerce
    .number({ error: LIMIT_ERROR })
    .refine((n) => Number.isInteger(n) && n >= 1 && n <= 100, LIMIT_ERROR)
    .default(MEMORY_PAGE_SIZE),
  offset: z.coerce
    .number({ error: OFFSET_ERROR })
    .refine((n) => Number.isInteger(n) && n >= 0 && n <= MAX_ROW_ID, OFFSET_ERROR)
    .default(0),
  show_deleted: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((v) => v === 'true' || v === '1'),
  search: z.string().trim().max(200).optional(),
});

export const ZMemoryExportItem = z.object({
  key,
  data,
  memory_type: ZMemoryType.default('text'),
  url: url.optional(),
  frequency_description: frequency.optional(),
});

export const ZMemoryExport = z.object({
  format: z.literal('daybook-memories'),
  version: z.literal(1),
  exported_at: z.string(),
  memories: z.array(ZMemoryExportItem),
});
export type TMemoryExport = z.infer<typeof ZMemoryExport>;

/** POST /api/memories/import/: an export file, or just its memories. */
export const ZMemoryImport = z.object({
  format: z.literal('daybook-memories').optional(),
  version: z.literal(1).optional(),
  exported_at: z.string().optional(),
  memories: z
    .array(ZMemoryExportItem)
    .max(MEMORY_IMPORT_MAX, `At most ${thousands(MEMORY_IMPORT_MAX)} memories per import.`),
});

export const ZMemoryImportResult = z.object({
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
});
export type TMemoryImportResult = z.infer<typeof ZMemoryImportResult>;
