// The chat screen shared by /chat and /onboarding: message list, typing indicator, task
// notifications, connection banners and the composer.
import {
  ANSWER_INTERRUPTED,
  ASSISTANT_UNAVAILABLE,
  CHAT_TEXT_MAX,
  CHAT_TOO_LONG,
  CLOSE_CODES,
  DAILY_MESSAGES,
  ONBOARDING_FINISHED,
  type TServerEvent,
} from '@daybook/contracts';
import {
  type KeyboardEvent,
  type MouseEvent,
  type ReactNode,
  startTransition,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useReducer,
  useRef,
  useState,
} from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { Banner } from '../../components/Banner.tsx';
import { BrandMark } from '../../components/BrandMark.tsx';
import { ErrorBoundary } from '../../components/ErrorBoundary.tsx';
import { Loading } from '../../components/Loading.tsx';
import { safeHref } from '../../components/Markdown.tsx';
import { loadDraft, saveDraft } from '../../lib/drafts.ts';
import { invalidateSession } from '../auth/allauth.ts';
import { getMe } from '../auth/api.ts';
import { useAuth } from '../auth/auth-context.tsx';
import { ChatSearchButton } from '../chat-search/ChatSearch.tsx';
import { getDailyMessage, isNotFound, parseDailyMessageId } from '../daily/api.ts';
import { ResearchCard } from '../research/ResearchCard.tsx';
import { type ChatChannel, fetchOlderMessages } from './api.ts';
import { ChatMessage, StopIcon } from './ChatMessage.tsx';
import { type ChatItem, chatReducer, initialChatState, isPending, oldestId } from './chat.state.ts';
import { groupByDay, localDayKey, msUntilNextDay } from './dates.ts';
import { SkipOnboardingButton } from './OnboardingSkip.tsx';
import { socketUrl } from './reconnect.ts';
import { noResearchCards, researchCardsReducer } from './research.cards.ts';
import { browserTimers, SOCKET_ERROR, type SocketConstructor, type Timers, useChatSocket } from './useChatSocket.ts';

export const BAD_FRAME = 'Error processing message from server';
export const SEND_FAILED = 'Failed to send message';
export const OLDER_FAILED = 'Could not load earlier messages. Please try again.';
export const MESSAGE_NOT_FOUND = 'The message you followed a link to is not in this conversation.';
/** At most this many task notifications show at once. */
export const MAX_NOTIFICATIONS = 2;
/** A final notification stays this long, then fades out for NOTIFICATION_FADE_MS, then the stack clears. */
export const NOTIFICATION_HOLD_MS = 2_500;
export const NOTIFICATION_FADE_MS = 500;
/** After onboarding's closing message, the chat waits this long before going on, so it can be read. */
export const ONBOARDING_REDIRECT_MS = 2_500;
export const ONBOARDING_DONE = "You're all set! Taking you to your chat...";
export const CARRIED_TO_CHAT = "Onboarding is finished, so your message is waiting in the chat's message box.";
export const SIGNED_OUT = 'You have been signed out.';
export const OFFLINE = 'Offline';
export const OFFLINE_NOTICE = 'You are offline. Messages you sent wait here and go out when you are back online.';
export const STOP = 'Stop';
/** Notes in place of an answer that offer to ask the question again. */
const ASK_AGAIN_NOTES = new Set([ANSWER_INTERRUPTED, ASSISTANT_UNAVAILABLE]);
/** The character counter shows from here on. */
const COUNTER_FROM = CHAT_TEXT_MAX - 1_000;
/** Within this distance of the end the list counts as scrolled to the bottom. */
const BOTTOM_SLACK_PX = 64;
/** How many pages of older history a followed message link loads at most, looking for its message. */
const HIGHLIGHT_MAX_PAGES = 40;
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

