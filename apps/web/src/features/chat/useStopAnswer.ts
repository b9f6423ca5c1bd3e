// Stop (the button, or Escape in the message box): the answer being written ends where it is.
import { useEffect, useState } from 'react';
import type { ChatItem } from './chat.state.ts';
import type { ChatSocket } from './useChatSocket.ts';

export interface StopAnswerOptions {
  socket: ChatSocket;
  connected: boolean;
  /** The answer being written, if its first words came. */
  streaming: ChatItem | undefined;
  /** An answer is on its way (here or in another tab). */
  answering: boolean;
}

export function useStopAnswer({ socket, connected, streaming, answering }: StopAnswerOptions) {
  const [stopping, setStopping] = useState(false);
  const stop = () => {
    if (!connected || stopping) return;
    // The answer being written; before its first word, whichever it is.
    const replyTo = streaming?.reply_to;
    if (socket.send({ message_type: 'stop', ...(replyTo === undefined ? {} : { reply_to: replyTo }) }))
      setStopping(true);
  };
  // One stop per answer: the next one can be stopped again.
  const stoppingFor = streaming?.stream_id ?? null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new answer (or none) ends the stop in progress
  useEffect(() => {
    setStopping(false);
  }, [stoppingFor, answering]);
  return { stopping, stop };
}
