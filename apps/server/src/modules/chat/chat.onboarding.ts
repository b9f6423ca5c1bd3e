// The onboarding interview's start and end in the chat: its first question, and once it is over, the
// redirect to the chat and the chat's welcome, which lists what Daybook learned there.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { UsersService } from '../accounts/users.service.ts';
import type { MemoriesService } from '../memories/memories.service.ts';
import { modelFailure } from '../model/model.errors.ts';
import type { ChatHub } from './chat.hub.ts';
import type { Say } from './chat.messages.ts';
import type { ChatRepo } from './chat.repo.ts';

/** How many remembered facts the first chat message lists. */
const WELCOME_FACTS = 8;

export function createChatOnboarding(deps: {
  repo: ChatRepo;
  users: Pick<UsersService, 'markOnboarded'>;
  hub: ChatHub;
  say: Say;
  memories: Pick<MemoriesService, 'listActive'>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Counts work until it ends, so a shutdown waits for it. */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** Called once the onboarding's answers have been learned from (the daily message settings take them). */
  onOnboarded?: (userId: number) => Promise<void>;
  /** Drops this process's cached copies of the user's sessions (see session-cache.ts) after a change to the user. */
  forgetCachedUser?: (userId: number) => void;
}) {
  const { repo, users, hub, say, memories, clock, log, track } = deps;

  /** Ends the interview; once the last answer has been learned from, the chat gets its welcome. */
  async function finish(userId: number, learning: Promise<unknown>) {
    await users.markOnboarded(userId, clock.now());
    // Before the redirect below: the tab's next read must see the user onboarded.
    deps.forgetCachedUser?.(userId);
    hub.updateUser(userId, { onboarded: true });
    hub.publish(userId, 'onboarding', {
      author_type: 'system',
      message_type: 'redirect',
      raw_text: 'Onboarding complete',
      message_id: null,
      timestamp: clock.now().toISOString(),
      url: '/chat',
    });
    void track(
      learning.then(() => welcome(userId)).catch((err) => log.warn(modelFailure(err), 'welcome message failed')),
    );
    if (deps.onOnboarded)
      void track(
        learning
          .then(() => deps.onOnboarded?.(userId))
          .catch((err) => log.warn({ err }, 'settings from the onboarding failed')),
      );
  }

  /**
   * The first message of the chat after onboarding: what Daybook learned there (learning of the
   * last answers has finished by now), so the new user starts from something, not a blank page.
   */
  async function welcome(userId: number) {
    const { rows } = await repo.page(userId, 'chat', 1);
    if (rows.length) return;
    const known = await memories.listActive(userId, WELCOME_FACTS);
    const facts = known.map((m) => `- ${m.data}`).join('\n');
    await say(
      userId,
      'chat',
      'assistant',
      'markdown',
      known.length
        ? `**Welcome to your chat!** Here is what I know about you so far:\n\n${facts}\n\nAsk me anything, or tell me more about your day. You can review and change everything I remember on your Memories page.`
        : '**Welcome to your chat!** Ask me anything, or tell me about yourself: your interests, your routines, the people and places in your life. I will remember what matters, and you can review it on your Memories page.',
    );
  }

  return {
    finish,

    /** "Skip for now": ends the onboarding as a stop word does. False when it had ended already (nothing happens). */
    async skip(userId: number) {
      const marked = await users.markOnboarded(userId, clock.now());
      if (marked) await finish(userId, Promise.resolve());
      return marked;
    },

    /** The first message of an onboarding conversation that has none yet. */
    async greet(userId: number) {
      const { rows } = await repo.page(userId, 'onboarding', 1);
      if (rows.length) return;
      await say(
        userId,
        'onboarding',
        'assistant',
        'markdown',
        "Hi, I'm Daybook! I'd like to get to know you a little so I can help from day one. **What should I call you?**",
      );
    },
  };
}

export type ChatOnboarding = ReturnType<typeof createChatOnboarding>;
