// Which messages of the conversation the prompt carries. Not simply the newest that fit: then the
// window would slide a message at a time once full, its start would change every turn, and no model
// server could reuse the prompt it processed for the turn before (prompt caching, a local server's
// KV cache). The window starts at a marked message instead and stays there while the conversation
// fits; when it no longer does, it moves on by at least a quarter of its budget (in tokens and in
// messages) to a new start, which the caller marks (chat_messages.window_start). So the start moves
// every few turns, and every instance, a restart and an answer given again see the same one.
import type { LlmMessage } from '../model/model.types.ts';

/** When the window moves on, what stays is at most this share of its budget. */
const KEEP_ON_MOVE = 0.75;

export interface WindowMessage {
  /** Absent for a message not stored (it cannot be marked). */
  id?: number;
  role: 'user' | 'assistant';
  content: string;
  /** Marked as the window's start when it last moved. */
  windowStart?: boolean;
}

export interface ConversationWindow {
  messages: LlmMessage[];
  /** The index of the window's first message in those given. */
  start: number;
  /** The id of the message the window now starts at, when it moved there this turn (to be marked). */
  movedTo: number | null;
}

export interface WindowLimits {
  /** Tokens of the window, the message being answered included. */
  budget: number;
  /** Messages the caller reads at most: a start older than that is out of reach. */
  maxMessages: number;
  cost: (text: string) => number;
  /** The messages are the whole conversation (fewer than were asked for). */
  whole: boolean;
}

/** Tokens of each suffix: suffix[i] is what messages i.. cost. */
function suffixCosts(messages: WindowMessage[], cost: (text: string) => number): number[] {
  const suffix = new Array<number>(messages.length + 1).fill(0);
  for (let i = messages.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + cost(messages[i]?.content ?? '');
  return suffix;
}

/**
 * The window of `messages` (oldest first; the last one, the message being answered, is always kept):
 * from the latest marked message while everything from it fits, from the first message of a whole
 * conversation that fits, else from a new start that leaves a quarter of the budget free.
 */
export function conversationWindow(messages: WindowMessage[], limits: WindowLimits): ConversationWindow {
  const last = messages.length - 1;
  if (last < 0) return { messages: [], start: 0, movedTo: null };
  const suffix = suffixCosts(messages, limits.cost);
  const fits = (i: number) => (suffix[i] ?? 0) <= limits.budget;
  const window = (start: number, movedTo: number | null): ConversationWindow => ({
    messages: messages.slice(start).map(({ role, content }) => ({ role, content })),
    start,
    movedTo,
  });

  // A start older than the messages read (the window outgrew what the caller reads) is not among them.
  const marked = messages.findLastIndex((m, i) => i < last && m.windowStart);
  if (marked >= 0 && fits(marked)) return window(marked, null);
  if (marked < 0 && limits.whole && fits(0)) return window(0, null);

  let start = 0;
  while (
    start < last &&
    ((suffix[start] ?? 0) > limits.budget * KEEP_ON_MOVE || messages.length - start > limits.maxMessages * KEEP_ON_MOVE)
  )
    start++;
  const id = messages[start]?.id;
  // The message being answered alone, or one that cannot be marked: no start to keep.
  return window(start, start < last && id !== undefined ? id : null);
}
