// The message list as a pure reducer: history merge, echo matching, streamed replies, older pages.
import type { TAuthorType, TChatMessage, TMessageType } from '@daybook/contracts';

export interface ChatItem {
  /** Stable React key: `m<id>` for stored messages, `local-<n>` before the echo, `stream-<id>` while streaming. */
  key: string;
  author_type: TAuthorType;
  message_type: TMessageType;
  raw_text: string;
  message_id: number | null;
  /** Null while a local message waits for its echo (shown as "sending..."). */
  timestamp: string | null;
  url?: string;
  stream_id?: string;
  /** A reply still being streamed (on the current connection; a new history drops it). */
  streaming?: boolean;
  /** Our id for a message we sent, so a resend after a reconnect is stored once. */
  client_id?: string;
  /** On an answer (or a note in its place): the human message it answers. */
  reply_to?: number;
  /** A human message waiting while earlier ones are answered (Daybook answers one at a time). */
  queued?: boolean;
  /** An answer the user stopped while it was written. */
  stopped?: boolean;
  /**
   * Came while the chat was open (sent, answered, streamed in): it fades in. What a history brings
   * (the first page, earlier pages, a reconnect) appears as it is: fifty rows fading in at once
   * cost the page a layout and two hundred animation events, and tell the reader nothing.
   */
  arrived?: true;
}

/** An answer being written when a connection opened, with its text so far (see the history's `streams`). */
export interface LiveStream {
  stream_id: string;
  raw_text: string;
  reply_to?: number;
}

export interface ChatState {
  items: ChatItem[];
  /** Older messages exist on the server before the first item. */
  hasMore: boolean;
  /** The first history has arrived. */
  loaded: boolean;
}

export const initialChatState: ChatState = { items: [], hasMore: false, loaded: false };

export type ChatAction =
  | { type: 'history'; messages: TChatMessage[]; hasMore: boolean; streams?: LiveStream[]; answering?: number[] }
  | { type: 'older'; messages: TChatMessage[]; hasMore: boolean }
  | { type: 'message'; message: TChatMessage }
  | { type: 'stream'; streamId: string; delta: string; replyTo?: number }
  | { type: 'queued'; messageId: number }
  | { type: 'send'; key: string; text: string; clientId?: string }
  | { type: 'unsend'; key: string };

/** A message we sent whose echo has not come back yet ("sending..."). */
export const isPending = (item: ChatItem) =>
  item.author_type === 'human' && item.message_id === null && item.timestamp === null;

let transientKeys = 0;

const fromMessage = (message: TChatMessage): ChatItem => ({
  key: message.message_id === null ? `t-${++transientKeys}` : `m${message.message_id}`,
  author_type: message.author_type,
  message_type: message.message_type,
  raw_text: message.raw_text,
  message_id: message.message_id,
  timestamp: message.timestamp,
  ...(message.url === undefined ? {} : { url: message.url }),
  ...(message.stream_id === undefined ? {} : { stream_id: message.stream_id }),
  ...(message.reply_to === undefined ? {} : { reply_to: message.reply_to }),
  ...(message.stopped ? { stopped: true } : {}),
});

const liveItem = (streamId: string, text: string, replyTo?: number): ChatItem => ({
  key: `stream-${streamId}`,
  author_type: 'assistant',
  message_type: 'markdown',
  raw_text: text,
  message_id: null,
  timestamp: null,
  stream_id: streamId,
  streaming: true,
  ...(replyTo === undefined ? {} : { reply_to: replyTo }),
});

/** The question `replyTo` is being answered: it no longer waits. */
function answered(items: ChatItem[], replyTo: number | undefined): ChatItem[] {
  if (replyTo === undefined) return items;
  const at = items.findIndex((i) => i.message_id === replyTo && i.queued);
  if (at < 0) return items;
  const next = items.slice();
  next[at] = { ...(items[at] as ChatItem), queued: false };
  return next;
}

const byId = (a: ChatItem, b: ChatItem) => (a.message_id ?? 0) - (b.message_id ?? 0);

/** Stored messages ordered by id, then the local ones (unsent messages, live replies) in arrival order. */
function arrange(stored: ChatItem[], local: ChatItem[]) {
  return [...stored.sort(byId), ...local];
}

function applyHistory(
  state: ChatState,
  messages: TChatMessage[],
  hasMore: boolean,
  streams: LiveStream[] = [],
  answering: number[] = [],
): ChatState {
  const incoming = messages.filter((m) => m.message_id !== null).map(fromMessage);
  const current = new Map(state.items.filter((i) => i.message_id !== null).map((i) => [i.message_id, i]));
  const oldestIncoming = incoming.reduce((min, i) => Math.min(min, i.message_id as number), Number.POSITIVE_INFINITY);
  // Keep what we had only when the new window overlaps it; otherwise a gap could hide messages.
  const overlaps = [...current.keys()].some((id) => (id as number) >= oldestIncoming);
  const stored = new Map(overlaps ? current : []);
  // Human messages the server stored while our copies were still unsent.
  const newHuman = incoming.filter((i) => i.author_type === 'human' && !current.has(i.message_id));
  const replied = new Set(incoming.map((i) => i.reply_to));
  for (const item of incoming) {
    // A message we knew was waiting still is, until its answer shows up.
    const waiting = current.get(item.message_id)?.queued && !replied.has(item.message_id as number);
    stored.set(item.message_id, waiting ? { ...item, queued: true } : item);
  }

  const local: ChatItem[] = [];
  for (const item of state.items) {
    if (item.message_id !== null) continue;
    if (isPending(item)) {
      const match = newHuman.findIndex((h) => h.raw_text.trim() === item.raw_text.trim());
      if (match >= 0) {
        newHuman.splice(match, 1);
        continue;
      }
    }
    // A history comes with a new connection: a reply that was streaming on the old one will never
    // finish there. Its final message is in this history, or arrives later as a new message.
    if (item.streaming) continue;
    local.push(item);
  }
  // Answers being written right now, from their first word (they go on with the next `stream` events).
  for (const live of streams) local.push(liveItem(live.stream_id, live.raw_text, live.reply_to));
  const live = new Set(streams.map((s) => s.reply_to));
  for (const [id, item] of stored)
    if (item.queued && live.has(id as number)) stored.set(id, { ...item, queued: false });
  // Questions whose answer has not begun: the first is being answered unless one is being written; the others wait.
  answering.forEach((id, index) => {
    const item = stored.get(id);
    if (item && (index > 0 || streams.length > 0)) stored.set(id, { ...item, queued: true });
  });
  const keptOlder = overlaps && [...current.keys()].some((id) => (id as number) < oldestIncoming);
  return { items: arrange([...stored.values()], local), hasMore: keptOlder ? state.hasMore : hasMore, loaded: true };
}

