// What the hub remembers for tabs that connect later: answers being written and questions whose
// answer has not begun, forgotten once the instance writing them is gone.
import type { TServerEvent } from '@daybook/contracts';
import type { Channel } from './chat.repo.ts';

/** A stream with no new piece for this long belongs to an instance that is gone: it is forgotten. */
export const STREAM_STALE_MS = 120_000;

interface LiveStream {
  channel: Channel;
  replyTo?: number;
  text: string;
  at: number;
}

export function createLiveAnswers(now: () => number) {
  // Every answer being written, whichever instance writes it (every instance sees every event), with
  // its text so far, by user and stream id: a tab that connects mid-answer gets it with its history.
  const streams = new Map<number, Map<string, LiveStream>>();
  // Human messages whose answer has not begun yet, by user and message id, with the same reach: a tab
  // that connects then shows that Daybook is replying. Filled by the message's echo, or by a
  // Regenerate or Retry of it (awaitAnswer).
  const awaiting = new Map<number, Map<number, { channel: Channel; at: number }>>();
  // Entries of instances that died are forgotten when a tab connects: the user's at once, everyone's
  // at most once per STREAM_STALE_MS, so a connect's cost does not grow with the number of users.
  let swept = now();
  const dropStale = <K, T extends { at: number }>(byKey: Map<number, Map<K, T>>, userId: number) => {
    const entries = byKey.get(userId);
    if (!entries) return;
    const stale = now() - STREAM_STALE_MS;
    for (const [key, entry] of entries) if (entry.at < stale) entries.delete(key);
    if (!entries.size) byKey.delete(userId);
  };
  const sweep = () => {
    if (now() - swept < STREAM_STALE_MS) return;
    swept = now();
    for (const userId of [...streams.keys()]) dropStale(streams, userId);
    for (const userId of [...awaiting.keys()]) dropStale(awaiting, userId);
  };
  const markAwaiting = (userId: number, channel: Channel, messageId: number) => {
    const mine = awaiting.get(userId) ?? new Map<number, { channel: Channel; at: number }>();
    awaiting.set(userId, mine.set(messageId, { channel, at: now() }));
  };
  const unmarkAwaiting = (userId: number, messageId: number, channel?: Channel) => {
    const mine = awaiting.get(userId);
    const entry = mine?.get(messageId);
    if (!mine || !entry || (channel !== undefined && entry.channel !== channel)) return;
    mine.delete(messageId);
    if (!mine.size) awaiting.delete(userId);
  };
  /** A piece of an answer: its text is added to the stream's. */
  const grow = (userId: number, channel: Channel, event: Extract<TServerEvent, { message_type: 'stream' }>) => {
    let mine = streams.get(userId);
    if (!mine) {
      mine = new Map<string, LiveStream>();
      streams.set(userId, mine);
    }
    const live = mine.get(event.stream_id);
    if (live) {
      live.text += event.raw_text;
      live.at = now();
    } else {
      mine.set(event.stream_id, {
        channel,
        text: event.raw_text,
        at: now(),
        ...(event.reply_to === undefined ? {} : { replyTo: event.reply_to }),
      });
    }
  };
  /** Keeps track of the event published to the user's tabs on `channel`. */
  const follow = (userId: number, channel: Channel, event: TServerEvent) => {
    if (event.message_type === 'message' && event.author_type === 'human' && event.message_id !== null) {
      markAwaiting(userId, channel, event.message_id);
      return;
    }
    if ('reply_to' in event && event.reply_to !== undefined) unmarkAwaiting(userId, event.reply_to);
    if (event.message_type === 'stream') {
      grow(userId, channel, event);
      return;
    }
    if (
      event.message_type === 'history' ||
      event.message_type === 'queued' ||
      event.message_type === 'error' ||
      event.message_type === 'research' ||
      event.message_type === 'pong'
    )
      return;
    const mine = streams.get(userId);
    if (!mine || (event.stream_id === undefined && event.reply_to === undefined)) return;
    // The final message (or a note in the answer's place) ends it.
    if (event.stream_id !== undefined) mine.delete(event.stream_id);
    if (event.reply_to !== undefined)
      for (const [id, live] of mine) if (live.replyTo !== undefined && live.replyTo === event.reply_to) mine.delete(id);
    if (!mine.size) streams.delete(userId);
  };

  return {
    follow,
    markAwaiting,
    unmarkAwaiting,
    /** The user's human messages on that channel whose answer has not begun, oldest first. */
    answering(userId: number, channel: Channel) {
      sweep();
      dropStale(awaiting, userId);
      const out: number[] = [];
      for (const [id, a] of awaiting.get(userId) ?? []) if (a.channel === channel) out.push(id);
      return out.sort((x, y) => x - y);
    },
    /** The user's answers being written on that channel, with their text so far. */
    liveStreams(userId: number, channel: Channel) {
      sweep();
      dropStale(streams, userId);
      const out: Array<{ stream_id: string; raw_text: string; reply_to?: number }> = [];
      for (const [id, live] of streams.get(userId) ?? []) {
        if (live.channel !== channel) continue;
        out.push({
          stream_id: id,
          raw_text: live.text,
          ...(live.replyTo === undefined ? {} : { reply_to: live.replyTo }),
        });
      }
      return out;
    },
  };
}
