// Regenerate and Retry: one of the user's messages answered again, in its turn with their other
// messages; the earlier answers stay. One answered since, once the conversation went on, is not.
import { ONBOARDING_FINISHED, type TServerEvent } from '@daybook/contracts';
import { preciseNow } from '../../lib/clock.ts';
import type { Metrics } from '../metrics/index.ts';
import type { Llm } from '../model/model.types.ts';
import { CONVERSATION_WINDOW, type TurnContexts } from './chat.context.ts';
import type { ChatHub, ChatUser } from './chat.hub.ts';
import { type Lanes, MAX_WAITING } from './chat.lanes.ts';
import { INTERRUPTED, queued, refuse, type Say, TOO_MANY_WAITING } from './chat.messages.ts';
import type { ChatOnboarding } from './chat.onboarding.ts';
import { type Replier, type ReplyOutcome, turnResult } from './chat.reply.ts';
import type { Channel, ChatRepo } from './chat.repo.ts';

const NOT_FOUND_AGAIN = 'That message could not be found to answer it again.';
export const ANSWERED_SINCE = 'That message has been answered since, so it is not answered again.';

export function createAnswerAgain(deps: {
  repo: ChatRepo;
  hub: ChatHub;
  say: Say;
  llm: Llm | null;
  lanes: Lanes;
  /** Human messages this instance still has to answer (kept marked alive in the database). */
  owed: Set<number>;
  contexts: TurnContexts;
  replier: Replier;
  onboarding: ChatOnboarding;
  metrics?: Pick<Metrics, 'chatTurn'>;
  /** Counts a turn until it ends, so a shutdown waits for it. */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** The shutdown's wait is over: turns that come get the interrupted note. */
  isInterrupting: () => boolean;
}) {
  const { repo, hub, say, llm, lanes, owed, contexts, replier, onboarding, track } = deps;

  /** The answer again, once its turn has come. */
  async function answerInTurn(user: ChatUser, channel: Channel, id: number, ahead: number, takenAt: number) {
    if (deps.isInterrupting()) {
      await say(user.id, channel, 'system', 'system_message', INTERRUPTED, { reply_to: id });
      return null;
    }
    const found = await repo.answerAgain({ userId: user.id, channel, id }, CONVERSATION_WINDOW - 1);
    if (!found) {
      hub.answerNotComing(user.id, channel, id);
      return refuse('invalid_message', NOT_FOUND_AGAIN);
    }
    // An answer written meanwhile (to this same message, perhaps) ended its waiting: it waits again.
    if (ahead) hub.awaitAnswer(user.id, channel, id);
    owed.add(found.human.id);
    try {
      const context = await contexts.contextAgain(user, found);
      const turnEnded = deps.metrics?.chatTurn();
      let outcome: ReplyOutcome | undefined;
      try {
        outcome = await replier.reply(user, channel, found.human, context, takenAt);
      } finally {
        turnEnded?.(turnResult(outcome, llm));
      }
      if (outcome.onboardingDone) await onboarding.finish(user.id, Promise.resolve());
    } finally {
      owed.delete(found.human.id);
    }
    return null;
  }

  /** Answers the user's human message `id` again, in its turn (Regenerate, Retry); the earlier answers stay. */
  return async function answerAgain(user: ChatUser, channel: Channel, id: number): Promise<TServerEvent | null> {
    if (channel === 'onboarding' && user.onboarded) return refuse('onboarding_finished', ONBOARDING_FINISHED);
    const takenAt = preciseNow();
    const lane = lanes.of(user.id);
    if (lane.waiting >= MAX_WAITING) {
      lanes.release(user.id, lane);
      return refuse('rate_limited', TOO_MANY_WAITING);
    }
    const ahead = lane.waiting;
    lane.waiting++;
    try {
      // Judged in arrival order with the messages being stored, not at its turn: a message sent
      // just after it does not make it stale.
      const judged = lane.stored.then(() => repo.mayAnswerAgain({ userId: user.id, channel, id }));
      lane.stored = judged.then(
        () => {},
        () => {},
      );
      const may = await judged;
      if (may === 'unknown') return refuse('invalid_message', NOT_FOUND_AGAIN);
      if (may === 'answered') return refuse('already_answered', ANSWERED_SINCE);
      // No echo says so: a tab that connects before the answer's first piece shows Daybook replying.
      hub.awaitAnswer(user.id, channel, id);
      const turn = lane.turns.then((): Promise<TServerEvent | null> => answerInTurn(user, channel, id, ahead, takenAt));
      // Failed (the reason is logged by the caller): no answer is on its way.
      lane.turns = turn.catch(() => hub.answerNotComing(user.id, channel, id));
      if (ahead) hub.publish(user.id, channel, queued(id, ahead));
      return await track(turn);
    } finally {
      lane.waiting--;
      lanes.release(user.id, lane);
    }
  };
}
