// The user's history: GET /api/resources/ lists daily messages and research reports, newest first.
import { z } from 'zod';
import { ZResearchStatus } from './research.ts';

/** The spec's constants: fetched 30 at a time, 15 shown per page, at most 60 held, previews of 150. */
export const RESOURCES_FETCH = 30;
export const RESOURCES_PAGE_SIZE = 15;
export const RESOURCES_HELD_MAX = 60;
export const RESOURCES_PREVIEW_MAX = 150;

export const ZResourceType = z.enum(['daily_message', 'research']);
export type TResourceType = z.infer<typeof ZResourceType>;

const CURSOR_MESSAGE = "must be a date and time (ISO 8601), e.g. an item's sort_date";
const ZCursor = z.iso
  .datetime({ offset: true, error: CURSOR_MESSAGE })
  // Dates the database can hold (year 0000 parses as ISO 8601 but is no PostgreSQL timestamp).
  .refine((v) => {
    const year = new Date(v).getUTCFullYear();
    return year >= 1 && year <= 9999;
  }, CURSOR_MESSAGE);

/** GET /api/resources/?limit=30&before=<sort_date>|after=<sort_date> */
export const ZResourcesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(RESOURCES_FETCH),
    /** Items older than this sort_date (the next page). */
    before: ZCursor.optional(),
    /** Items newer than this sort_date (new since the list was loaded), oldest of them first. */
    after: ZCursor.optional(),
  })
  .refine((q) => !(q.before && q.after), { message: 'Give before or after, not both.', path: ['after'] });
export type TResourcesQuery = z.infer<typeof ZResourcesQuery>;

/** The spec's resource list item (resource_type, id, sort_date, created) plus what the list shows. */
export const ZResourceItem = z.object({
  resource_type: ZResourceType,
  id: z.number().int(),
  /** ISO 8601; the list's order and its cursors. */
  sort_date: z.string(),
  created: z.string(),
  /** Research: its query. Daily message: its delivery date (YYYY-MM-DD). */
  title: z.string(),
  /** Daily message: the start of its text, at most RESOURCES_PREVIEW_MAX characters. */
  preview: z.string().nullable(),
  /** Research only: where it is (a failed one stays in the history with its reason). */
  status: ZResearchStatus.nullable(),
});
export type TResourceItem = z.infer<typeof ZResourceItem>;

/** The response: a bare array, newest first (oldest first with `after`). */
export const ZResourceList = z.array(ZResourceItem);
export type TResourceList = z.infer<typeof ZResourceList>;
