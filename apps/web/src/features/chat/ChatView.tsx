// The chat screen shared by /chat and /onboarding: message list, typing indicator, task
// notifications, connection banners and the composer.
import { CHAT_TEXT_MAX, CLOSE_CODES, type TServerEvent } from '@daybook/contracts';
import {
  type KeyboardEvent,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useReducer,
  useRef,
  useState,
} from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { Banner } from '../../components/Banner.tsx';
import { ErrorBoundary } from '../../components/ErrorBoundary.tsx';
import { Loading } from '../../components/Loading.tsx';
import { safeHref } from '../../components/Markdown.tsx';
import { type ChatChannel, fetchOlderMessages } from './api.ts';
import { ChatMessage } from './ChatMessage.tsx';
import { chatReducer, initialChatState, oldestId } from './chat.state.ts';
import { socketUrl } from './reconnect.ts';
import { browserTimers, type SocketConstructor, type Timers, useChatSocket } from './useChatSocket.ts';

export const BAD_FRAME = 'Error processing message from server';
export const SEND_FAILED = 'Failed to send message';
export const OLDER_FAILED = 'Could not load earlier messages. Please try again.';
export const TOO_LONG = `Messages can be at most ${CHAT_TEXT_MAX.toLocaleString('en-US')} characters.`;
/** At most this many task notifications show at once. */
export const MAX_NOTIFICATIONS = 2;
/** A final notification stays this long, then fades out for NOTIFICATION_FADE_MS, then the stack clears. */
export const NOTIFICATION_HOLD_MS = 2_500;
export const NOTIFICATION_FADE_MS = 500;
/** The character counter shows from here on. */
const COUNTER_FROM = CHAT_TEXT_MAX - 1_000;
/** Within this distance of the end the list counts as scrolled to the bottom. */
const BOTTOM_SLACK_PX = 64;
/** Within this distance of the top older history loads. */
const TOP_SLACK_PX = 48;

interface Notification {
  id: number;
  text: string;
  final: boolean;
}

export interface ChatViewProps {
  channel: ChatChannel;
  title: string;
  subtitle: string;
  /** Test seams: the WebSocket class and the timers. */
  WebSocketImpl?: SocketConstructor;
  timers?: Timers;
}

