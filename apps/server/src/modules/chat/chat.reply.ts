// The assistant's reply to one message: the prompt, then the model's answer over its tool rounds
// (chat.tool-loop.ts), streamed and stored however it ends (chat.stream.ts). Answers being written
// can be stopped by the user from any instance, and cut short by a shutdown.
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, preciseNow } from '../../lib/clock.ts';
import { buildChatPrompt, ONBOARDING_DONE, timeZoneOf } from '../assistant/index.ts';
import type { MemoryRow } from '../memories/index.ts';
import { modelFailure, UsageLimitError } from '../model/model.errors.ts';
import type { Llm, LlmTool, LlmTurnMessage } from '../model/model.types.ts';
import { CONVERSATION_WINDOW, type TurnContext } from './chat.context.ts';
import type { ChatHub, ChatUser } from './chat.hub.ts';
import { NOT_CONFIGURED, type Say } from './chat.messages.ts';
import type { Channel, ChatMessageRow } from './chat.repo.ts';
import { createAnswerStream } from './chat.stream.ts';
import { answerWithTools } from './chat.tool-loop.ts';
import {
  CALENDAR_EVENTS_TOOL,
  type CalendarPort,
  createCalendarReader,
  type ResearchPort,
  researchStarted,
  WEB_RESEARCH_TOOL,
} from './chat.tools.ts';

/** The abort reason of answers cut short by a shutdown (a user's Stop gives none). */
const SHUTTING_DOWN = new Error('Daybook is shutting down');

export interface ReplyOutcome {
  /** The memories the reply considered, for the learning step to reuse. */
  memories?: MemoryRow[];
  /** The onboarding interview has what it needs. */
  onboardingDone: boolean;
  /** The model failed: the user got a notice instead of an answer. */
  failed?: boolean;
}

/** How a turn ended, for /metrics (`undefined`: it threw). */
export function turnResult(outcome: ReplyOutcome | undefined, llm: Llm | null) {
  return !outcome ? 'error' : outcome.failed ? 'model_error' : llm ? 'answered' : 'not_configured';
}

/** What one answer being written needs once its prompt is ready. */
interface Writing {
  user: ChatUser;
  channel: Channel;
  replyTo: number;
  memories: MemoryRow[];
  messages: LlmTurnMessage[];
  prompt: (withTools: boolean) => LlmTurnMessage[];
  tools: LlmTool[];
  zone: string;
  stop: AbortController;
}

