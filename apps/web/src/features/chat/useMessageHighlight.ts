// The message to bring into view and highlight: ?message=<id> (from a memory's "learned from" link or
// a search result), or the chat message carrying a daily message (?dmid=, see useDailyMessageTarget).
import { type RefObject, useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { type ChatState, oldestId } from './chat.state.ts';
import { OLDER_FAILED } from './useMessageList.ts';

export const MESSAGE_NOT_FOUND = 'The message you followed a link to is not in this conversation.';
/** How many pages of older history a followed message link loads at most, looking for its message. */
const HIGHLIGHT_MAX_PAGES = 40;

export interface MessageHighlightOptions {
  state: ChatState;
  /** The chat message carrying the daily message of ?dmid=, once known. */
  dailyMessageId: number | null;
  notice: string | null;
  setNotice: (notice: string) => void;
  followRef: RefObject<boolean>;
  loadOlder: () => Promise<void>;
  loadingOlder: boolean;
}

/** The id of the message to highlight, or null. */
export function useMessageHighlight({
  state,
  dailyMessageId,
  notice,
  setNotice,
  followRef,
  loadOlder,
  loadingOlder,
}: MessageHighlightOptions): number | null {
  const [searchParams, setSearchParams] = useSearchParams();
  const linked = Number(searchParams.get('message'));
  // ?message= names a message itself; ?dmid= the chat message that carries that daily message.
  const linkedId = Number.isSafeInteger(linked) && linked > 0 ? linked : null;
  // A ?message= leaves the address once looked for (a reload must not jump back); its highlight stays.
  const [linkedShown, setLinkedShown] = useState<number | null>(null);
  const highlightId = linkedId ?? dailyMessageId ?? linkedShown;

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
  }, [highlightId, linkedId, state, loadingOlder, loadOlder, olderFailed, setSearchParams, followRef, setNotice]);

  return highlightId;
}
