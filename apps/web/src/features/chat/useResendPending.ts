import { useCallback, useEffect, useRef } from 'react';
import { type ChatItem, isPending } from './chat.state.ts';
import type { ChatSocket } from './useChatSocket.ts';

/**
 * A new connection's history shows which of our messages the server never got (the old socket
 * dropped before it arrived): send those again. Their client_id keeps the server from storing twice.
 * Returns what each history calls; the messages go out once it is in the list.
 */
export function useResendPending(
  items: ChatItem[],
  send: ChatSocket['send'],
  setAwaitingReply: (awaiting: boolean) => void,
) {
  /** Set by each history: the effect below then resends what the server did not get. */
  const resendPending = useRef(false);
  useEffect(() => {
    if (!resendPending.current) return;
    resendPending.current = false;
    let resent = false;
    for (const item of items) {
      if (!isPending(item) || item.client_id === undefined) continue;
      resent =
        send({
          author_type: 'human',
          message_type: 'message',
          raw_text: item.raw_text,
          client_id: item.client_id,
        }) || resent;
    }
    if (resent) setAwaitingReply(true);
  }, [items, send, setAwaitingReply]);
  return useCallback(() => {
    resendPending.current = true;
  }, []);
}
