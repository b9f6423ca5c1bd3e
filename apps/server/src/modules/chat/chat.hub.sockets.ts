// This process's open chat sockets, by user: joining, leaving, closing them at shutdown, and what
// reaches them (events, settings changes, ended sessions).
import { CLOSE_CODES, type TServerEvent } from '@daybook/contracts';
import type { EndedSessions } from '../accounts/sessions.service.ts';
import type { Channel } from './chat.repo.ts';

/** The user behind a socket, as the chat needs them; settings changes reach it while the socket is open. */
export interface ChatUser {
  id: number;
  learnFromChats: boolean;
  /** Finished the onboarding interview: its socket then only shows the conversation. */
  onboarded: boolean;
  /** The user's time zone setting; null: the one their memories name, else UTC. */
  timeZone?: string | null;
  /** The daily message this socket was opened on (/ws/chat/?dmid=): its answers have it in context. */
  dailyMessage?: { date: string; text: string } | null;
}

export interface Subscriber {
  channel: Channel;
  user: ChatUser;
  /** The session that opened the socket: the socket closes when it ends. */
  sessionId: string;
  send(event: TServerEvent): void;
  close(code: number, reason: string): void;
  /** Drops the connection without the closing handshake (a client that does not answer it). */
  terminate?(): void;
}

export const SESSION_ENDED = 'Session ended';

export function createHubSockets() {
  const byUser = new Map<number, Set<Subscriber>>();
  let total = 0;
  // Shutdown (closeAll): a socket that joins afterwards is closed the same way at once.
  let closedWith: { code: number; reason: string } | null = null;
  let emptied: (() => void) | null = null;

  return {
    add(userId: number, subscriber: Subscriber) {
      const set = byUser.get(userId) ?? new Set();
      if (!set.has(subscriber)) total++;
      set.add(subscriber);
      byUser.set(userId, set);
      if (closedWith) subscriber.close(closedWith.code, closedWith.reason);
      return () => {
        if (set.delete(subscriber)) {
          total--;
          if (!total) emptied?.();
        }
        if (!set.size) byUser.delete(userId);
      };
    },
    count: (userId: number) => byUser.get(userId)?.size ?? 0,
    /** Open sockets of every user. */
    total: () => total,
    /**
     * Shutdown: closes this process's sockets with `code` (their clients reconnect at once, to
     * another instance) and waits at most `graceMs` for them to go; any still open are then dropped,
     * so a client that never answers the close does not hold up the server's.
     */
    async closeAll(code: number, reason: string, graceMs: number) {
      closedWith = { code, reason };
      for (const set of byUser.values()) for (const s of [...set]) s.close(code, reason);
      if (total)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          emptied = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      emptied = null;
      for (const set of byUser.values()) for (const s of [...set]) s.terminate?.();
    },
    updateUser(userId: number, settings: Partial<Omit<ChatUser, 'id'>>) {
      for (const s of byUser.get(userId) ?? []) Object.assign(s.user, settings);
    },
    endSessions(ended: EndedSessions) {
      const matching: Subscriber[] = [];
      if ('ids' in ended) {
        const ids = new Set(ended.ids);
        for (const set of byUser.values()) for (const s of set) if (ids.has(s.sessionId)) matching.push(s);
      } else {
        for (const s of byUser.get(ended.userId) ?? []) if (s.sessionId !== ended.exceptId) matching.push(s);
      }
      for (const s of matching) s.close(CLOSE_CODES.policyViolation, SESSION_ENDED);
    },
    /** Sends to this process's tabs of the user on that channel. */
    send(userId: number, channel: Channel, event: TServerEvent) {
      for (const s of byUser.get(userId) ?? []) if (s.channel === channel) s.send(event);
    },
  };
}
