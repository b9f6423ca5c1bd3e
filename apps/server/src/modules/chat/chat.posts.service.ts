// The one way another module puts a message in a user's chat: research reports and notes, daily
// messages (and, later, automations). Stored once per key, then sent to every open tab.
import type { Clock } from '../../lib/clock.ts';
import type { ChatHub } from './chat.hub.ts';
import type { ChatRepo } from './chat.repo.ts';
import { presentMessage } from './chat.service.ts';

export interface ChatPost {
  /** Names what is posted (`research:<id>`, `daily:<id>`): the same key is posted once. */
  key: string;
  authorType: 'assistant' | 'system';
  messageType: string;
  rawText: string;
  url?: string;
  /** Stamp it with the service's clock (a daily message is dated by its run); else the database's. */
  stampWithClock?: boolean;
}

export function createChatPostsService({
  repo,
  hub,
  clock,
}: {
  repo: Pick<ChatRepo, 'post'>;
  hub: Pick<ChatHub, 'publish'>;
  clock: Clock;
}) {
  return {
    /**
     * Posts to the user's chat and sends it to their tabs, unless that key was posted before (a retry,
     * or a second worker): then nothing is sent and `created` is false. Null when the user is gone.
     */
    async post(userId: number, post: ChatPost): Promise<{ messageId: number; created: boolean } | null> {
      const stored = await repo.post({
        userId,
        key: post.key,
        authorType: post.authorType,
        messageType: post.messageType,
        rawText: post.rawText,
        url: post.url ?? null,
        ...(post.stampWithClock ? { at: clock.now() } : {}),
      });
      if (!stored) return null;
      if (stored.created) hub.publish(userId, 'chat', presentMessage(stored.row));
      return { messageId: stored.row.id, created: stored.created };
    },
  };
}

export type ChatPostsService = ReturnType<typeof createChatPostsService>;
