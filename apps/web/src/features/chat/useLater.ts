// Timeouts on the chat's timers that end with the chat: what still waits when it goes away never runs.
import { useCallback, useEffect, useRef } from 'react';
import type { Timers } from './useChatSocket.ts';

/** Runs `callback` after `ms`, unless the chat has gone away by then. */
export type Later = (callback: () => void, ms: number) => void;

export function useLater(timers: Timers): Later {
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
  return later;
}
