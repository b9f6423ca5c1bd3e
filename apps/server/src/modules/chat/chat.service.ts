// A conversation turn: validate and store the human message, echo it to every tab, stream the
// assistant's reply, and learn from the message on the side without delaying the reply.
import { randomUUID } from 'node:crypto';
import { CHAT_TEXT_MAX, type TChatMessage, type TServerEvent, ZClientMessage } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { describeChanges, type LearningService } from '../assistant/learning.service.ts';
import type { Llm } from '../assistant/llm.ts';
import { buildPrompt, ONBOARDING_DONE, timeZoneOf } from '../assistant/prompt.ts';
import type { MemoriesRepo } from '../memories/memories.repo.ts';
import type { ChatHub } from './chat.hub.ts';
import type { Channel, ChatMessageRow, ChatRepo } from './chat.repo.ts';

export const UNAVAILABLE = 'The assistant is unavailable right now, please try again';
export const NOT_CONFIGURED =
  'No assistant model is configured yet. Whoever runs this Daybook can set LLM_MODEL (plus LLM_BASE_URL and LLM_API_KEY for their provider, e.g. OpenAI or a local Ollama) and restart it. Your messages are saved.';

const STOP_WORDS = /^\s*(stop|skip|later|done|that'?s all|enough|finish)\b/i;

export function presentMessage(row: ChatMessageRow, extra: Partial<TChatMessage> = {}): TChatMessage {
  return {
    author_type: row.authorType as TChatMessage['author_type'],
    message_type: row.messageType as TChatMessage['message_type'],
    raw_text: row.rawText,
    message_id: row.id,
    timestamp: row.createdAt.toISOString(),
    ...(row.url ? { url: row.url } : {}),
    ...extra,
  };
}

export interface ChatUser {
  id: number;
  learnFromChats: boolean;
}

export function createChatService(deps: {
  repo: ChatRepo;
  hub: ChatHub;
  llm: Llm | null;
  learning: LearningService;
  memoriesRepo: MemoriesRepo;
  clock: Clock;
  log: FastifyBaseLogger;
}) {
  const { repo, hub, llm, learning, memoriesRepo, clock, log } = deps;

  const refuse = (code: Extract<TServerEvent, { message_type: 'error' }>['code'], text: string): TServerEvent => ({
    message_type: 'error',
    author_type: 'system',
    code,
    raw_text: text,
  });

  async function say(
    userId: number,
    channel: Channel,
    authorType: string,
    messageType: TChatMessage['message_type'],
    text: string,
    extra: Partial<TChatMessage> = {},
  ) {
    const row = await repo.create({ userId, channel, authorType, messageType, rawText: text, url: extra.url ?? null });
    hub.publish(userId, channel, presentMessage(row, extra));
    return row;
  }

  async function finishOnboarding(userId: number) {
    await repo.markOnboarded(userId, clock.now());
    hub.publish(userId, 'onboarding', {
      author_type: 'system',
      message_type: 'redirect',
      raw_text: 'Onboarding complete',
      message_id: null,
      timestamp: clock.now().toISOString(),
      url: '/chat',
    });
  }

  /** Answers the conversation whose newest message is `text`. */
  async function reply(user: ChatUser, channel: Channel, text: string) {
    if (!llm) {
      await say(user.id, channel, 'system', 'system_message', NOT_CONFIGURED);
      return;
    }
    // One round of queries, in parallel. At most 8 + 12 + 6 memories, however many the user has:
    // the prompt stays bounded.
    const [{ rows }, core, relevant, recent] = await Promise.all([
      repo.page(user.id, channel, 40),
      memoriesRepo.core(user.id, 8),
      memoriesRepo.relevant(user.id, text, 12),
      memoriesRepo.recent(user.id, 6),
    ]);
    const known = [...core, ...relevant, ...recent];
    const memories = [...new Map(known.map((m) => [m.id, m])).values()];
    const messages = buildPrompt({
      onboarding: channel === 'onboarding',
      now: clock.now(),
      timeZone: timeZoneOf(memories),
      memories,
      conversation: rows,
    });

    const streamId = randomUUID();
    let answer = '';
    try {
      for await (const delta of llm.stream(messages)) {
        answer += delta;
        hub.publish(user.id, channel, {
          message_type: 'stream',
          author_type: 'assistant',
          stream_id: streamId,
          raw_text: delta,
        });
      }
    } catch (err) {
      log.warn({ err, userId: user.id }, 'model request failed');
      await say(user.id, channel, 'system', 'system_message', UNAVAILABLE);
      return;
    }
    const done = channel === 'onboarding' && answer.includes(ONBOARDING_DONE);
    const final = answer.replace(ONBOARDING_DONE, '').trim() || '…';
    await say(user.id, channel, 'assistant', 'markdown', final, { stream_id: streamId });
    if (done) await finishOnboarding(user.id);
  }

  async function learn(user: ChatUser, channel: Channel, messageId: number, text: string) {
    try {
      const changes = await learning.learn(user, messageId, text);
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
      log.warn({ err, userId: user.id }, 'learning from a message failed');
    }
  }

  return {
    async history(userId: number, channel: Channel, limit: number, before?: number) {
      const { rows, hasMore } = await repo.page(userId, channel, limit, before);
      return { results: rows.map((r) => presentMessage(r)), has_more: hasMore };
    },

    /**
     * Handles one frame from a client. Returns an event for that client alone when the frame is
     * refused; everything else reaches all of the user's tabs through the hub.
     */
    async receive(user: ChatUser, channel: Channel, frame: string): Promise<TServerEvent | null> {
      let body: unknown;
      try {
        body = JSON.parse(frame);
      } catch {
        return refuse('invalid_json', 'That message could not be read (it is not JSON).');
      }
      const parsed = ZClientMessage.safeParse(body);
      if (!parsed.success) return refuse('invalid_message', 'That message could not be read (unknown message type).');
      const text = parsed.data.raw_text.trim();
      if (!text) return refuse('empty_message', 'Type a message before sending.');
      if (text.length > CHAT_TEXT_MAX)
        return refuse('message_too_long', `Messages can be at most ${CHAT_TEXT_MAX.toLocaleString('en')} characters.`);

      // Stored before anything else happens: whatever fails later, the message is kept.
      const human = await say(user.id, channel, 'human', 'message', text);
      if (channel === 'onboarding' && STOP_WORDS.test(text)) {
        void learn(user, channel, human.id, text);
        await say(user.id, channel, 'assistant', 'markdown', 'No problem. You can tell me more any time in the chat.');
        await finishOnboarding(user.id);
        return null;
      }
      // Learning starts once the reply is out, so it never competes with it; the caller is not kept waiting.
      await reply(user, channel, text).finally(() => void learn(user, channel, human.id, text));
      return null;
    },

    /** The first message of an onboarding conversation that has none yet. */
    async greetOnboarding(userId: number) {
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

export type ChatService = ReturnType<typeof createChatService>;
