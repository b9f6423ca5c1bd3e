import { DAILY_MESSAGES } from '@daybook/contracts';
import { useCallback, useEffect, useState } from 'react';
import { getDailyMessage, isNotFound, parseDailyMessageId } from '../daily/api.ts';

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
export function useDailyMessageTarget(dmid: string | null) {
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