export function createReplier(deps: {
  llm: Llm | null;
  /** Marks the message the prompt's conversation window moved to (ChatRepo.markWindowStart). */
  markWindowStart: (userId: number, id: number) => Promise<void>;
  hub: ChatHub;
  say: Say;
  clock: Clock;
  log: FastifyBaseLogger;
  research?: ResearchPort;
  calendar?: CalendarPort;
}) {
  const { llm, hub, say, clock, log, research, calendar } = deps;
  const readCalendar = calendar ? createCalendarReader({ calendar, clock, log }) : undefined;

  /** Answers this instance is writing, per user: Stop (from any instance, through the hub) aborts them. */
  const writing = new Map<
    number,
    Set<{ channel: Channel; replyTo: number; controller: AbortController; takenAt: number }>
  >();
  const early = createEarlyStops();
  hub.onStop((userId, channel, replyTo, at) => {
    let stopped = false;
    for (const w of writing.get(userId) ?? [])
      if (stops({ channel, replyTo, at }, w)) {
        w.controller.abort();
        stopped = true;
      }
    // The tab shows Stop as soon as a message is sent: its answer may not have begun yet.
    if (!stopped) early.keep(userId, { channel, replyTo, at });
  });

  /**
   * Answers the conversation in `context`, whose newest message is `human`. `takenAt`: when this
   * answer was asked for (the message received, or Regenerate pressed); a Stop asked since then,
   * before the answer began, ends it at once.
   */
  async function reply(
    user: ChatUser,
    channel: Channel,
    human: ChatMessageRow,
    context: TurnContext,
    takenAt = preciseNow(),
  ): Promise<ReplyOutcome> {
    const replyTo = human.id;
    if (!llm) {
      await say(user.id, channel, 'system', 'system_message', NOT_CONFIGURED, { reply_to: replyTo });
      return { onboardingDone: false };
    }
    const model = llm;
    const { core, relevant, recent } = context.selection;
    const known = [...core, ...relevant, ...recent];
    const memories = [...new Map(known.map((m) => [m.id, m])).values()];
    // Offered only in the chat; research only when a research could start.
    const canResearch = channel === 'chat' && research && !research.unavailable();
    const tools = [
      ...(canResearch ? [WEB_RESEARCH_TOOL] : []),
      ...(channel === 'chat' && calendar ? [CALENDAR_EVENTS_TOOL] : []),
    ];
    // The setting (the browser's, the onboarding's or the user's choice) wins over what memories say.
    const zone = user.timeZone ?? timeZoneOf(memories);
    const now = clock.now();
    // Without tools (the endpoint refuses them), the model is promised none: research is the user's command.
    const build = (withTools: boolean) =>
      buildChatPrompt({
        onboarding: channel === 'onboarding',
        now,
        timeZone: zone,
        memories: context.selection,
        // An answer stopped before its first word said nothing.
        conversation: context.conversation.filter((m) => m.rawText || m.authorType === 'human'),
        // Fewer messages than were asked for: the conversation from its first message.
        wholeConversation: context.conversation.length < CONVERSATION_WINDOW,
        maxMessages: CONVERSATION_WINDOW,
        research: withTools && Boolean(canResearch),
        researchByCommand: !withTools && Boolean(canResearch),
        calendar: withTools && channel === 'chat' && Boolean(calendar),
        dailyMessage: channel === 'chat' ? user.dailyMessage : null,
      });
    const prompt = (withTools: boolean) => build(withTools).messages;
    const first = build(!model.refuses('tools') && !model.refuses('autoToolChoice') && !model.refuses('streamedTools'));
    const messages = first.messages;
    // The window's start is the same with or without tools: kept for the next turns' prompts.
    if (first.windowMovedTo !== null) await deps.markWindowStart(user.id, first.windowMovedTo);

    const stop = new AbortController();
    const mine = { channel, replyTo, controller: stop, takenAt };
    const ours = writing.get(user.id) ?? new Set();
    writing.set(user.id, ours.add(mine));
    if (early.take(user.id, channel, replyTo, takenAt)) stop.abort();
    try {
      return await write(model, { user, channel, replyTo, memories, messages, prompt, tools, zone, stop });
    } finally {
      ours.delete(mine);
      if (!ours.size && writing.get(user.id) === ours) writing.delete(user.id);
    }
  }

  async function write(model: Llm, w: Writing): Promise<ReplyOutcome> {
    const { user, channel, replyTo, memories, stop } = w;
    const answer = createAnswerStream({ hub, say, userId: user.id, channel, replyTo });
    /** Stopped by the user, or cut short by a shutdown: what was written so far is kept. */
    const cutShort = async (): Promise<ReplyOutcome> => {
      await (stop.signal.reason === SHUTTING_DOWN ? answer.storeInterrupted() : answer.storeStopped());
      return { memories, onboardingDone: false };
    };
    let asked: string[];
    try {
      asked = await answerWithTools(model, answer, {
        messages: w.messages,
        withoutTools: () => w.prompt(false),
        tools: w.tools,
        signal: stop.signal,
        userId: user.id,
        readCalendar: readCalendar && ((call) => readCalendar(user.id, call, w.zone)),
      });
    } catch (err) {
      if (stop.signal.aborted) return cutShort();
      log.warn({ ...modelFailure(err), userId: user.id }, 'model request failed');
      log.debug({ err }, 'model request failed (details)');
      // A spent allowance says so, and when it renews; anything else that the assistant is unavailable.
      await answer.storeFailed(err instanceof UsageLimitError ? err.message : undefined);
      return { memories, onboardingDone: false, failed: true };
    }
    if (stop.signal.aborted) return cutShort();
    answer.flush();
    const done = channel === 'onboarding' && answer.text.includes(ONBOARDING_DONE);
    let final = answer.text.replaceAll(ONBOARDING_DONE, '').trim();
    // One research per answer: a model that calls the tool twice asked for one thing twice.
    const topic = asked[0];
    if (topic && research) {
      const started = await research.request(user.id, topic, { requestMessageId: replyTo });
      const note = 'refused' in started ? started.refused : researchStarted(started.research.query, started.ahead);
      final = [final, note].filter(Boolean).join('\n\n');
    }
    final ||= '…';
    await answer.store(final);
    return { memories, onboardingDone: done };
  }

  return {
    reply,
    /** Shutdown: answers still being written are cut short, and stored as far as they got with the interrupted note. */
    interruptAll() {
      for (const mine of writing.values()) for (const w of mine) w.controller.abort(SHUTTING_DOWN);
    },
  };
}

export type Replier = ReturnType<typeof createReplier>;

/** How long a Stop that found no answer waits for the one it was meant for to begin. */
const EARLY_STOP_MS = 30_000;

interface Stop {
  channel: Channel;
  replyTo?: number;
  /** When it was asked (preciseNow). */
  at: number;
}

/**
 * Whether `stop` is for the answer to `replyTo` asked for at `takenAt`: on its channel, named or
 * not, and asked after the answer was (strictly: preciseNow never gives one value twice in order).
 * So a stop replayed late (after a bus reconnect), or handled before the message was taken, spares
 * the later answers.
 */
const stops = (stop: Stop, answer: { channel: Channel; replyTo: number; takenAt: number }) =>
  stop.channel === answer.channel &&
  answer.takenAt < stop.at &&
  (stop.replyTo === undefined || stop.replyTo === answer.replyTo);

/**
 * Stops that came before their answer began (the message still being stored, or waiting behind the
 * user's earlier ones): the answer they name, or the first one asked for before them, takes one.
 */
function createEarlyStops() {
  const kept = new Map<number, Stop[]>();
  const fresh = (s: Stop) => Date.now() - s.at < EARLY_STOP_MS;
  return {
    keep(userId: number, stop: Stop) {
      // Stops nothing took, of users who sent nothing since, go now and then.
      if (kept.size > 1000) for (const [id, mine] of kept) if (!mine.some(fresh)) kept.delete(id);
      kept.set(userId, [...(kept.get(userId) ?? []).filter(fresh), stop]);
    },
    /** Whether a kept stop is for the answer to `replyTo` in `channel`, asked for at `takenAt`; it is used up. */
    take(userId: number, channel: Channel, replyTo: number, takenAt: number): boolean {
      const mine = kept.get(userId)?.filter(fresh);
      if (!mine) return false;
      const i = mine.findIndex((s) => stops(s, { channel, replyTo, takenAt }));
      if (i >= 0) mine.splice(i, 1);
      if (mine.length) kept.set(userId, mine);
      else kept.delete(userId);
      return i >= 0;
    },
  };
}
