// Who is connected: every open socket of every user, by channel. Services publish events here and
// never touch sockets themselves. The sockets (chat.hub.sockets.ts) and the answers in progress
// (chat.hub.live.ts) are kept apart; this carries events between them and the bus.
import type { TServerEvent } from '@daybook/contracts';
import { preciseNow } from '../../lib/clock.ts';
import type { EndedSessions } from '../accounts/sessions.service.ts';
import type { RealtimeBus, RealtimeEvent } from '../realtime/index.ts';
import { createLiveAnswers } from './chat.hub.live.ts';
import { type ChatUser, createHubSockets } from './chat.hub.sockets.ts';
import type { Channel } from './chat.repo.ts';

export { STREAM_STALE_MS } from './chat.hub.live.ts';
export { type ChatUser, SESSION_ENDED, type Subscriber } from './chat.hub.sockets.ts';

/** `at`: when the stop was asked (ms since the epoch); answers begun after it are not its target. */
export type StopHandler = (userId: number, channel: Channel, replyTo: number | undefined, at: number) => void;

/**
 * `bus` carries publish, endSessions and updateUser to every process (see realtime.bus.ts); each
 * process's hub acts on its own sockets. Without one, this process is the only one.
 */
export function createChatHub(bus?: RealtimeBus, now: () => number = Date.now) {
  const sockets = createHubSockets();
  const live = createLiveAnswers(now);
  const stopHandlers: StopHandler[] = [];
  const cancelHandlers: Array<(researchId: number) => void> = [];

  const deliver = (event: RealtimeEvent) => {
    if (event.type === 'chat') {
      live.follow(event.userId, event.channel, event.event);
      sockets.send(event.userId, event.channel, event.event);
    } else if (event.type === 'chat-stop')
      // A stop replayed after a bus reconnect must not end an answer begun after it was asked.
      for (const handler of stopHandlers) handler(event.userId, event.channel, event.replyTo, event.at ?? now());
    else if (event.type === 'chat-awaiting' && event.awaiting)
      live.markAwaiting(event.userId, event.channel, event.messageId);
    else if (event.type === 'chat-awaiting') live.unmarkAwaiting(event.userId, event.messageId, event.channel);
    else if (event.type === 'research-cancel') for (const handler of cancelHandlers) handler(event.researchId);
    else if (event.type === 'sessions-ended') sockets.endSessions(event.ended);
    else sockets.updateUser(event.userId, event.settings);
  };
  bus?.subscribe(deliver);
  const send = bus ? (event: RealtimeEvent) => bus.publish(event) : deliver;

  return {
    add: sockets.add,
    count: sockets.count,
    /** Open sockets of every user. */
    total: sockets.total,
    closeAll: sockets.closeAll,
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
      send({ type: 'chat-stop', userId, channel, at: preciseNow(), ...(replyTo === undefined ? {} : { replyTo }) });
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
    answering: live.answering,
    liveStreams: live.liveStreams,
  };
}

export type ChatHub = ReturnType<typeof createChatHub>;
