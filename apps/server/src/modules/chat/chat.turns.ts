// A human message's way through the chat: taken (at most once per client id), stored in arrival
// order and echoed, queued behind the user's earlier messages, then answered in its turn (a stop
// word, a `/research` command or the model's reply) and learned from.
import { ONBOARDING_FINISHED, type TChatMessage, type TServerEvent } from '@daybook/contracts';
import { preciseNow } from '../../lib/clock.ts';
import { withoutNul } from '../../lib/text.ts';
import type { Metrics } from '../metrics/index.ts';
import type { Llm } from '../model/model.types.ts';
import { AlreadyStored, STOP_WORDS, type TurnContext, type TurnContexts } from './chat.context.ts';
import type { ChatHub, ChatUser } from './chat.hub.ts';
import { type Lanes, MAX_WAITING } from './chat.lanes.ts';
import type { ChatLearning } from './chat.learning.ts';
import { INTERRUPTED, presentMessage, queued, refuse, type Say, TOO_MANY_WAITING } from './chat.messages.ts';
import type { ChatOnboarding } from './chat.onboarding.ts';
import { type Replier, type ReplyOutcome, turnResult } from './chat.reply.ts';
import type { Channel, ChatMessageRow } from './chat.repo.ts';
import { type ResearchPort, researchStarted } from './chat.tools.ts';

/** `/research <topic>` starts a web research whatever the model can do. */
const RESEARCH_COMMAND = /^\/research(?:\s+([\s\S]*))?$/i;
/** Client ids remembered per user; a client resends only the few messages of one lost connection. */
const RECENT_CLIENT_IDS = 20;

// Client ids of recent messages, per user, with the stored message (null while it is being
// stored): a message resent after a reconnect (its echo never arrived) is stored once, and the
// resending tab gets the echo. Bounded per user. This is the fast path for a resend to the same
// instance; the unique (user_id, client_id) index catches one that reaches another instance or
// comes after a restart.
function createRecentClientIds() {
  const recentClientIds = new Map<number, Map<string, TChatMessage | null>>();
  return {
    of(userId: number) {
      const seen = recentClientIds.get(userId) ?? new Map<string, TChatMessage | null>();
      recentClientIds.set(userId, seen);
      return seen;
    },
    remember(seen: Map<string, TChatMessage | null>, clientId: string, message: TChatMessage | null) {
      seen.set(clientId, message);
      if (seen.size > RECENT_CLIENT_IDS) seen.delete(seen.keys().next().value as string);
    },
  };
}