const seconds = (ms: number) => {
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s}` : s.toFixed(1);
};

function closeHint(code: number | null) {
  if (code === CLOSE_CODES.policyViolation) return 'Your session may have expired.';
  if (code === CLOSE_CODES.tryAgainLater) return 'The assistant is busy right now.';
  return '';
}

export function ChatView({ channel, title, subtitle, WebSocketImpl, timers = browserTimers }: ChatViewProps) {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const dmid = channel === 'chat' ? searchParams.get('dmid') : null;
  const highlightId = Number(searchParams.get('message')) || null;
  const url = useMemo(() => socketUrl(channel === 'chat' ? '/ws/chat/' : '/ws/onboarding/', { dmid }), [channel, dmid]);

  const [state, dispatch] = useReducer(chatReducer, initialChatState);
  const stateRef = useRef(state);
  stateRef.current = state;
  const [awaitingReply, setAwaitingReply] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [notifications, setNotifications] = useState<Notification[]>([]);
  const [fading, setFading] = useState(false);
  const [draft, setDraft] = useState('');
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [showJump, setShowJump] = useState(false);

  const timerHandles = useRef(new Set<unknown>());
  const later = useCallback(
    (callback: () => void, ms: number) => {
      const handle = timers.setTimeout(() => {
        timerHandles.current.delete(handle);
        callback();
      }, ms);
      timerHandles.current.add(handle);
    },
    [timers],
  );
  useEffect(() => {
    const handles = timerHandles.current;
    return () => {
      for (const handle of handles) timers.clearTimeout(handle);
      handles.clear();
    };
  }, [timers]);

  const nextId = useRef(0);
  const addNotification = useCallback(
    (text: string, final: boolean) => {
      const id = ++nextId.current;
      setNotifications((list) => [...list, { id, text, final }].slice(-MAX_NOTIFICATIONS));
      if (!final) return;
      later(() => {
        setFading(true);
        later(() => {
          setNotifications((list) => list.filter((n) => n.id > id));
          setFading(false);
        }, NOTIFICATION_FADE_MS);
      }, NOTIFICATION_HOLD_MS);
    },
    [later],
  );

  const followRef = useRef(true);
  const onEvent = (event: TServerEvent) => {
    switch (event.message_type) {
      case 'history':
        dispatch({ type: 'history', messages: event.messages, hasMore: event.has_more });
        return;
      case 'stream':
        dispatch({ type: 'stream', streamId: event.stream_id, delta: event.raw_text });
        setAwaitingReply(false);
        return;
      case 'error':
        setNotice(event.raw_text);
        setAwaitingReply(false);
        return;
      case 'task_notification':
      case 'task_notification_final':
        addNotification(event.raw_text, event.message_type === 'task_notification_final');
        return;
      case 'redirect': {
        dispatch({ type: 'message', message: event });
        const target = event.url ?? '';
        if (target.startsWith('/') && !target.startsWith('//')) navigate(target);
        else if (/^https?:/i.test(target) && safeHref(target)) window.location.assign(target);
        return;
      }
      default:
        dispatch({ type: 'message', message: event });
        // A message sent from another tab gets its reply here too.
        setAwaitingReply(event.author_type === 'human');
    }
  };

  const socket = useChatSocket({
    url,
    onEvent,
    onBadFrame: () => setNotice(BAD_FRAME),
    WebSocketImpl,
    timers,
  });
  const connected = socket.status === 'connected';

  // A reply that was on its way when the connection dropped will not arrive on this socket.
  useEffect(() => {
    if (socket.status === 'disconnected' || socket.status === 'error') setAwaitingReply(false);
  }, [socket.status]);

  // ---- scrolling ----
  const listRef = useRef<HTMLDivElement>(null);
  const restoreRef = useRef<{ height: number; top: number } | null>(null);
  const lastKeyRef = useRef<string | undefined>(undefined);
  const lastItem = state.items[state.items.length - 1];

  const scrollToBottom = useCallback(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
    followRef.current = true;
    setShowJump(false);
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: runs whenever the list or the typing indicator changes
  useLayoutEffect(() => {
    const list = listRef.current;
    if (!list) return;
    const restore = restoreRef.current;
    if (restore) {
      // Older messages went in above: keep what the user was reading in place.
      restoreRef.current = null;
      list.scrollTop = list.scrollHeight - restore.height + restore.top;
      return;
    }
    const newest = lastItem?.key;
    const isNew = newest !== lastKeyRef.current;
    lastKeyRef.current = newest;
    if (followRef.current) list.scrollTop = list.scrollHeight;
    else if (isNew && newest !== undefined) setShowJump(true);
  }, [state.items, awaitingReply]);

  const loadOlder = useCallback(async () => {
    const before = oldestId(stateRef.current);
    if (before === null || loadingOlder) return;
    setLoadingOlder(true);
    try {
      const page = await fetchOlderMessages(channel, before);
      const list = listRef.current;
      restoreRef.current = list ? { height: list.scrollHeight, top: list.scrollTop } : null;
      dispatch({ type: 'older', messages: page.results, hasMore: page.has_more });
    } catch {
      setNotice(OLDER_FAILED);
    } finally {
      setLoadingOlder(false);
    }
  }, [channel, loadingOlder]);

  const onScroll = () => {
    const list = listRef.current;
    if (!list) return;
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < BOTTOM_SLACK_PX;
    followRef.current = atBottom;
    if (atBottom) setShowJump(false);
    if (list.scrollTop < TOP_SLACK_PX && state.hasMore && !loadingOlder) void loadOlder();
  };

  // /chat?message=<id> (e.g. from a memory learned in chat) brings that message into view.
  const highlightedOnce = useRef(false);
  useEffect(() => {
    if (highlightId === null || highlightedOnce.current) return;
    const element = document.getElementById(`message-${highlightId}`);
    if (!element) return;
    highlightedOnce.current = true;
    followRef.current = false;
    element.scrollIntoView?.({ block: 'center' });
  }, [highlightId]);

  // ---- sending ----
  const textareaId = useId();
  const counterId = useId();
  const localKeys = useRef(0);
  const submit = () => {
    const text = draft.trim();
    if (!text || !connected) return;
    if (text.length > CHAT_TEXT_MAX) {
      setNotice(TOO_LONG);
      return;
    }
    const key = `local-${++localKeys.current}`;
    followRef.current = true;
    dispatch({ type: 'send', key, text });
    const sent = socket.send({
      author_type: 'human',
      message_type: 'message',
      raw_text: text,
      timestamp: new Date(timers.now()).toISOString(),
    });
    if (!sent) {
      dispatch({ type: 'unsend', key });
      setNotice(SEND_FAILED);
      return;
    }
    setDraft('');
    setAwaitingReply(true);
    scrollToBottom();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    submit();
  };

  const retryText = socket.retryInMs === null ? '' : `Trying again in ${seconds(socket.retryInMs)} s.`;
  const showCounter = draft.length >= COUNTER_FROM;
  const hasStreaming = state.items.some((item) => item.streaming);

  return (
    <div className="chat-page">
      <header className="chat-header">
        <div className="chat-header-inner">
          <div>
            <h1 className="chat-title">{title}</h1>
            <p className="chat-subtitle">{subtitle}</p>
          </div>
          <span className={`chat-status chat-status-${socket.status}`}>
            <span className="chat-status-dot" aria-hidden="true" />
            {
              {
                connecting: 'Connecting...',
                connected: 'Connected',
                disconnected: 'Disconnected',
                error: 'Connection problem',
              }[socket.status]
            }
          </span>
        </div>
      </header>

      <div className="chat-banners">
        {socket.status === 'disconnected' && (
          <Banner
            variant="info"
            action={
              <button type="button" className="btn btn-secondary btn-sm" onClick={socket.reconnect}>
                Reconnect
              </button>
            }
          >
            You are disconnected. {closeHint(socket.closeCode)} {retryText}
          </Banner>
        )}
        {socket.status === 'error' && (
          <Banner
            action={
              <button type="button" className="btn btn-secondary btn-sm" onClick={socket.reconnect}>
                Retry
              </button>
            }
          >
            {socket.error} {retryText}
          </Banner>
        )}
        {notice && <Banner onDismiss={() => setNotice(null)}>{notice}</Banner>}
      </div>

      <div className="chat-body">
        <div
          ref={listRef}
          className="chat-scroll"
          onScroll={onScroll}
          role="log"
          aria-label="Messages"
          aria-relevant="additions"
          tabIndex={-1}
        >
          <div className="chat-thread">
            {state.hasMore && (
              <div className="chat-older">
                {loadingOlder ? (
                  <Loading label="Loading earlier messages..." />
                ) : (
                  <button type="button" className="chat-link-button" onClick={() => void loadOlder()}>
                    Load earlier messages
                  </button>
                )}
              </div>
            )}
            {!state.loaded && socket.status === 'connecting' && <Loading label="Loading messages..." />}
            {state.loaded && state.items.length === 0 && (
              <div className="chat-empty">
                <p className="chat-empty-title">
                  {channel === 'onboarding' ? 'Say hello to get started.' : 'No messages yet.'}
                </p>
                <p>
                  {channel === 'onboarding'
                    ? 'Tell your assistant a little about yourself: what you do, what you enjoy, what you want help with.'
                    : 'Ask anything, or tell your assistant something worth remembering.'}
                </p>
              </div>
            )}
            {state.items.map((item) => (
              <ChatMessage
                key={item.key}
                item={item}
                highlighted={highlightId !== null && item.message_id === highlightId}
              />
            ))}
            {awaitingReply && !hasStreaming && (
              <div className="chat-row chat-row-assistant">
                <div className="chat-bubble chat-typing" role="status" aria-label="Assistant is typing">
                  <span className="chat-typing-dot" />
                  <span className="chat-typing-dot" />
                  <span className="chat-typing-dot" />
                </div>
              </div>
            )}
          </div>
        </div>

        {showJump && (
          <button type="button" className="chat-jump btn btn-primary btn-sm" onClick={scrollToBottom}>
            New messages ↓
          </button>
        )}

        {notifications.length > 0 && (
          <ul className={`chat-notifications${fading ? ' is-fading' : ''}`} aria-label="Assistant activity">
            {notifications.map((n) => (
              <li key={n.id} className={`chat-notification${n.final ? ' is-final' : ''}`}>
                {n.text}
              </li>
            ))}
          </ul>
        )}
      </div>

      <form
        className="chat-composer"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <div className="chat-composer-inner">
          <label htmlFor={textareaId} className="visually-hidden">
            Message
          </label>
          <textarea
            id={textareaId}
            className="chat-input"
            rows={3}
            placeholder="Type your message..."
            value={draft}
            maxLength={CHAT_TEXT_MAX}
            disabled={!connected}
            aria-describedby={showCounter ? counterId : undefined}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onKeyDown}
          />
          <button type="submit" className="btn btn-primary chat-send" disabled={!connected}>
            Send
          </button>
        </div>
        {showCounter && (
          <p id={counterId} className={`chat-counter${draft.length >= CHAT_TEXT_MAX ? ' is-full' : ''}`}>
            {draft.length.toLocaleString('en-US')} / {CHAT_TEXT_MAX.toLocaleString('en-US')}
          </p>
        )}
      </form>
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

export const ChatScreen = () => (
  <ChatPage channel="chat" title="Chat" subtitle="Talk with your assistant in real time." />
);

export const OnboardingScreen = () => (
  <ChatPage
    channel="onboarding"
    title="Getting to know you"
    subtitle="A short conversation so your assistant can help from day one."
  />
);
