// A conversation turn: validate and store the human message, echo it to every tab, stream the
// assistant's reply, and learn from the message on the side without delaying the reply. Each user
// gets one answer at a time: further messages are stored, echoed and answered in order.
//
// The parts: per-user queues (chat.lanes.ts), a message's way from its arrival to its answer
// (chat.turns.ts) and what that answer needs (chat.context.ts), Regenerate and Retry
// (chat.answer-again.ts), the reply (chat.reply.ts) over tool rounds (chat.tool-loop.ts, chat.tools.ts)
// streamed and stored (chat.stream.ts), learning (chat.learning.ts), the onboarding's start and end
// (chat.onboarding.ts), and what the chat says (chat.messages.ts). This file reads a client's frames,
// ties the parts together and drains them at shutdown.

import { CHAT_TEXT_MAX, CHAT_TOO_LONG, type TResearchCard, type TServerEvent, ZClientEvent } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { createInFlight } from '../../lib/in-flight.ts';
import { withoutNul } from '../../lib/text.ts';
import type { UsersService } from '../accounts/users.service.ts';
import type { LearningService } from '../assistant/learning.service.ts';
import type { MemoriesService } from '../memories/memories.service.ts';
import type { Metrics } from '../metrics/index.ts';
import type { Llm } from '../model/model.types.ts';
import { createAnswerAgain } from './chat.answer-again.ts';
import { createTurnContexts } from './chat.context.ts';
import type { ChatHub, ChatUser } from './chat.hub.ts';
import { createLanes } from './chat.lanes.ts';
import { createChatLearning } from './chat.learning.ts';
import { createSay, INTERRUPTED, presentMessage, refuse } from './chat.messages.ts';
import { createChatOnboarding } from './chat.onboarding.ts';
import { createReplier } from './chat.reply.ts';
import type { Channel, ChatRepo } from './chat.repo.ts';
import type { CalendarPort, ResearchPort } from './chat.tools.ts';
import { createTurns } from './chat.turns.ts';

export { ANSWERED_SINCE } from './chat.answer-again.ts';
export { MAX_WAITING } from './chat.lanes.ts';
export { LEARNING_DONE } from './chat.learning.ts';
export {
  INTERRUPTED,
  NOT_CONFIGURED,
  presentMessage,
  QUEUED,
  shownSoFar,
  TOO_MANY_WAITING,
  UNAVAILABLE,
} from './chat.messages.ts';
export {
  CALENDAR_EVENTS_TOOL,
  type CalendarPort,
  type ResearchPort,
  researchStarted,
  WEB_RESEARCH_TOOL,
} from './chat.tools.ts';

/** How often an instance marks the answers it still owes as alive (see answer_pending_at). */
export const PENDING_HEARTBEAT_MS = 30_000;
/**
 * Unmarked this long, an answer was interrupted. Four missed heartbeats: an instance that is alive
 * but slow is never mistaken for a dead one, so several instances can sweep at any time.
 */
export const PENDING_STALE_SEC = 120;
/** At shutdown, once the drain's wait is over: how long answers cut short get to store what they had. */
export const INTERRUPT_MS = 1_000;