function applyMessage(state: ChatState, message: TChatMessage): ChatState {
  const items = answered(state.items, message.reply_to);
  const id = message.message_id;
  const known = id === null ? -1 : items.findIndex((i) => i.message_id === id);
  if (known >= 0) {
    // An echo of a message we already hold: take the server's time stamp (and text).
    const next = items.slice();
    next[known] = {
      ...(items[known] as ChatItem),
      raw_text: message.raw_text,
      timestamp: message.timestamp,
      ...(message.stopped ? { stopped: true } : {}),
    };
    // The history had this final message already: the live copy of its stream ends here.
    const stream = message.stream_id;
    return {
      ...state,
      items: stream === undefined ? next : next.filter((i) => !(i.streaming && i.stream_id === stream)),
    };
  }
  const item = fromMessage(message);
  if (message.author_type === 'human') {
    const text = message.raw_text.trim();
    const pending = items.findIndex((i) => isPending(i) && i.raw_text.trim() === text);
    if (pending >= 0) {
      const next = items.slice();
      // Keep the local key so the bubble does not remount (nor fade in again).
      next[pending] = { ...item, key: (items[pending] as ChatItem).key, arrived: true };
      return { ...state, items: next };
    }
  }
  if (message.stream_id !== undefined) {
    const live = items.findIndex((i) => i.streaming && i.stream_id === message.stream_id);
    if (live >= 0) {
      const next = items.slice();
      const { arrived } = items[live] as ChatItem;
      next[live] = { ...item, key: (items[live] as ChatItem).key, ...(arrived ? { arrived } : {}) };
      return { ...state, items: next };
    }
  }
  const fresh: ChatItem = { ...item, arrived: true };
  // A new message goes after everything stored but before our unsent ones.
  const firstLocal = items.findIndex((i) => i.message_id === null && isPending(i));
  if (id !== null && firstLocal >= 0) {
    return { ...state, items: [...items.slice(0, firstLocal), fresh, ...items.slice(firstLocal)] };
  }
  return { ...state, items: [...items, fresh] };
}

function applyStream(state: ChatState, streamId: string, delta: string, replyTo?: number): ChatState {
  const items = answered(state.items, replyTo);
  const live = items.findIndex((i) => i.stream_id === streamId);
  if (live >= 0) {
    const current = items[live] as ChatItem;
    // The final message already replaced the live bubble: late pieces are dropped.
    if (!current.streaming) return state;
    const next = items.slice();
    next[live] = { ...current, raw_text: current.raw_text + delta };
    return { ...state, items: next };
  }
  return { ...state, items: [...items, { ...liveItem(streamId, delta, replyTo), arrived: true }] };
}

export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'history':
      return applyHistory(state, action.messages, action.hasMore, action.streams, action.answering);
    case 'older': {
      const have = new Set(state.items.map((i) => i.message_id).filter((id) => id !== null));
      const older = action.messages.filter((m) => m.message_id !== null && !have.has(m.message_id)).map(fromMessage);
      return { ...state, items: [...older.sort(byId), ...state.items], hasMore: action.hasMore };
    }
    case 'message':
      return applyMessage(state, action.message);
    case 'stream':
      return applyStream(state, action.streamId, action.delta, action.replyTo);
    case 'queued': {
      // Its answer may already have begun (events of other tabs race): then it is not waiting.
      if (state.items.some((i) => i.reply_to === action.messageId)) return state;
      const at = state.items.findIndex((i) => i.message_id === action.messageId);
      if (at < 0) return state;
      const items = state.items.slice();
      items[at] = { ...(items[at] as ChatItem), queued: true };
      return { ...state, items };
    }
    case 'send':
      return {
        ...state,
        items: [
          ...state.items,
          {
            key: action.key,
            author_type: 'human',
            message_type: 'message',
            raw_text: action.text,
            message_id: null,
            timestamp: null,
            arrived: true,
            ...(action.clientId === undefined ? {} : { client_id: action.clientId }),
          },
        ],
      };
    case 'unsend':
      return { ...state, items: state.items.filter((i) => i.key !== action.key) };
  }
}

/** The oldest stored message id, the `before` cursor for older history. */
export const oldestId = (state: ChatState) =>
  state.items.reduce<number | null>(
    (min, i) => (i.message_id === null ? min : min === null ? i.message_id : Math.min(min, i.message_id)),
    null,
  );
