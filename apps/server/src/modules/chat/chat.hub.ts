// Who is connected: every open socket of every user, by channel. Services publish events here and
// never touch sockets themselves.
import type { TServerEvent } from '@daybook/contracts';
import type { Channel } from './chat.repo.ts';

export interface Subscriber {
  channel: Channel;
  send(event: TServerEvent): void;
}

export function createChatHub() {
  const byUser = new Map<number, Set<Subscriber>>();
  return {
    add(userId: number, subscriber: Subscriber) {
      const set = byUser.get(userId) ?? new Set();
      set.add(subscriber);
      byUser.set(userId, set);
      return () => {
        set.delete(subscriber);
        if (!set.size) byUser.delete(userId);
      };
    },
    count: (userId: number) => byUser.get(userId)?.size ?? 0,
    /** Sends to every open tab of the user on that channel. */
    publish(userId: number, channel: Channel, event: TServerEvent) {
      for (const s of byUser.get(userId) ?? []) if (s.channel === channel) s.send(event);
    },
  };
}

export type ChatHub = ReturnType<typeof createChatHub>;
