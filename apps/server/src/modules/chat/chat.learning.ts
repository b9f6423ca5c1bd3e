// Learning from the user's messages, on the side: one message at a time per user, after the reply
// (it never competes with it), and what was learned is told in the user's tabs.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { describeChanges, type LearningService } from '../assistant/learning.service.ts';
import type { MemoryRow } from '../memories/index.ts';
import { modelFailure } from '../model/model.errors.ts';
import type { ChatHub, ChatUser } from './chat.hub.ts';
import type { Lanes } from './chat.lanes.ts';
import type { Channel } from './chat.repo.ts';

/** Logged (debug) once a message's learning is over, whatever it found; tests wait for it. */
export const LEARNING_DONE = 'learning from a message done';

export function createChatLearning(deps: {
  learning: LearningService;
  hub: ChatHub;
  clock: Clock;
  log: FastifyBaseLogger;
  lanes: Lanes;
  /** Counts the learning until it ends, so a shutdown waits for it. */
  track: <T>(work: Promise<T>) => Promise<T>;
}) {
  const { learning, hub, clock, log, lanes, track } = deps;

  async function learn(
    user: Pick<ChatUser, 'id' | 'learnFromChats'>,
    channel: Channel,
    messageId: number,
    text: string,
    known?: MemoryRow[],
  ) {
    try {
      const changes = await learning.learn(user, { messageId, source: channel }, text, known);
      if (changes.length) {
        hub.publish(user.id, channel, {
          author_type: 'system',
          message_type: 'task_notification_final',
          raw_text: describeChanges(changes),
          message_id: null,
          timestamp: clock.now().toISOString(),
        });
      }
    } catch (err) {
      log.warn({ ...modelFailure(err), userId: user.id }, 'learning from a message failed');
      log.debug({ err }, 'learning from a message failed (details)');
    }
    // Learning off or nothing found leaves no other trace: this says the message's learning is over.
    log.debug({ userId: user.id, messageId }, LEARNING_DONE);
  }

  return {
    /** Learns from a message after the user's earlier messages were learned from; never rejects. */
    learnInTurn(
      user: Pick<ChatUser, 'id' | 'learnFromChats'>,
      channel: Channel,
      messageId: number,
      text: string,
      known?: MemoryRow[],
    ) {
      const lane = lanes.of(user.id);
      lane.learning++;
      const run = lane.learned.then(() => learn(user, channel, messageId, text, known));
      lane.learned = run;
      return track(
        run.finally(() => {
          lane.learning--;
          lanes.release(user.id, lane);
        }),
      );
    },
  };
}

export type ChatLearning = ReturnType<typeof createChatLearning>;
