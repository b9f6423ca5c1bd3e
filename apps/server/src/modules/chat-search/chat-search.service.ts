import type { TChatSearchPage } from '@daybook/contracts';
import type { ChatSearchRepo } from './chat-search.repo.ts';
import { foldSearch, snippetFor } from './chat-search.snippet.ts';

export function createChatSearchService({ repo }: { repo: ChatSearchRepo }) {
  return {
    /** A page of the user's chat messages containing `text`, newest first, each with its snippet. */
    async search(userId: number, text: string, limit: number, before?: number): Promise<TChatSearchPage> {
      const folded = foldSearch(text);
      // Only accents (combining marks) fold to nothing, which would match every message.
      if (!folded) return { results: [], has_more: false };
      const { rows, hasMore } = await repo.search(userId, folded, limit, before);
      return {
        results: rows.map((row) => ({
          message_id: row.id,
          author_type: row.authorType,
          message_type: row.messageType,
          timestamp: row.createdAt.toISOString(),
          ...snippetFor(row.rawText, row.messageType, text),
        })),
        has_more: hasMore,
      };
    },
  };
}

export type ChatSearchService = ReturnType<typeof createChatSearchService>;
