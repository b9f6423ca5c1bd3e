// Who is connected: every open socket of every user, by channel. Services publish events here and
// never touch sockets themselves.
import { CLOSE_CODES, type TServerEvent } from '@daybook/contracts';
import type { EndedSessions } from '../accounts/sessions.service.ts';
import type { RealtimeBus, RealtimeEvent } from '../realtime/realtime.bus.ts';
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
}

export const SESSION_ENDED = 'Session ended';

/**
 * `bus` carries publish, endSessions and updateUser to every process (see realtime.bus.ts); each
 * process's hub acts on its own sockets. Without one, this process is the only one.
 */
export function createChatHub(bus?: RealtimeBus) {
  const byUser = new Map<number, Set<Subscriber>>();
  let total = 0;

  const local = {
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
    publish(userId: number, channel: Channel, event: TServerEvent) {
      for (const s of byUser.get(userId) ?? []) if (s.channel === channel) s.send(event);
    },
  };
  const deliver = (event: RealtimeEvent) => {
    if (event.type === 'chat') local.publish(event.userId, event.channel, event.event);
    else if (event.type === 'sessions-ended') local.endSessions(event.ended);
    else local.updateUser(event.userId, event.settings);
  };
  bus?.subscribe(deliver);
  const send = bus ? (event: RealtimeEvent) => bus.publish(event) : deliver;

  return {
    add(userId: number, subscriber: Subscriber) {
      const set = byUser.get(userId) ?? new Set();
      if (!set.has(subscriber)) total++;
      set.add(subscriber);
      byUser.set(userId, set);
      return () => {
        if (set.delete(subscriber)) total--;
        if (!set.size) byUser.delete(userId);
      };
    },
    count: (userId: number) => byUser.get(userId)?.size ?? 0,
    /** Open sockets of every user. */
    total: () => total,
    /** A user changed their settings: their open sockets act on the new ones from the next message. */
    updateUser(userId: number, settings: Partial<Omit<ChatUser, 'id'>>) {
      send({ type: 'user-settings', userId, settings });
    },
    /** Closes the sockets of sessions that ended (1008: the client checks whether it is still signed in). */
    endSessions(ended: EndedSessions) {
      send({ type: 'sessions-ended', ended });
    },
    /** Sends to every open tab of the user on that channel. */
    publish(userId: number, channel: Channel, event: TServerEvent) {
      send({ type: 'chat', userId, channel, event });
    },
  };
}

export type ChatHub = ReturnType<typeof createChatHub>;
