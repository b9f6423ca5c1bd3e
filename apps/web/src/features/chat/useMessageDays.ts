import { useMemo } from 'react';
import { groupByDay } from '../../lib/dates.ts';
import type { ChatItem } from './chat.state.ts';
import type { Timers } from './useChatSocket.ts';
import { useDayClock } from './useDayClock.ts';

/** The messages grouped by day, each group labelled ("Today", "Yesterday", a date) as of now. */
export function useMessageDays(items: ChatItem[], timers: Timers) {
  // Recomputed from the whole list, so an older page that ends mid-day adds no second separator.
  const dayNow = useDayClock(timers, items.length > 0);
  return useMemo(
    // An empty redirect shows nothing, so it opens no day either.
    () =>
      groupByDay(
        items.filter((item) => item.message_type !== 'redirect' || item.raw_text.trim()),
        (item) => item.timestamp,
        dayNow,
      ),
    [items, dayNow],
  );
}