/** Whole seconds left until `at` on `timers` (rounded up, at least 1), re-rendering each second; null without `at`. */
export function useCountdown(at: number | null, timers: Timers): number | null {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (at === null) return;
    let handle: unknown = null;
    const schedule = () => {
      const left = at - timers.now();
      if (left <= 0) return;
      // Wake up when the shown number changes: at the next whole second before `at`.
      handle = timers.setTimeout(
        () => {
          handle = null;
          setTick((tick) => tick + 1);
          schedule();
        },
        left % 1000 || 1000,
      );
    };
    schedule();
    return () => {
      if (handle !== null) timers.clearTimeout(handle);
    };
  }, [at, timers]);
  return at === null ? null : Math.max(1, Math.ceil((at - timers.now()) / 1000));
}

/**
 * "Now" on `timers`, refreshed at each local midnight (and when the tab shows again after a sleep),
 * so a chat left open overnight moves "Today" to "Yesterday". Idle while not `enabled` (no messages).
 */
export function useDayClock(timers: Timers, enabled = true): number {
  const [now, setNow] = useState(() => timers.now());
  const day = localDayKey(new Date(now));
  useEffect(() => {
    if (!enabled) return;
    let handle: unknown = null;
    const check = () => {
      const current = timers.now();
      if (localDayKey(new Date(current)) !== day) setNow(current);
      else schedule();
    };
    // Woken early (a clock that moved), it only schedules itself again.
    const schedule = () => {
      handle = timers.setTimeout(() => {
        handle = null;
        check();
      }, msUntilNextDay(timers.now()));
    };
    check();
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      if (handle !== null) timers.clearTimeout(handle);
      handle = null;
      check();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      document.removeEventListener('visibilitychange', onVisible);
      if (handle !== null) timers.clearTimeout(handle);
    };
  }, [day, timers, enabled]);
  return now;
}

/** A random id for a message we send (crypto.randomUUID is missing on plain-http pages other than localhost). */
function newClientId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** True for a device whose main pointer is precise (mouse, trackpad): focusing a field there opens no keyboard. */
const hasFinePointer = () => typeof window.matchMedia === 'function' && window.matchMedia('(pointer: fine)').matches;
const hasCoarsePointer = () =>
  typeof window.matchMedia === 'function' && window.matchMedia('(pointer: coarse)').matches;

