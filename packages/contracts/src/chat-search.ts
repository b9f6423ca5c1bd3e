// Searching the chat: GET /api/chat/search/?q=<text>&limit=<n>&before=<message_id>, newest first.
import { z } from 'zod';
import { ZRowId } from './common.ts';

export const CHAT_SEARCH_PAGE_SIZE = 20;
export const CHAT_SEARCH_PAGE_MAX = 50;
export const CHAT_SEARCH_TEXT_MAX = 200;

export const CHAT_SEARCH_TEXT_REQUIRED = 'Enter something to search for.';
export const CHAT_SEARCH_TEXT_TOO_LONG = `Search for at most ${CHAT_SEARCH_TEXT_MAX} characters.`;
const LIMIT_ERROR = `Limit must be a whole number from 1 to ${CHAT_SEARCH_PAGE_MAX}.`;

export const ZChatSearchQuery = z.object({
  /** Taken literally (no wildcards), case- and accent-insensitively. */
  q: z
    .string({ error: CHAT_SEARCH_TEXT_REQUIRED })
    .trim()
    .min(1, CHAT_SEARCH_TEXT_REQUIRED)
    .max(CHAT_SEARCH_TEXT_MAX, CHAT_SEARCH_TEXT_TOO_LONG),
  limit: z.coerce
    .number({ error: LIMIT_ERROR })
    .refine((n) => Number.isInteger(n) && n >= 1 && n <= CHAT_SEARCH_PAGE_MAX, LIMIT_ERROR)
    .default(CHAT_SEARCH_PAGE_SIZE),
  /** The next page: results older than this message_id (the last result's). */
  before: ZRowId.optional(),
});
export type TChatSearchQuery = z.input<typeof ZChatSearchQuery>;

/** Where the searched text is in a snippet: [start, end) in UTF-16 code units (JavaScript string indices). */
export const ZChatSearchHighlight = z.object({
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
});
export type TChatSearchHighlight = z.infer<typeof ZChatSearchHighlight>;

export const ZChatSearchResult = z.object({
  message_id: z.number().int(),
  author_type: z.enum(['human', 'assistant']),
  /** research_report: a web research report in the chat, found by its readable text (never its JSON). */
  message_type: z.enum(['message', 'markdown', 'research_report']),
  /** ISO 8601. */
  timestamp: z.string(),
  /**
   * Plain text around the first match (markdown marks removed, white space collapsed), "…" where cut;
   * for a research report, of the part that matched (query, introduction, body, conclusion or a source title).
   */
  snippet: z.string(),
  highlights: z.array(ZChatSearchHighlight),
});
export type TChatSearchResult = z.infer<typeof ZChatSearchResult>;

export const ZChatSearchPage = z.object({ results: z.array(ZChatSearchResult), has_more: z.boolean() });
export type TChatSearchPage = z.infer<typeof ZChatSearchPage>;
