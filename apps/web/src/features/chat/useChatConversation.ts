// The conversation on one socket: its messages and research cards, whether Daybook is replying, the
// notice under the header, and what each server event changes. Messages the server never got (the
// socket dropped first) go out again on the next connection (useResendPending).
import type { TServerEvent } from '@daybook/contracts';
import { startTransition, useEffect, useReducer, useRef, useState } from 'react';
import { loadDraft, saveDraft } from '../../lib/drafts.ts';
import { chatReducer, initialChatState, isPending } from './chat.state.ts';
import { noResearchCards, researchCardsReducer } from './research.cards.ts';
import { type SocketConstructor, type Timers, useChatSocket } from './useChatSocket.ts';
import { useResendPending } from './useResendPending.ts';

export const BAD_FRAME = 'Error processing message from server';
export const CARRIED_TO_CHAT = "Onboarding is finished, so your message is waiting in the chat's message box.";

export interface ChatConversationOptions {
  url: string;
  checkSession?: () => Promise<boolean>;
  WebSocketImpl?: SocketConstructor;
  timers: Timers;
  /** A task notification came; `final` for the last one of its task. */
  onNotification: (text: string, final: boolean) => void;
  /** A redirect came: follows it, true when it began the end of onboarding. */
  onRedirect: (target: string) => boolean;
}

export function useChatConversation({
  url,
  checkSession,
  WebSocketImpl,
  timers,
  onNotification,
  onRedirect,
}: ChatConversationOptions) {
  const [state, dispatch] = useReducer(chatReducer, initialChatState);
  const [research, dispatchResearch] = useReducer(researchCardsReducer, noResearchCards);
  /** Researches whose Cancel was pressed here, until their card says how they ended. */
  const [cancelling, setCancelling] = useState<ReadonlySet<number>>(() => new Set());
  const stateRef = useRef(state);
  stateRef.current = state;
  const [awaitingReply, setAwaitingReply] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  // Onboarding finished in another tab (the server refused a message here): what was still being
  // sent goes to the chat's message box, where it belongs, instead of being lost.
  const [closedHere, setClosedHere] = useState(false);
  const finishedElsewhere = (text: string) => {
    const unsent = stateRef.current.items.filter(isPending);
    for (const item of unsent) dispatch({ type: 'unsend', key: item.key });
    if (unsent.length) {
      const carried = [loadDraft('chat'), ...unsent.map((item) => item.raw_text)].filter(Boolean).join('\n\n');
      saveDraft('chat', carried);
    }
    setClosedHere(true);
    setNotice(unsent.length ? CARRIED_TO_CHAT : text);
  };

  const onEvent = (event: TServerEvent) => {
    switch (event.message_type) {
      case 'history':
        // Up to 50 messages of markdown at once: rendered as a transition, React does the work in
        // slices between which the page still answers, not in one long task (Lighthouse's blocking
        // time on /chat halved). Events after it are applied in order on top.
        startTransition(() => {
          dispatch({
            type: 'history',
            messages: event.messages,
            hasMore: event.has_more,
            streams: event.streams,
            answering: event.answering,
          });
          dispatchResearch({ type: 'history', cards: event.researches ?? [], messages: event.messages });
          // A cancel the last connection may have lost can be pressed again.
          setCancelling(new Set());
          // An answer on its way that has not begun (asked in another tab, or before a reload): Daybook is replying.
          if (event.answering?.length) setAwaitingReply(true);
          setHistoryReady(true);
        });
        resendAfterHistory();
        return;
      case 'stream':
        dispatch({ type: 'stream', streamId: event.stream_id, delta: event.raw_text, replyTo: event.reply_to });
        setAwaitingReply(false);
        return;
      case 'queued':
        dispatch({ type: 'queued', messageId: event.message_id });
        return;
      case 'error':
        setAwaitingReply(false);
        setCancelling(new Set());
        if (event.code === 'onboarding_finished') {
          finishedElsewhere(event.raw_text);
          return;
        }
        setNotice(event.raw_text);
        return;
      case 'task_notification':
      case 'task_notification_final':
        onNotification(event.raw_text, event.message_type === 'task_notification_final');
        return;
      case 'research':
        dispatchResearch({ type: 'card', card: event.research });
        return;
      case 'pong':
        return;
      case 'redirect':
        dispatch({ type: 'message', message: event });
        if (onRedirect(event.url ?? '')) setAwaitingReply(false);
        return;
      default:
        dispatch({ type: 'message', message: event });
        dispatchResearch({ type: 'message', message: event });
        // A message sent from another tab gets its reply here too.
        setAwaitingReply(event.author_type === 'human');
    }
  };

  const socket = useChatSocket({
    url,
    onEvent,
    onBadFrame: () => setNotice(BAD_FRAME),
    checkSession,
    WebSocketImpl,
    timers,
  });
  const connected = socket.status === 'connected';
  // Messages go out once this connection's history is in: what was pending before is then known
  // (the resend below), and nothing typed meanwhile is mistaken for it.
  const [historyReady, setHistoryReady] = useState(false);
  useEffect(() => {
    if (!connected) setHistoryReady(false);
  }, [connected]);

  const resendAfterHistory = useResendPending(state.items, socket.send, setAwaitingReply);

  // A reply that was on its way when the connection dropped will not arrive on this socket.
  useEffect(() => {
    if (socket.status === 'disconnected' || socket.status === 'error') setAwaitingReply(false);
  }, [socket.status]);

  const cancelResearch = (id: number) => {
    if (!socket.send({ message_type: 'cancel_research', id })) return;
    setCancelling((ids) => new Set(ids).add(id));
    // As after a message: a connection that took it and died is found within seconds.
    socket.probe();
  };

  // While an answer is being written, later messages wait: the typing dots stay for them.
  const waiting = state.items.some((item) => item.queued);
  const streaming = state.items.find((item) => item.streaming);
  /** An answer is on its way (here or in another tab): Stop is offered. */
  const answering = connected && (streaming !== undefined || awaitingReply || waiting);

  return {
    state,
    stateRef,
    dispatch,
    research,
    cancelling,
    cancelResearch,
    awaitingReply,
    setAwaitingReply,
    notice,
    setNotice,
    closedHere,
    socket,
    connected,
    historyReady,
    waiting,
    streaming,
    answering,
  };
}