export function createTurns(deps: {
  hub: ChatHub;
  say: Say;
  llm: Llm | null;
  lanes: Lanes;
  /** Human messages this instance still has to answer (kept marked alive in the database). */
  owed: Set<number>;
  contexts: TurnContexts;
  replier: Replier;
  learning: ChatLearning;
  onboarding: ChatOnboarding;
  research?: ResearchPort;
  metrics?: Pick<Metrics, 'chatTurn'>;
  /** Counts a turn until it ends, so a shutdown waits for it. */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** The shutdown has begun: no new message is taken. */
  isStopping: () => boolean;
  /** The shutdown's wait is over: turns that come get the interrupted note. */
  isInterrupting: () => boolean;
}) {
  const { hub, say, llm, lanes, owed, contexts, replier, learning, onboarding, research, track } = deps;

  const clientIds = createRecentClientIds();

  /**
   * Takes a human message (its text checked already): stores it, echoes it to every tab and answers
   * it in its turn. Returns an event for the sending tab alone (a refusal, or the echo of a resend).
   */
  async function take(
    user: ChatUser,
    channel: Channel,
    text: string,
    rawClientId: string | undefined,
  ): Promise<TServerEvent | null> {
    if (channel === 'onboarding' && user.onboarded) return refuse('onboarding_finished', ONBOARDING_FINISHED);
    const takenAt = preciseNow();
    const clientId = rawClientId === undefined ? undefined : withoutNul(rawClientId);
    const seen = clientId === undefined ? null : clientIds.of(user.id);
    // Already stored: echo it again to this tab. Still being stored: its echo is on the way.
    if (seen && clientId !== undefined && seen.has(clientId)) return seen.get(clientId) ?? null;
    // Shutting down: not taken. The client sends it again (same client id) once it has reconnected,
    // to another instance or to this one restarted.
    if (deps.isStopping() && clientId !== undefined) return null;
    const lane = lanes.of(user.id);
    if (lane.waiting >= MAX_WAITING) {
      lanes.release(user.id, lane);
      return refuse('rate_limited', TOO_MANY_WAITING);
    }
    if (seen && clientId !== undefined) clientIds.remember(seen, clientId, null);
    // Decided before anything is awaited, so messages arriving together are counted in order.
    const ahead = lane.waiting;
    lane.waiting++;
    try {
      // Stored in arrival order before anything else happens: whatever fails later, the message is kept.
      const storing = lane.stored.then(() =>
        ahead
          ? contexts.storeWaiting(user, channel, text, clientId)
          : contexts.startTurn(user, channel, text, clientId),
      );
      lane.stored = storing.catch(() => {});
      const stored = await storing.catch((err: unknown) => {
        // Stored before, by this or another instance: echo the stored copy to this tab, answer nothing.
        if (err instanceof AlreadyStored) return err.stored;
        // Not stored: a resend must be taken.
        if (clientId !== undefined) seen?.delete(clientId);
        throw err;
      });
      if (!('human' in stored)) {
        if (seen && clientId !== undefined) clientIds.remember(seen, clientId, presentMessage(stored));
        return presentMessage(stored);
      }
      const { human, context } = stored;
      if (seen && clientId !== undefined) clientIds.remember(seen, clientId, presentMessage(human));
      owed.add(human.id);
      try {
        if (ahead) hub.publish(user.id, channel, queued(human.id, ahead));
        const turn = lane.turns.then(() => answer(user, channel, human, context, takenAt));
        lane.turns = turn.catch(() => {});
        await track(turn);
      } finally {
        owed.delete(human.id);
      }
    } finally {
      lane.waiting--;
      lanes.release(user.id, lane);
    }
    return null;
  }

  /** Answers `human` (its turn has come) and learns from it. */
  async function answer(
    user: ChatUser,
    channel: Channel,
    human: ChatMessageRow,
    context: TurnContext | null,
    takenAt: number,
  ) {
    const text = human.rawText;
    // Its turn came after the shutdown's drain: the note now, not once another instance notices.
    if (deps.isInterrupting()) {
      await say(user.id, channel, 'system', 'system_message', INTERRUPTED, { reply_to: human.id });
      return;
    }
    if (channel === 'onboarding' && STOP_WORDS.test(text)) {
      const learned = learning.learnInTurn(user, channel, human.id, text);
      await say(user.id, channel, 'assistant', 'markdown', 'No problem. You can tell me more any time in the chat.', {
        reply_to: human.id,
      });
      await onboarding.finish(user.id, learned);
      return;
    }
    // An earlier message of the queue ended the interview: this one is kept, and said so.
    if (channel === 'onboarding' && user.onboarded) {
      await say(user.id, channel, 'system', 'system_message', ONBOARDING_FINISHED, { reply_to: human.id });
      return;
    }
    const command = channel === 'chat' ? text.match(RESEARCH_COMMAND) : null;
    if (command) {
      await startResearch(user, human, command[1] ?? '');
      return;
    }
    // Learning starts once the reply is out, so it never competes with it; the caller is not kept waiting.
    let outcome: ReplyOutcome | undefined;
    const turnEnded = deps.metrics?.chatTurn();
    try {
      outcome = await replier.reply(user, channel, human, context ?? (await contexts.contextNow(user, human)), takenAt);
    } finally {
      turnEnded?.(turnResult(outcome, llm));
      const learned = learning.learnInTurn(user, channel, human.id, text, outcome?.memories);
      if (outcome?.onboardingDone) await onboarding.finish(user.id, learned);
    }
  }

  /** `/research <topic>`: starts the research (or says why it cannot) as the answer to the command. */
  async function startResearch(user: ChatUser, human: ChatMessageRow, topic: string) {
    const started = research
      ? await research.request(user.id, topic, { requestMessageId: human.id })
      : { refused: 'Web research is not available on this Daybook.' };
    if ('refused' in started) {
      await say(user.id, 'chat', 'system', 'system_message', started.refused, { reply_to: human.id });
      return;
    }
    await say(user.id, 'chat', 'assistant', 'markdown', researchStarted(started.research.query, started.ahead), {
      reply_to: human.id,
    });
  }

  return { take };
}
