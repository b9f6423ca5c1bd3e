// The message list's scrolling: it follows the newest message while the user is at the end (and
// offers "New messages" when they are not), keeps what they read in place as older pages load above,
// and loads the next older page when they scroll to the top.
import { type Dispatch, type RefObject, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { type ChatChannel, fetchOlderMessages } from './api.ts';
import { type ChatAction, type ChatItem, type ChatState, oldestId } from './chat.state.ts';

export const OLDER_FAILED = 'Could not load earlier messages. Please try again.';
/** Within this distance of the end the list counts as scrolled to the bottom. */
const BOTTOM_SLACK_PX = 64;
/** Within this distance of the top older history loads. */
const TOP_SLACK_PX = 48;

export interface MessageListOptions {
  channel: ChatChannel;
  items: ChatItem[];
  hasMore: boolean;
  /** The conversation as of the latest render (an older page is asked for before the oldest message then). */
  stateRef: RefObject<ChatState>;
  dispatch: Dispatch<ChatAction>;
  setNotice: (notice: string) => void;
  /**
   * What else grows the end of the list or takes room from it: the research cards, the typing dots,
   * the notification stack, the banners, the end-of-onboarding notice. A change keeps the end in view.
   */
  around: unknown[];
}

export interface MessageListControls {
  listRef: RefObject<HTMLDivElement | null>;
  /** The list follows its end as it grows: the user is there (or just sent something). */
  followRef: RefObject<boolean>;
  showJump: boolean;
  loadingOlder: boolean;
  loadOlder: () => Promise<void>;
  scrollToBottom: () => void;
  onScroll: () => void;
}

export function useMessageList({
  channel,
  items,
  hasMore,
  stateRef,
  dispatch,
  setNotice,
  around,
}: MessageListOptions): MessageListControls {
  const listRef = useRef<HTMLDivElement>(null);
  const followRef = useRef(true);
  const restoreRef = useRef<{ height: number; top: number } | null>(null);
  const lastKeyRef = useRef<string | undefined>(undefined);
  const [showJump, setShowJump] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const lastItem = items[items.length - 1];

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
  }, [items, ...around]);

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
  }, [channel, loadingOlder, stateRef, dispatch, setNotice]);

  const onScroll = () => {
    const list = listRef.current;
    if (!list) return;
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < BOTTOM_SLACK_PX;
    followRef.current = atBottom;
    if (atBottom) setShowJump(false);
    if (list.scrollTop < TOP_SLACK_PX && hasMore && !loadingOlder) void loadOlder();
  };

  return { listRef, followRef, showJump, loadingOlder, loadOlder, scrollToBottom, onScroll };
}
