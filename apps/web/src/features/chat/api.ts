// Older chat history over HTTP; the latest messages come over the socket.
import { CHAT_HISTORY_SIZE, ZChatHistoryPage } from '@daybook/contracts';
import { apiRequest } from '../../lib/api.ts';

export type ChatChannel = 'chat' | 'onboarding';

export const CHAT_MESSAGES_PATH = '/api/chat/messages/';

/** The page of messages before `before` (a message id), oldest first. */
export function fetchOlderMessages(channel: ChatChannel, before: number, signal?: AbortSignal) {
  const params = new URLSearchParams({ before: String(before), limit: String(CHAT_HISTORY_SIZE), channel });
  return apiRequest(`${CHAT_MESSAGES_PATH}?${params}`, ZChatHistoryPage, { signal });
}
