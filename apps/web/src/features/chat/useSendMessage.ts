// Sending a message: it shows at once ("sending..."), goes out with an id of ours (so a resend after a
// reconnect is stored once), and the list follows it.
import { type Dispatch, useRef } from 'react';
import type { ChatAction } from './chat.state.ts';
import type { ChatSocket, Timers } from './useChatSocket.ts';
import type { MessageListControls } from './useMessageList.ts';

export const SEND_FAILED = 'Failed to send message';

/** A random id for a message we send (crypto.randomUUID is missing on plain-http pages other than localhost). */
function newClientId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface SendMessageOptions {
  socket: ChatSocket;
  dispatch: Dispatch<ChatAction>;
  setNotice: (notice: string) => void;
  setAwaitingReply: (awaiting: boolean) => void;
  timers: Timers;
  list: Pick<MessageListControls, 'followRef' | 'scrollToBottom'>;
}

/** Returns `send(text)`: sends `text` as a new message; false when it could not go out. */
export function useSendMessage({ socket, dispatch, setNotice, setAwaitingReply, timers, list }: SendMessageOptions) {
  const localKeys = useRef(0);
  return (text: string) => {
    const key = `local-${++localKeys.current}`;
    const clientId = newClientId();
    list.followRef.current = true;
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
    list.scrollToBottom();
    return true;
  };
}
