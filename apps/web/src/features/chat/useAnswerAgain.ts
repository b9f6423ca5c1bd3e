// Retry on a note in place of an answer, and Regenerate on the latest answer: the server answers
// the same question again (it has it, even when this tab never loaded it).
import { ANSWER_INTERRUPTED, ASSISTANT_UNAVAILABLE } from '@daybook/contracts';
import { type RefObject, useMemo, useState } from 'react';
import type { ChatItem } from './chat.state.ts';
import type { MessageProps } from './MessageList.tsx';
import type { ChatSocket } from './useChatSocket.ts';
import { SEND_FAILED } from './useSendMessage.ts';

/** Notes in place of an answer that offer to ask the question again. */
const ASK_AGAIN_NOTES = new Set([ANSWER_INTERRUPTED, ASSISTANT_UNAVAILABLE]);

const hasCoarsePointer = () =>
  typeof window.matchMedia === 'function' && window.matchMedia('(pointer: coarse)').matches;

export interface AnswerAgainOptions {
  items: ChatItem[];
  canSend: boolean;
  /** An answer is on its way: the latest answer offers no Regenerate meanwhile. */
  answering: boolean;
  socket: ChatSocket;
  setNotice: (notice: string) => void;
  setAwaitingReply: (awaiting: boolean) => void;
  followRef: RefObject<boolean>;
  textareaRef: RefObject<HTMLTextAreaElement | null>;
}

/** Returns, for a message, which answer it is and its Retry and Regenerate buttons (when it offers them). */
export function useAnswerAgain({
  items,
  canSend,
  answering,
  socket,
  setNotice,
  setAwaitingReply,
  followRef,
  textareaRef,
}: AnswerAgainOptions) {
  const [askedAgain, setAskedAgain] = useState<ReadonlySet<string>>(new Set());
  const lastItem = items[items.length - 1];
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
    for (const i of items) {
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
  }, [items]);
  const canAskAgain = (item: ChatItem) =>
    item.message_type === 'system_message' &&
    item.reply_to !== undefined &&
    ASK_AGAIN_NOTES.has(item.raw_text) &&
    (item === lastItem || !answered.has(item.reply_to));

  return (item: ChatItem): Pick<MessageProps, 'version' | 'onAskAgain' | 'onRegenerate'> => ({
    version: versions.get(item.key),
    onAskAgain: canAskAgain(item)
      ? { disabled: !canSend || askedAgain.has(item.key), onClick: () => answerAgain(item) }
      : undefined,
    onRegenerate:
      item === lastItem && item.reply_to !== undefined && !answering
        ? { disabled: !canSend || askedAgain.has(item.key), onClick: () => answerAgain(item) }
        : undefined,
  });
}
