// Searching the chat over HTTP (GET /api/chat/search/).
import { ZChatSearchPage } from '@daybook/contracts';
import { apiRequest } from '../../lib/api.ts';

export const CHAT_SEARCH_PATH = '/api/chat/search/';

/** A page of the user's chat messages containing `text`, newest first; `before` pages on from a message id. */
export function searchChat(text: string, before?: number, signal?: AbortSignal) {
  const params = new URLSearchParams({ q: text });
  if (before !== undefined) params.set('before', String(before));
  return apiRequest(`${CHAT_SEARCH_PATH}?${params}`, ZChatSearchPage, { signal });
}
