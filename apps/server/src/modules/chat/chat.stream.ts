// One answer as the model writes it: streamed to the user's tabs piece by piece (never the end
// marker), then stored however it ends: whole, stopped by the user, cut short by a shutdown, or with
// the notice that the model failed.
import { randomUUID } from 'node:crypto';
import { withoutNul } from '../../lib/text.ts';
import { ONBOARDING_DONE } from '../assistant/index.ts';
import type { ChatHub } from './chat.hub.ts';
import { INTERRUPTED, type Say, shownSoFar, UNAVAILABLE } from './chat.messages.ts';
import type { Channel } from './chat.repo.ts';

export function createAnswerStream(deps: {
  hub: ChatHub;
  say: Say;
  userId: number;
  channel: Channel;
  /** The human message being answered. */
  replyTo: number;
}) {
  const { hub, say, userId, channel, replyTo } = deps;
  const streamId = randomUUID();
  let answer = '';
  // Pieces that arrive together (a fast model, or one network read) go out as one frame.
  let scheduled = false;
  let shown = 0;
  let failed = false;
  // The text streamed so far was reasoning after all: the rest arrives with the final message.
  let silenced = false;
  const flush = () => {
    scheduled = false;
    if (failed || silenced) return;
    // The end marker never reaches a client, not even its first characters.
    const visible = shownSoFar(answer);
    if (visible.length <= shown) return;
    hub.publish(userId, channel, {
      message_type: 'stream',
      author_type: 'assistant',
      stream_id: streamId,
      raw_text: visible.slice(shown),
      reply_to: replyTo,
    });
    shown = visible.length;
  };

  /**
   * What was kept of the answer, then `note` after it (which offers to ask again). With nothing kept,
   * the note takes the stream's place.
   */
  async function keepWithNote(partial: string, note: string) {
    if (partial)
      await say(userId, channel, 'assistant', 'markdown', partial, { stream_id: streamId, reply_to: replyTo });
    await say(userId, channel, 'system', 'system_message', note, {
      reply_to: replyTo,
      ...(shown && !partial ? { stream_id: streamId } : {}),
    });
  }

  return {
    /** The text so far, end marker included. */
    get text() {
      return answer;
    },

    /** A piece from the model. */
    add(delta: string) {
      // The model's text is stored as the user's is: PostgreSQL text cannot hold NUL.
      answer += withoutNul(delta);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },

    /** The round's text so far was reasoning: the answer goes back to `before` it. */
    reset(before: string) {
      answer = before;
      silenced = shown > 0;
    },

    /** After a tool round: what the model says next continues the same answer. */
    continues() {
      if (answer && !/\s$/.test(answer)) answer += '\n\n';
    },

    /** Sends what is not shown yet, now. */
    flush,

    /** The answer as it ends, stored under the stream the tabs have shown. */
    async store(final: string) {
      await say(userId, channel, 'assistant', 'markdown', final, { stream_id: streamId, reply_to: replyTo });
    },

    /** Stopped by the user: what was written so far is the answer, marked stopped (nothing more is done). */
    async storeStopped() {
      failed = true;
      const text = shownSoFar(answer).replaceAll(ONBOARDING_DONE, '').trim();
      await say(userId, channel, 'assistant', 'markdown', text, {
        stream_id: streamId,
        reply_to: replyTo,
        stopped: true,
      });
    },

    /**
     * Cut short by a shutdown: what was written so far stays as the answer, and the interrupted note
     * after it offers to ask again (as when the model fails).
     */
    async storeInterrupted() {
      failed = true;
      const partial = silenced ? '' : shownSoFar(answer).replaceAll(ONBOARDING_DONE, '').trim();
      await keepWithNote(partial, INTERRUPTED);
    },

    /**
     * The model failed. What the user already read stays, as Stop keeps it: the text so far is the
     * answer, and the notice after it offers Retry. With nothing shown, the notice takes the stream's place.
     */
    /** The model failed: what was shown is kept, with `note` (by default, that the assistant is unavailable). */
    async storeFailed(note: string = UNAVAILABLE) {
      failed = true;
      const partial = silenced ? '' : shownSoFar(answer).slice(0, shown).replaceAll(ONBOARDING_DONE, '').trim();
      await keepWithNote(partial, note);
    },
  };
}

export type AnswerStream = ReturnType<typeof createAnswerStream>;
