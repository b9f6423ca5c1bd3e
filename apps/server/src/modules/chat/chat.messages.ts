// What the chat says itself, and how a stored message reaches the user's tabs: stored, then sent
// through the hub as the client reads it.
import { ANSWER_INTERRUPTED, ASSISTANT_UNAVAILABLE, type TChatMessage, type TServerEvent } from '@daybook/contracts';
import { ONBOARDING_DONE } from '../assistant/index.ts';
import type { ChatHub } from './chat.hub.ts';
import type { Channel, ChatMessageRow, ChatRepo } from './chat.repo.ts';

export const UNAVAILABLE = ASSISTANT_UNAVAILABLE;
export const INTERRUPTED = ANSWER_INTERRUPTED;
export const QUEUED = 'Waiting: Daybook answers your messages one at a time.';
export const TOO_MANY_WAITING =
  'Many of your messages are still waiting for an answer. Send more once they are answered.';
export const NOT_CONFIGURED =
  'No assistant model is set up on this Daybook yet. Ask whoever runs this Daybook to connect one. Your messages are saved.';

/**
 * The part of a reply streamed so far that may be shown: markers removed, and any tail that could
 * be the start of one held back until the next piece tells.
 */
export function shownSoFar(answer: string, marker = ONBOARDING_DONE): string {
  const text = answer.replaceAll(marker, '');
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(marker.slice(0, n))) return text.slice(0, -n);
  }
  return text;
}

export function presentMessage(row: ChatMessageRow, extra: Partial<TChatMessage> = {}): TChatMessage {
  return {
    author_type: row.authorType as TChatMessage['author_type'],
    message_type: row.messageType as TChatMessage['message_type'],
    raw_text: row.rawText,
    message_id: row.id,
    timestamp: row.createdAt.toISOString(),
    ...(row.url ? { url: row.url } : {}),
    ...(row.replyToId ? { reply_to: row.replyToId } : {}),
    ...(row.stopped ? { stopped: true as const } : {}),
    ...extra,
  };
}

/** A frame refused: the event goes back to the sending tab alone. */
export const refuse = (code: Extract<TServerEvent, { message_type: 'error' }>['code'], text: string): TServerEvent => ({
  message_type: 'error',
  author_type: 'system',
  code,
  raw_text: text,
});

/** Tells the user's tabs that message `messageId` waits for the answers of `ahead` messages before it. */
export const queued = (messageId: number, ahead: number): TServerEvent => ({
  message_type: 'queued',
  author_type: 'system',
  message_id: messageId,
  ahead,
  raw_text: QUEUED,
});

/** Stores a message of the chat's own (the assistant's or the system's) and sends it to the user's tabs. */
export type Say = (
  userId: number,
  channel: Channel,
  authorType: string,
  messageType: TChatMessage['message_type'],
  text: string,
  extra?: Partial<TChatMessage>,
) => Promise<ChatMessageRow>;

export function createSay({ repo, hub }: { repo: ChatRepo; hub: ChatHub }): Say {
  return async function say(userId, channel, authorType, messageType, text, extra = {}) {
    const row = await repo.create({
      userId,
      channel,
      authorType,
      messageType,
      rawText: text,
      url: extra.url ?? null,
      replyToId: extra.reply_to ?? null,
      stopped: extra.stopped === true,
    });
    hub.publish(userId, channel, presentMessage(row, extra));
    return row;
  };
}