export function createChatService(deps: {
  repo: ChatRepo;
  hub: ChatHub;
  llm: Llm | null;
  learning: LearningService;
  memories: Pick<MemoriesService, 'listActive' | 'select' | 'selectionQuery' | 'selectionFromJson'>;
  /** Where the onboarding's end is recorded (accounts owns the user's row). */
  users: Pick<UsersService, 'markOnboarded'>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Web research, when this Daybook has it. */
  research?: ResearchPort;
  /** The user's calendars, read by the calendar_events tool. */
  calendar?: CalendarPort;
  /** Called once the onboarding's answers have been learned from (the daily message settings take them). */
  onOnboarded?: (userId: number) => Promise<void>;
  /** Counts turns and their time for /metrics, when metrics are on. */
  metrics?: Pick<Metrics, 'chatTurn'>;
  /** Drops this process's cached copies of the user's sessions (see session-cache.ts) after a change to the user. */
  forgetCachedUser?: (userId: number) => void;
}) {
  const { repo, hub, llm, memories, clock, log, research, calendar, metrics } = deps;
  // Turns and learning still running, so a shutdown can let them finish before the database closes.
  const inFlight = createInFlight();
  const track = inFlight.track;
  // Shutdown (drain): from its start no new message is taken; once its wait is over, answers are cut
  // short and stored as far as they got, and those whose turn comes get the interrupted note.
  let stopping = false;
  let interrupting = false;
  const isInterrupting = () => interrupting;

  const lanes = createLanes();
  /** Human messages this instance still has to answer; kept marked alive in the database. */
  const owed = new Set<number>();
  const say = createSay({ repo, hub });
  const replier = createReplier({
    llm,
    markWindowStart: repo.markWindowStart,
    hub,
    say,
    clock,
    log,
    research,
    calendar,
  });
  const learning = createChatLearning({ learning: deps.learning, hub, clock, log, lanes, track });
  const onboarding = createChatOnboarding({
    repo,
    users: deps.users,
    hub,
    say,
    memories,
    clock,
    log,
    track,
    onOnboarded: deps.onOnboarded,
    forgetCachedUser: deps.forgetCachedUser,
  });
  const contexts = createTurnContexts({ repo, hub, llm, memories });
  const parts = { hub, say, llm, lanes, owed, contexts, replier, onboarding, metrics, track, isInterrupting };
  const turns = createTurns({ ...parts, learning, research, isStopping: () => stopping });
  const answerAgain = createAnswerAgain({ ...parts, repo });

  return {
    /** "Skip for now": ends the onboarding as a stop word does. False when it had ended already (nothing happens). */
    skipOnboarding: onboarding.skip,
    async history(userId: number, channel: Channel, limit: number, before?: number) {
      const { rows, hasMore } = await repo.page(userId, channel, limit, before);
      return { results: rows.map((r) => presentMessage(r)), has_more: hasMore };
    },
    /** The cards of the user's researches that have not ended (the chat's history carries them). */
    activeResearches: (userId: number): Promise<TResearchCard[]> =>
      research ? research.activeCards(userId) : Promise.resolve([]),
    /** The history endpoint's page, as JSON text (see ChatRepo.pageJson). */
    async historyJson(userId: number, channel: Channel, limit: number, before?: number) {
      const { results, hasMore } = await repo.pageJson(userId, channel, limit, before);
      return `{"results":${results},"has_more":${hasMore}}`;
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
      const parsed = ZClientEvent.safeParse(body);
      if (!parsed.success) return refuse('invalid_message', 'That message could not be read (unknown message type).');
      if (parsed.data.message_type === 'stop') {
        hub.stop(user.id, channel, parsed.data.reply_to);
        return null;
      }
      if (parsed.data.message_type === 'regenerate') return answerAgain(user, channel, parsed.data.reply_to);
      if (parsed.data.message_type === 'ping') return { message_type: 'pong' };
      if (parsed.data.message_type === 'cancel_research') {
        if (channel === 'chat') await research?.cancel(user.id, parsed.data.id);
        return null;
      }
      // PostgreSQL text cannot hold NUL characters (see plugins/input.ts).
      const text = withoutNul(parsed.data.raw_text).trim();
      if (!text) return refuse('empty_message', 'Type a message before sending.');
      if (text.length > CHAT_TEXT_MAX) return refuse('message_too_long', CHAT_TOO_LONG);
      return turns.take(user, channel, text, parsed.data.client_id);
    },

    /** Marks the answers this instance still owes as alive, so no other instance takes them for interrupted. */
    keepPending: () => repo.keepPending([...owed]),

    /**
     * Answers that a crash or restart interrupted (no mark for PENDING_STALE_SEC) get a note in their
     * place that offers to ask again, and the question is learned from as it would have been.
     */
    async answerInterrupted() {
      const notes = await repo.answerInterrupted(PENDING_STALE_SEC, INTERRUPTED);
      for (const note of notes) {
        const channel = note.channel as Channel;
        const { question, learnFromChats, ...row } = note;
        hub.publish(note.userId, channel, presentMessage(row));
        if (note.replyToId)
          void learning.learnInTurn({ id: note.userId, learnFromChats }, channel, note.replyToId, question);
      }
      if (notes.length) log.info({ count: notes.length }, 'interrupted answers noted');
      return notes.length;
    },

    /**
     * Shutdown: takes no new message and waits (at most `timeoutMs`) for the replies and learning under
     * way (learning starts when a reply ends: that too). Replies still being written are then cut short
     * and stored as far as they got, with the interrupted note, and waiting ones get the note (at most
     * INTERRUPT_MS more): none waits PENDING_STALE_SEC for another instance to notice. Returns how many
     * tasks were still running.
     */
    async drain(timeoutMs: number): Promise<number> {
      stopping = true;
      if (!(await inFlight.drain(timeoutMs))) return 0;
      interrupting = true;
      replier.interruptAll();
      return inFlight.drain(INTERRUPT_MS);
    },

    /** The first message of an onboarding conversation that has none yet. */
    greetOnboarding: onboarding.greet,
  };
}

export type ChatService = ReturnType<typeof createChatService>;
