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
  /** Drops the connection without the closing handshake (a client that does not answer it). */
  terminate?(): void;
}

export const SESSION_ENDED = 'Session ended';

/** A stream with no new piece for this long belongs to an instance that is gone: it is forgotten. */
export const STREAM_STALE_MS = 120_000;

interface LiveStream {
  channel: Channel;
  replyTo?: number;
  text: string;
  at: number;
}

/** `at`: when the stop was asked (ms since the epoch); answers begun after it are not its target. */
export type StopHandler = (userId: number, channel: Channel, replyTo: number | undefined, at: number) => void;

/**
 * `bus` carries publish, endSessions and updateUser to every process (see realtime.bus.ts); each
 * process's hub acts on its own sockets. Without one, this process is the only one.
 */
export function createChatHub(bus?: RealtimeBus, now: () => number = Date.now) {
  const byUser = new Map<number, Set<Subscriber>>();
  let total = 0;
  // Shutdown (closeAll): a socket that joins afterwards is closed the same way at once.
  let closedWith: { code: number; reason: string } | null = null;
  let emptied: (() => void) | null = null;
  // Every answer being written, whichever instance writes it (every instance sees every event), with
  // its text so far, by user and stream id: a tab that connects mid-answer gets it with its history.
  const streams = new Map<number, Map<string, LiveStream>>();
  const stopHandlers: StopHandler[] = [];
  const cancelHandlers: Array<(researchId: number) => void> = [];
  // Human messages whose answer has not begun yet, by user and message id, with the same reach: a tab
  // that connects then shows that Daybook is replying. Filled by the message's echo, or by a
  // Regenerate or Retry of it (awaitAnswer).
  const awaiting = new Map<number, Map<number, { channel: Channel; at: number }>>();
  // Entries of instances that died are forgotten when a tab connects: the user's at once, everyone's
  // at most once per STREAM_STALE_MS, so a connect's cost does not grow with the number of users.
  let swept = now();
  const dropStale = <K, T extends { at: number }>(byKey: Map<number, Map<K, T>>, userId: number) => {
    const entries = byKey.get(userId);
    if (!entries) return;
    const stale = now() - STREAM_STALE_MS;
    for (const [key, entry] of entries) if (entry.at < stale) entries.delete(key);
    if (!entries.size) byKey.delete(userId);
  };
  const sweep = () => {
    if (now() - swept < STREAM_STALE_MS) return;
    swept = now();
    for (const userId of [...streams.keys()]) dropStale(streams, userId);
    for (const userId of [...awaiting.keys()]) dropStale(awaiting, userId);
  };
  const markAwaiting = (userId: number, channel: Channel, messageId: number) => {
    const mine = awaiting.get(userId) ?? new Map<number, { channel: Channel; at: number }>();
    awaiting.set(userId, mine.set(messageId, { channel, at: now() }));
  };
  const unmarkAwaiting = (userId: number, messageId: number, channel?: Channel) => {
    const mine = awaiting.get(userId);
    const entry = mine?.get(messageId);
    if (!mine || !entry || (channel !== undefined && entry.channel !== channel)) return;
    mine.delete(messageId);
    if (!mine.size) awaiting.delete(userId);
  };
  const follow = (userId: number, channel: Channel, event: TServerEvent) => {
    if (event.message_type === 'message' && event.author_type === 'human' && event.message_id !== null) {
      markAwaiting(userId, channel, event.message_id);
      return;
    }
    if ('reply_to' in event && event.reply_to !== undefined) unmarkAwaiting(userId, event.reply_to);
    if (event.message_type === 'stream') {
      let mine = streams.get(userId);
      if (!mine) {
        mine = new Map<string, LiveStream>();
        streams.set(userId, mine);
      }
      const live = mine.get(event.stream_id);
      if (live) {
        live.text += event.raw_text;
        live.at = now();
      } else {
        mine.set(event.stream_id, {
          channel,
          text: event.raw_text,
          at: now(),
          ...(event.reply_to === undefined ? {} : { replyTo: event.reply_to }),
        });
      }
      return;
    }
    if (
      event.message_type === 'history' ||
      event.message_type === 'queued' ||
      event.message_type === 'error' ||
      event.message_type === 'research' ||
      event.message_type === 'pong'
    )
      return;
    const mine = streams.get(userId);
    if (!mine || (event.stream_id === undefined && event.reply_to === undefined)) return;
    // The final message (or a note in the answer's place) ends it.
    if (event.stream_id !== undefined) mine.delete(event.stream_id);
    if (event.reply_to !== undefined)
      for (const [id, live] of mine) if (live.replyTo !== undefined && live.replyTo === event.reply_to) mine.delete(id);
    if (!mine.size) streams.delete(userId);
  };

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
      follow(userId, channel, event);
      for (const s of byUser.get(userId) ?? []) if (s.channel === channel) s.send(event);
    },
  };
  const deliver = (event: RealtimeEvent) => {
    if (event.type === 'chat') local.publish(event.userId, event.channel, event.event);
    else if (event.type === 'chat-stop')
      // A stop replayed after a bus reconnect must not end an answer begun after it was asked.
      for (const handler of stopHandlers) handler(event.userId, event.channel, event.replyTo, event.at ?? now());
    else if (event.type === 'chat-awaiting' && event.awaiting)
      markAwaiting(event.userId, event.channel, event.messageId);
    else if (event.type === 'chat-awaiting') unmarkAwaiting(event.userId, event.messageId, event.channel);
    else if (event.type === 'research-cancel') for (const handler of cancelHandlers) handler(event.researchId);
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
    /** The user asked to stop an answer: every instance hears it, the one writing it ends it. */
    stop(userId: number, channel: Channel, replyTo?: number) {
      send({ type: 'chat-stop', userId, channel, at: now(), ...(replyTo === undefined ? {} : { replyTo }) });
    },
    onStop(handler: StopHandler) {
      stopHandlers.push(handler);
    },
    /** A research was cancelled: every instance hears it, the one running it stops. */
    cancelResearch(researchId: number) {
      send({ type: 'research-cancel', researchId });
    },
    onResearchCancel(handler: (researchId: number) => void) {
      cancelHandlers.push(handler);
    },
    /**
     * The user's message is to be answered again (Regenerate, Retry): it has no echo, so every instance
     * is told it awaits its answer, until the answer's first piece or its end (as after an echo).
     */
    awaitAnswer(userId: number, channel: Channel, messageId: number) {
      send({ type: 'chat-awaiting', userId, channel, messageId, awaiting: true });
    },
    /** Its answer will not come after all (the message was not found, or answering it failed). */
    answerNotComing(userId: number, channel: Channel, messageId: number) {
      send({ type: 'chat-awaiting', userId, channel, messageId, awaiting: false });
    },
    /** The user's human messages on that channel whose answer has not begun, oldest first. */
    answering(userId: number, channel: Channel) {
      sweep();
      dropStale(awaiting, userId);
      const out: number[] = [];
      for (const [id, a] of awaiting.get(userId) ?? []) if (a.channel === channel) out.push(id);
      return out.sort((x, y) => x - y);
    },
    /** The user's answers being written on that channel, with their text so far. */
    liveStreams(userId: number, channel: Channel) {
      sweep();
      dropStale(streams, userId);
      const out: Array<{ stream_id: string; raw_text: string; reply_to?: number }> = [];
      for (const [id, live] of streams.get(userId) ?? []) {
        if (live.channel !== channel) continue;
        out.push({
          stream_id: id,
          raw_text: live.text,
          ...(live.replyTo === undefined ? {} : { reply_to: live.replyTo }),
        });
      }
      return out;
    },
  };
}

export type ChatHub = ReturnType<typeof createChatHub>;