function closeHint(code: number | null) {
  if (code === CLOSE_CODES.policyViolation) return 'Your session may have expired.';
  if (code === CLOSE_CODES.tryAgainLater) return 'The assistant is busy right now.';
  return '';
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
  const navigate = useNavigate();
  const [searchParams, setSearchParams] = useSearchParams();
  const dmid = channel === 'chat' ? searchParams.get('dmid') : null;
  const linked = Number(searchParams.get('message'));
  const dailyTarget = useDailyMessageTarget(dmid);
  // ?message= names a message itself; ?dmid= the chat message that carries that daily message.
  const linkedId = Number.isSafeInteger(linked) && linked > 0 ? linked : null;
  // A ?message= leaves the address once looked for (a reload must not jump back); its highlight stays.
  const [linkedShown, setLinkedShown] = useState<number | null>(null);
  const highlightId = linkedId ?? dailyTarget.messageId ?? linkedShown;
  const url = useMemo(() => socketUrl(channel === 'chat' ? '/ws/chat/' : '/ws/onboarding/', { dmid }), [channel, dmid]);

  const [state, dispatch] = useReducer(chatReducer, initialChatState);
  const [research, dispatchResearch] = useReducer(researchCardsReducer, noResearchCards);
  /** Researches whose Cancel was pressed here, until their card says how they ended. */
  const [cancelling, setCancelling] = useState<ReadonlySet<number>>(() => new Set());
  const stateRef = useRef(state);
  stateRef.current = state;
  const [awaitingReply, setAwaitingReply] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [notifications, setNotifications] = useState<Notification[]>([]);
  const [fading, setFading] = useState(false);
  // Kept across reloads of this tab: an outage or a crash never costs the user what they typed.
  const [draft, setDraftState] = useState(() => loadDraft(channel));
  const setDraft = useCallback(
    (text: string) => {
      setDraftState(text);
      saveDraft(channel, text);
    },
    [channel],
  );
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [showJump, setShowJump] = useState(false);
  /** Where onboarding sends the user once its closing message has been read; null before that. */
  const [finishTarget, setFinishTarget] = useState<string | null>(null);

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

  const go = useCallback(
    (target: string) => {
      if (target.startsWith('/') && !target.startsWith('//')) navigate(target);
      else if (/^https?:/i.test(target) && safeHref(target)) window.location.assign(target);
    },
    [navigate],
  );
  // Onboarding ends with a notice and leaves after a pause (or at once from its button), only once.
  const finishing = useRef<string | null>(null);
  const leftOnboarding = useRef(false);
  const finishOnboarding = useCallback(() => {
    const target = finishing.current;
    if (target === null || leftOnboarding.current) return;
    leftOnboarding.current = true;
    go(target);
  }, [go]);

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

  const followRef = useRef(true);
  /** Set by each history: the effect below then resends what the server did not get. */
  const resendPending = useRef(false);
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
        resendPending.current = true;
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
        addNotification(event.raw_text, event.message_type === 'task_notification_final');
        return;
      case 'research':
        dispatchResearch({ type: 'card', card: event.research });
        return;
      case 'pong':
        return;
      case 'redirect': {
        dispatch({ type: 'message', message: event });
        const target = event.url ?? '';
        if (channel !== 'onboarding') {
          go(target);
          return;
        }
        // The end of onboarding: leave the closing message on screen for a moment.
        if (finishing.current !== null) return;
        finishing.current = target;
        setFinishTarget(target);
        setAwaitingReply(false);
        later(finishOnboarding, ONBOARDING_REDIRECT_MS);
        return;
      }
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
  const done = finished === true || closedHere;
  const canSend = connected && historyReady && finished !== null && !done;
  // While an answer is being written, later messages wait: the typing dots stay for them.
  const waiting = state.items.some((item) => item.queued);
  const streaming = state.items.find((item) => item.streaming);
  /** An answer is on its way (here or in another tab): Stop is offered. */
  const answering = connected && (streaming !== undefined || awaitingReply || waiting);
  const [stopping, setStopping] = useState(false);
  const stopRef = useRef<HTMLButtonElement>(null);
  const stop = () => {
    if (!connected || stopping) return;
    // The answer being written; before its first word, whichever it is.
    const replyTo = streaming?.reply_to;
    if (socket.send({ message_type: 'stop', ...(replyTo === undefined ? {} : { reply_to: replyTo }) }))
      setStopping(true);
  };
  const cancelResearch = (id: number) => {
    if (!socket.send({ message_type: 'cancel_research', id })) return;
    setCancelling((ids) => new Set(ids).add(id));
    // As after a message: a connection that took it and died is found within seconds.
    socket.probe();
  };
  // Cancel goes away with its card's run: focus that was on it moves to the message box.
  const cancelFocused = useRef(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the cards change
  useEffect(() => {
    if (!cancelFocused.current) return;
    if (document.activeElement !== document.body && document.activeElement !== null) return;
    cancelFocused.current = false;
    textareaRef.current?.focus();
  }, [research.cards]);
  // One stop per answer: the next one can be stopped again.
  const stoppingFor = streaming?.stream_id ?? null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new answer (or none) ends the stop in progress
  useEffect(() => {
    setStopping(false);
  }, [stoppingFor, answering]);
  // Stop goes away with the answer: focus that was on it moves to the message box.
  const stopFocused = useRef(false);
  useEffect(() => {
    if (answering || !stopFocused.current) return;
    stopFocused.current = false;
    if (document.activeElement === document.body || document.activeElement === null) textareaRef.current?.focus();
  }, [answering]);

  // A new connection's history shows which of our messages the server never got (the old socket
  // dropped before it arrived): send those again. Their client_id keeps the server from storing twice.
  useEffect(() => {
    if (!resendPending.current) return;
    resendPending.current = false;
    let resent = false;
    for (const item of state.items) {
      if (!isPending(item) || item.client_id === undefined) continue;
      resent =
        socket.send({
          author_type: 'human',
          message_type: 'message',
          raw_text: item.raw_text,
          client_id: item.client_id,
        }) || resent;
    }
    if (resent) setAwaitingReply(true);
  }, [state.items, socket.send]);
  /** Set from the first failure after a working connection (or the first attempt) until a socket opens again. */
  const outage = connected ? null : socket.outage;
  const reconnecting = outage !== null && socket.status === 'connecting';
  const retryIn = useCountdown(socket.retryAt, timers);

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

  // Follows the end of the list as it grows, and as the notification stack, the banners or the end-of-onboarding
  // notice take room from it (they sit beside the list, never over it), so the newest message stays in view.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs whenever the list, the typing indicator or the space around the list changes
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
    // Nothing to follow yet: no reading of the layout (as the page opens it would be laid out twice).
    if (newest === undefined) return;
    if (followRef.current) list.scrollTop = list.scrollHeight;
    else if (isNew) setShowJump(true);
  }, [
    state.items,
    research.cards,
    awaitingReply,
    notifications.length > 0,
    outage,
    notice,
    dailyTarget.note,
    finishTarget,
  ]);

  // Any other change of the list's height (window, phone keyboard, the layout's reminder) keeps the end in view too.
  useEffect(() => {
    const list = listRef.current;
    if (!list || typeof ResizeObserver === 'undefined') return;
    // Taken from the observer's first call (after a layout), not read here, which would lay the page
    // out in the middle of its first render.
    let height: number | null = null;
    const observer = new ResizeObserver(() => {
      const was = height;
      height = list.clientHeight;
      if (was === null || height === was) return;
      if (followRef.current) list.scrollTop = list.scrollHeight;
    });
    observer.observe(list);
    return () => observer.disconnect();
  }, []);

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

  // ?message=<id> (from a memory's "learned from" link) brings that message into view, loading
  // earlier pages until it is there; a message that is not in this conversation is said so.
  const highlightedOnce = useRef(false);
  const highlightSearch = useRef<{ oldest: number | null; pages: number }>({ oldest: null, pages: 0 });
  const highlightFor = useRef<number | null>(null);
  const olderFailed = notice === OLDER_FAILED;
  useEffect(() => {
    // Another message to bring into view (e.g. a daily message's, once it is known): a new search.
    if (highlightFor.current !== highlightId) {
      highlightFor.current = highlightId;
      highlightedOnce.current = false;
      highlightSearch.current = { oldest: null, pages: 0 };
    }
    if (highlightId === null || highlightedOnce.current || !state.loaded || loadingOlder || olderFailed) return;
    const looked = () => {
      highlightedOnce.current = true;
      if (highlightId !== linkedId) return;
      setLinkedShown(highlightId);
      // Its highlight is the same message under another name: no new search begins.
      highlightFor.current = linkedId;
      setSearchParams(
        (params) => {
          params.delete('message');
          return params;
        },
        { replace: true, preventScrollReset: true },
      );
    };
    const element = document.getElementById(`message-${highlightId}`);
    if (element) {
      looked();
      followRef.current = false;
      element.scrollIntoView?.({ block: 'center' });
      return;
    }
    const oldest = oldestId(state);
    // Each page must reach further back, and the search stops somewhere (2,000 messages).
    const searched = highlightSearch.current;
    const progressing = oldest !== searched.oldest && searched.pages < HIGHLIGHT_MAX_PAGES;
    if (state.hasMore && oldest !== null && highlightId < oldest && progressing) {
      highlightSearch.current = { oldest, pages: searched.pages + 1 };
      void loadOlder();
      return;
    }
    looked();
    setNotice(MESSAGE_NOT_FOUND);
  }, [highlightId, linkedId, state, loadingOlder, loadOlder, olderFailed, setSearchParams]);

  // ---- the composer and keyboard use ----
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const finishButtonRef = useRef<HTMLButtonElement>(null);
  const chatLinkRef = useRef<HTMLAnchorElement>(null);
  const finishTextId = useId();
  // Once connected, keyboard users start in the message box, unless they are already somewhere else.
  // Phones (no fine pointer) are left alone: focusing would pop up the keyboard over the history.
  const autoFocused = useRef(false);
  useEffect(() => {
    if (!canSend || autoFocused.current) return;
    autoFocused.current = true;
    const active = document.activeElement;
    if (active && active !== document.body) return;
    if (hasFinePointer()) textareaRef.current?.focus({ preventScroll: true });
  }, [canSend]);

  // Finished onboarding puts the chat link where the message box was; focus that was there follows.
  useEffect(() => {
    if (!done) return;
    const active = document.activeElement;
    if (!active || active === document.body) chatLinkRef.current?.focus({ preventScroll: true });
  }, [done]);

  // The message box makes way for the end-of-onboarding notice; focus that was in it goes to its button.
  useEffect(() => {
    if (finishTarget === null) return;
    const active = document.activeElement;
    if (!active || active === document.body) finishButtonRef.current?.focus({ preventScroll: true });
  }, [finishTarget]);

  const skipToComposer = (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    (textareaRef.current ?? finishButtonRef.current ?? chatLinkRef.current)?.focus();
  };

  // ---- sending ----
  const textareaId = useId();
  const counterId = useId();
  const localKeys = useRef(0);
  /** Sends `text` as a new message; false when it could not go out. */
  const sendText = (text: string) => {
    const key = `local-${++localKeys.current}`;
    const clientId = newClientId();
    followRef.current = true;
    dispatch({ type: 'send', key, text, clientId });
    const sent = socket.send({
      author_type: 'human',
      message_type: 'message',
      raw_text: text,
      timestamp: new Date(timers.now()).toISOString(),
      client_id: clientId,
    });
    if (!sent) {
      dispatch({ type: 'unsend', key });
      setNotice(SEND_FAILED);
      return false;
    }
    setAwaitingReply(true);
    // Its echo comes at once on a live connection: if nothing comes, the connection is found dead
    // within seconds (not when TCP gives up), and the message waits for the next one.
    socket.probe();
    scrollToBottom();
    return true;
  };
  const submit = () => {
    const text = draft.trim();
    if (!text || !canSend || finishTarget !== null) return;
    if (text.length > CHAT_TEXT_MAX) {
      setNotice(CHAT_TOO_LONG);
      return;
    }
    if (sendText(text)) setDraft('');
  };

  // Retry on a note in place of an answer, and Regenerate on the latest answer: the server answers
  // the same question again (it has it, even when this tab never loaded it).
  const [askedAgain, setAskedAgain] = useState<ReadonlySet<string>>(new Set());
  const answerAgain = (item: ChatItem) => {
    const questionId = item.reply_to;
    if (questionId === undefined || !canSend) return;
    if (!socket.send({ message_type: 'regenerate', reply_to: questionId })) {
      setNotice(SEND_FAILED);
      return;
    }
    setAskedAgain((keys) => new Set(keys).add(item.key));
    followRef.current = true;
    setAwaitingReply(true);
    // The button goes away once the answer begins: focus waits in the message box (Escape stops).
    // Not on a touch screen, where focusing the box would open the keyboard.
    if (!hasCoarsePointer()) textareaRef.current?.focus();
  };
  // One walk over the conversation for both:
  // - answered: the server's rule is that a question is answered again while it has no answer, or
  //   while its latest reply is the latest message; a note answered since (Retry in another tab)
  //   offers nothing;
  // - versions: several answers to one question (Regenerate) each say which they are, "Answer 2 of 2".
  const { answered, versions } = useMemo(() => {
    const answered = new Set<number>();
    const byQuestion = new Map<number, string[]>();
    for (const i of state.items) {
      if (i.author_type !== 'assistant' || i.reply_to === undefined) continue;
      if (i.reply_to) answered.add(i.reply_to);
      if (i.message_type !== 'markdown') continue;
      const keys = byQuestion.get(i.reply_to);
      if (keys) keys.push(i.key);
      else byQuestion.set(i.reply_to, [i.key]);
    }
    const versions = new Map<string, { n: number; of: number }>();
    for (const keys of byQuestion.values()) {
      if (keys.length < 2) continue;
      for (const [n, key] of keys.entries()) versions.set(key, { n: n + 1, of: keys.length });
    }
    return { answered, versions };
  }, [state.items]);
  const canAskAgain = (item: ChatItem) =>
    item.message_type === 'system_message' &&
    item.reply_to !== undefined &&
    ASK_AGAIN_NOTES.has(item.raw_text) &&
    (item === lastItem || !answered.has(item.reply_to));

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape' && answering) {
      event.preventDefault();
      stop();
      return;
    }
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    submit();
  };

  // The header pill follows the banner: an outage keeps its kind, and a retry in progress is "Reconnecting...".
  const statusKind = socket.offline ? 'disconnected' : reconnecting ? 'connecting' : (outage ?? socket.status);
  const statusText = socket.offline
    ? OFFLINE
    : reconnecting
      ? 'Reconnecting...'
      : {
          connecting: 'Connecting...',
          connected: 'Connected',
          disconnected: 'Disconnected',
          error: 'Connection problem',
        }[statusKind];
  // The countdown changes every second: it is shown, but screen readers hear one steady sentence.
  const retryText = reconnecting ? (
    'Reconnecting...'
  ) : retryIn === null ? null : (
    <>
      <span aria-hidden="true">Trying again in {retryIn} s.</span>
      <span className="visually-hidden">Trying again shortly.</span>
    </>
  );
  const reconnectButton = (label: string) => (
    <button
      type="button"
      className="btn btn-secondary btn-sm"
      // Not `disabled` while an attempt runs, so focus stays on it; a click then does nothing.
      aria-disabled={reconnecting || undefined}
      onClick={() => {
        if (!reconnecting) socket.reconnect();
      }}
    >
      {label}
    </button>
  );
  const showCounter = draft.length >= COUNTER_FROM;
  // Text over the limit is kept (pasting never cuts it); the counter says how much to remove.
  const tooLong = draft.trim().length > CHAT_TEXT_MAX;
  const hasStreaming = state.items.some((item) => item.streaming);
  // Recomputed from the whole list, so an older page that ends mid-day adds no second separator.
  const dayNow = useDayClock(timers, state.items.length > 0);
  const days = useMemo(
    // An empty redirect shows nothing, so it opens no day either.
    () =>
      groupByDay(
        state.items.filter((item) => item.message_type !== 'redirect' || item.raw_text.trim()),
        (item) => item.timestamp,
        dayNow,
      ),
    [state.items, dayNow],
  );

  return (
    <div className="chat-page">
      {!done && (
        <a className="skip-link chat-skip-link" href={`#${textareaId}`} onClick={skipToComposer}>
          Skip to message box
        </a>
      )}
      <header className="chat-header">
        <div className="chat-header-inner">
          <div>
            <h1 className="chat-title">{title}</h1>
            <p className="chat-subtitle">{subtitle}</p>
          </div>
          {headerAction && !done && finishTarget === null && <div className="chat-header-action">{headerAction}</div>}
          <span className={`chat-status chat-status-${statusKind}`}>
            <span className="chat-status-dot" aria-hidden="true" />
            {statusText}
          </span>
        </div>
      </header>

      <div className="chat-banners">
        {/* One banner per outage, of the kind it began as, through every retry until a socket opens. */}
        {socket.offline && <Banner variant="info">{OFFLINE_NOTICE}</Banner>}
        {!socket.offline && outage === 'disconnected' && (
          <Banner variant="info" action={reconnectButton('Reconnect')}>
            You are disconnected. {closeHint(socket.closeCode)} {retryText}
          </Banner>
        )}
        {!socket.offline && outage === 'error' && (
          <Banner action={reconnectButton('Retry')}>
            {socket.error ?? SOCKET_ERROR} {retryText}
          </Banner>
        )}
        {socket.signedOut && (
          <Banner
            action={
              <Link to="/auth/login" className="btn btn-secondary btn-sm">
                Sign in
              </Link>
            }
          >
            {SIGNED_OUT}
          </Banner>
        )}
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
        <div
          ref={listRef}
          className="chat-scroll"
          onScroll={onScroll}
          role="log"
          aria-label="Messages"
          aria-relevant="additions"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region takes focus so the keyboard can scroll it (WCAG 2.1.1)
          tabIndex={0}
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
            {state.loaded &&
              state.items.length === 0 &&
              (channel === 'onboarding' ? (
                <div className="chat-empty">
                  <p className="chat-empty-title">Say hello to get started.</p>
                  <p>
                    Tell your assistant a little about yourself: what you do, what you enjoy, what you want help with.
                  </p>
                </div>
              ) : (
                <div className="chat-empty">
                  <BrandMark />
                  <p className="chat-empty-title">Your chat with Daybook</p>
                  <p>
                    Ask anything, or tell me about your day. I'll remember what matters; you can review it on your{' '}
                    <Link to="/memories">Memories page</Link>.
                  </p>
                </div>
              ))}
            {days.map((group) => (
              <div key={group.key} className="chat-day">
                <h2 className="chat-day-label">
                  <time dateTime={group.day}>{group.label}</time>
                </h2>
                {group.items.map((item) => (
                  <ChatMessage
                    key={item.key}
                    item={item}
                    highlighted={highlightId !== null && item.message_id === highlightId}
                    live={connected}
                    latest={item === lastItem}
                    version={versions.get(item.key)}
                    onAskAgain={
                      canAskAgain(item)
                        ? {
                            disabled: !canSend || askedAgain.has(item.key),
                            onClick: () => answerAgain(item),
                          }
                        : undefined
                    }
                    onRegenerate={
                      item === lastItem && item.reply_to !== undefined && !answering
                        ? { disabled: !canSend || askedAgain.has(item.key), onClick: () => answerAgain(item) }
                        : undefined
                    }
                  />
                ))}
              </div>
            ))}
            {research.cards.map((card) => (
              <ResearchCard
                key={card.id}
                card={card}
                cancelling={cancelling.has(card.id)}
                canCancel={connected}
                onCancel={() => cancelResearch(card.id)}
                onCancelFocus={(focused) => {
                  cancelFocused.current = focused;
                }}
              />
            ))}
            {connected && (awaitingReply || waiting) && !hasStreaming && (
              <div className="chat-row chat-row-assistant is-new">
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

      {done && finishTarget === null ? (
        <div className="chat-composer chat-finish">
          <div className="chat-composer-inner chat-finish-inner">
            <p id={finishTextId} className="chat-finish-text">
              {ONBOARDING_FINISHED}
            </p>
            <Link ref={chatLinkRef} to="/chat" className="btn btn-primary" aria-describedby={finishTextId}>
              Go to chat
            </Link>
          </div>
        </div>
      ) : finishTarget === null ? (
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
              ref={textareaRef}
              id={textareaId}
              className="chat-input"
              rows={3}
              placeholder="Type your message..."
              value={draft}
              disabled={!canSend}
              aria-describedby={showCounter ? counterId : undefined}
              aria-invalid={tooLong || undefined}
              onChange={(event) => setDraft(event.target.value)}
              onKeyDown={onKeyDown}
            />
            {answering && (
              <button
                ref={stopRef}
                type="button"
                className="btn btn-secondary chat-stop"
                aria-disabled={!connected || stopping || undefined}
                aria-keyshortcuts="Escape"
                title="Stop (Esc)"
                onFocus={() => {
                  stopFocused.current = true;
                }}
                onBlur={() => {
                  stopFocused.current = false;
                }}
                onClick={stop}
              >
                <StopIcon />
                <span className="chat-stop-label">{STOP}</span>
              </button>
            )}
            <button type="submit" className="btn btn-primary chat-send" disabled={!canSend || tooLong}>
              Send
            </button>
          </div>
          {/* Announced when it happens (a paste can overshoot); the counter itself only describes the box. */}
          <p className="visually-hidden" aria-live="polite">
            {tooLong ? CHAT_TOO_LONG : ''}
          </p>
          {showCounter && (
            <p id={counterId} className={`chat-counter${draft.length >= CHAT_TEXT_MAX ? ' is-full' : ''}`}>
              {tooLong && `${CHAT_TOO_LONG} `}
              <span className="chat-counter-count">
                {draft.length.toLocaleString('en-US')} / {CHAT_TEXT_MAX.toLocaleString('en-US')}
              </span>
            </p>
          )}
        </form>
      ) : (
        <div className="chat-composer chat-finish">
          <div className="chat-composer-inner chat-finish-inner">
            <p id={finishTextId} className="chat-finish-text" role="status">
              <svg className="chat-finish-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
                <circle cx="10" cy="10" r="10" fill="currentColor" />
                <path d="m5.8 10.4 2.8 2.8 5.6-6" fill="none" stroke="#fff" strokeWidth="2" strokeLinecap="round" />
              </svg>
              {ONBOARDING_DONE}
            </p>
            <button
              ref={finishButtonRef}
              type="button"
              className="btn btn-primary"
              aria-describedby={finishTextId}
              onClick={finishOnboarding}
            >
              Go to chat now
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

interface DailyLookup {
  /** The ?dmid= this answer is for. */
  dmid: string;
  /** The chat message carrying the daily message, when it has been posted. */
  messageId: number | null;
  note: string | null;
}

/**
 * ?dmid=<id> (from a daily message's "Ask about it in the chat"): finds the chat message that carries
 * it, to bring into view as ?message= does. An id that names no message of this user says so in a
 * note; the chat itself works as ever.
 */
function useDailyMessageTarget(dmid: string | null) {
  const [lookup, setLookup] = useState<DailyLookup | null>(null);
  useEffect(() => {
    if (dmid === null) return;
    const id = parseDailyMessageId(dmid);
    if (id === null) {
      setLookup({ dmid, messageId: null, note: DAILY_MESSAGES.notFound });
      return;
    }
    const controller = new AbortController();
    getDailyMessage(id, controller.signal).then(
      (message) => {
        if (!controller.signal.aborted) setLookup({ dmid, messageId: message.chat_message_id, note: null });
      },
      (err: unknown) => {
        if (controller.signal.aborted || (err instanceof Error && err.name === 'AbortError')) return;
        if (!isNotFound(err)) console.error('Failed to load the daily message', err);
        const note = isNotFound(err) ? DAILY_MESSAGES.notFound : DAILY_MESSAGES.loadFailed;
        setLookup({ dmid, messageId: null, note });
      },
    );
    return () => controller.abort();
  }, [dmid]);
  // An answer for an earlier ?dmid= counts for nothing.
  const current = lookup !== null && lookup.dmid === dmid ? lookup : null;
  const dismiss = useCallback(() => setLookup((value) => (value ? { ...value, note: null } : value)), []);
  return { messageId: current?.messageId ?? null, note: current?.note ?? null, dismiss };
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
