// The chat screen shared by /chat and /onboarding: message list, typing indicator, task
// notifications, connection banners and the composer. ChatView puts the pieces together; each
// concern lives in its own hook (use*.ts) or component beside it.
import { DAILY_MESSAGES } from '@daybook/contracts';
import { type ReactNode, useCallback, useEffect, useId, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { Banner } from '../../components/Banner.tsx';
import { ErrorBoundary } from '../../components/ErrorBoundary.tsx';
import { invalidateSession } from '../auth/allauth.ts';
import { getMe } from '../auth/api.ts';
import { useAuth } from '../auth/auth-context.tsx';
import { ChatSearchButton } from '../chat-search/ChatSearch.tsx';
import { ResearchCard } from '../research/ResearchCard.tsx';
import type { ChatChannel } from './api.ts';
import { ChatHeader } from './ChatHeader.tsx';
import { Composer } from './Composer.tsx';
import { ConnectionBanners } from './ConnectionBanners.tsx';
import type { ChatItem } from './chat.state.ts';
import { MessageList, type MessageProps } from './MessageList.tsx';
import { OnboardingFinish } from './OnboardingFinish.tsx';
import { SkipOnboardingButton } from './OnboardingSkip.tsx';
import { socketUrl } from './reconnect.ts';
import { TaskNotifications } from './TaskNotifications.tsx';
import { useAnswerAgain } from './useAnswerAgain.ts';
import { useChatConversation } from './useChatConversation.ts';
import { browserTimers, type SocketConstructor, type Timers } from './useChatSocket.ts';
import { useComposerFocus } from './useComposerFocus.ts';
import { useConnectionState } from './useConnectionState.ts';
import { useDailyMessageTarget } from './useDailyMessageTarget.ts';
import { useLater } from './useLater.ts';
import { useMessageDays } from './useMessageDays.ts';
import { useMessageHighlight } from './useMessageHighlight.ts';
import { useMessageList } from './useMessageList.ts';
import { useRedirect } from './useRedirect.ts';
import { useSendMessage } from './useSendMessage.ts';
import { useStopAnswer } from './useStopAnswer.ts';
import { useTaskNotifications } from './useTaskNotifications.ts';

export interface ChatViewProps {
  channel: ChatChannel;
  title: string;
  subtitle: string;
  /**
   * Onboarding that the user already finished: its conversation can be read, and the chat is where
   * to go on. Null while not yet known (the message box waits).
   */
  finished?: boolean | null;
  /** At the end of the header, before the connection status, until the conversation is over (onboarding's "Skip for now"). */
  headerAction?: ReactNode;
  /** After the server ended the socket with 1008: resolves true while still signed in. */
  checkSession?: () => Promise<boolean>;
  /** Test seams: the WebSocket class and the timers. */
  WebSocketImpl?: SocketConstructor;
  timers?: Timers;
}

export function ChatView({
  channel,
  title,
  subtitle,
  finished = false,
  headerAction,
  checkSession,
  WebSocketImpl,
  timers = browserTimers,
}: ChatViewProps) {
  // Effects run in the order their hooks are called: the conversation's first, moving focus after the list's.
  const [searchParams] = useSearchParams();
  const dmid = channel === 'chat' ? searchParams.get('dmid') : null;
  const dailyTarget = useDailyMessageTarget(dmid);
  const url = useMemo(() => socketUrl(channel === 'chat' ? '/ws/chat/' : '/ws/onboarding/', { dmid }), [channel, dmid]);

  const later = useLater(timers);
  const { notifications, fading, addNotification } = useTaskNotifications(later);
  const { finishTarget, finishOnboarding, followRedirect } = useRedirect(channel, later);
  const chat = useChatConversation({
    url,
    checkSession,
    WebSocketImpl,
    timers,
    onNotification: addNotification,
    onRedirect: followRedirect,
  });
  const { state, socket, connected, answering, notice, setNotice } = chat;
  const done = finished === true || chat.closedHere;
  const canSend = connected && chat.historyReady && finished !== null && !done;
  const { stopping, stop } = useStopAnswer({ socket, connected, streaming: chat.streaming, answering });
  const connection = useConnectionState(socket, timers);

  const list = useMessageList({
    channel,
    items: state.items,
    hasMore: state.hasMore,
    stateRef: chat.stateRef,
    dispatch: chat.dispatch,
    setNotice,
    around: [
      chat.research.cards,
      chat.awaitingReply,
      notifications.length > 0,
      connection.outage,
      notice,
      dailyTarget.note,
      finishTarget,
    ],
  });
  const highlightId = useMessageHighlight({
    state,
    dailyMessageId: dailyTarget.messageId,
    notice,
    setNotice,
    followRef: list.followRef,
    loadOlder: list.loadOlder,
    loadingOlder: list.loadingOlder,
  });
  const focus = useComposerFocus({ canSend, done, finishTarget, answering, researchCards: chat.research.cards });
  const send = useSendMessage({
    socket,
    dispatch: chat.dispatch,
    setNotice,
    setAwaitingReply: chat.setAwaitingReply,
    timers,
    list,
  });
  const answerAgainProps = useAnswerAgain({
    items: state.items,
    canSend,
    answering,
    socket,
    setNotice,
    setAwaitingReply: chat.setAwaitingReply,
    followRef: list.followRef,
    textareaRef: focus.textareaRef,
  });
  const days = useMessageDays(state.items, timers);
  // Made here, in the page: the skip link points at the message box.
  const finishTextId = useId();
  const textareaId = useId();
  const counterId = useId();

  const lastItem = state.items[state.items.length - 1];
  const messageProps = (item: ChatItem): MessageProps => ({
    highlighted: highlightId !== null && item.message_id === highlightId,
    live: connected,
    latest: item === lastItem,
    ...answerAgainProps(item),
  });

  return (
    <div className="chat-page">
      {!done && (
        <a className="skip-link chat-skip-link" href={`#${textareaId}`} onClick={focus.skipToComposer}>
          Skip to message box
        </a>
      )}
      <ChatHeader
        title={title}
        subtitle={subtitle}
        action={!done && finishTarget === null ? headerAction : undefined}
        statusKind={connection.statusKind}
        statusText={connection.statusText}
      />

      <div className="chat-banners">
        <ConnectionBanners socket={socket} connection={connection} />
        {dailyTarget.note && (
          <Banner
            variant={dailyTarget.note === DAILY_MESSAGES.notFound ? 'info' : 'error'}
            onDismiss={dailyTarget.dismiss}
          >
            {dailyTarget.note}
          </Banner>
        )}
        {notice && <Banner onDismiss={() => setNotice(null)}>{notice}</Banner>}
      </div>

      <div className="chat-body">
        <MessageList
          list={list}
          channel={channel}
          hasMore={state.hasMore}
          loading={!state.loaded && socket.status === 'connecting'}
          empty={state.loaded && state.items.length === 0}
          days={days}
          messageProps={messageProps}
          typing={connected && (chat.awaitingReply || chat.waiting) && chat.streaming === undefined}
        >
          {chat.research.cards.map((card) => (
            <ResearchCard
              key={card.id}
              card={card}
              cancelling={chat.cancelling.has(card.id)}
              canCancel={connected}
              onCancel={() => chat.cancelResearch(card.id)}
              onCancelFocus={focus.onCancelFocus}
            />
          ))}
        </MessageList>
        <TaskNotifications notifications={notifications} fading={fading} />
      </div>

      {!done && finishTarget === null ? (
        <Composer
          channel={channel}
          textareaId={textareaId}
          counterId={counterId}
          textareaRef={focus.textareaRef}
          canSend={canSend}
          onSend={send}
          setNotice={setNotice}
          answering={answering}
          stopDisabled={!connected || stopping}
          onStop={stop}
          onStopFocus={focus.onStopFocus}
        />
      ) : (
        <OnboardingFinish
          textId={finishTextId}
          leaving={finishTarget !== null}
          chatLinkRef={focus.chatLinkRef}
          finishButtonRef={focus.finishButtonRef}
          onGoNow={finishOnboarding}
        />
      )}
    </div>
  );
}

export function ChatCrash({ onRetry }: { onRetry: () => void }) {
  return (
    <div className="container page">
      <div className="card chat-crash" role="alert">
        <h1>Something went wrong</h1>
        <p>The chat ran into a problem. Your messages are safe.</p>
        <button type="button" className="btn btn-primary" onClick={onRetry}>
          Try again
        </button>
      </div>
    </div>
  );
}

/** The chat with its own error boundary ("Something went wrong" / "Try again"). */
export function ChatPage(props: ChatViewProps) {
  return (
    <ErrorBoundary fallback={(reset) => <ChatCrash onRetry={reset} />}>
      <ChatView {...props} />
    </ErrorBoundary>
  );
}

/** Asks the server afresh whether this browser is still signed in; the app follows the answer. */
function useSessionCheck() {
  const { refresh } = useAuth();
  return useCallback(async () => {
    invalidateSession();
    return (await refresh()).status === 'authenticated';
  }, [refresh]);
}

export function ChatScreen() {
  const checkSession = useSessionCheck();
  return (
    <ChatPage
      channel="chat"
      title="Chat"
      subtitle="Talk with your assistant in real time."
      headerAction={<ChatSearchButton />}
      checkSession={checkSession}
    />
  );
}

export function OnboardingScreen() {
  // Someone who finished onboarding can reread it; new messages belong in the chat. Unknown, the
  // message box waits; if asking fails, the server still refuses a message and says so.
  const [finished, setFinished] = useState<boolean | null>(null);
  const checkSession = useSessionCheck();
  useEffect(() => {
    const abort = new AbortController();
    getMe(abort.signal).then(
      (me) => setFinished(me.onboarded),
      () => setFinished((known) => known ?? false),
    );
    return () => abort.abort();
  }, []);
  return (
    <ChatPage
      channel="onboarding"
      title="Getting to know you"
      subtitle="A short conversation so your assistant can help from day one."
      finished={finished}
      headerAction={finished === false && <SkipOnboardingButton />}
      checkSession={checkSession}
    />
  );
}
