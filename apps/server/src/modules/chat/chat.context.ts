// A human message stored and echoed to every tab, and what its answer needs: the conversation before
// it and the memories its text brings up, read in the same round trip when it is answered at once.
import { MEMORY_SELECTION } from '../assistant/index.ts';
import type { MemorySelection } from '../memories/index.ts';
import type { MemoriesService } from '../memories/memories.service.ts';
import type { Llm } from '../model/model.types.ts';
import type { ChatHub, ChatUser } from './chat.hub.ts';
import { presentMessage } from './chat.messages.ts';
import type { Channel, ChatMessageRow, ChatRepo } from './chat.repo.ts';

/** Messages of the conversation the prompt builder gets to choose from (it keeps what fits its budget). */
export const CONVERSATION_WINDOW = 40;
/** The onboarding's words for "no more questions": they end the interview. */
export const STOP_WORDS = /^\s*(stop|skip|later|done|that'?s all|enough|finish)\b/i;

export interface TurnContext {
  /** Oldest first, ending with the message being answered. */
  conversation: ChatMessageRow[];
  /** At most 8 + 12 + 6 memories however many the user has: the prompt stays bounded. */
  selection: MemorySelection;
}

const emptySelection = (): MemorySelection => ({ core: [], relevant: [], recent: [] });

/** A resent human message (its client id is stored already): nothing more to do than echo it. */
export class AlreadyStored extends Error {
  constructor(readonly stored: ChatMessageRow) {
    super('message already stored');
  }
}

export function createTurnContexts(deps: {
  repo: ChatRepo;
  hub: ChatHub;
  llm: Llm | null;
  memories: Pick<MemoriesService, 'select' | 'selectionQuery' | 'selectionFromJson'>;
}) {
  const { repo, hub, llm, memories } = deps;

  /** Stores a message that waits for earlier answers; what its answer needs is read when its turn comes. */
  async function storeWaiting(
    user: ChatUser,
    channel: Channel,
    text: string,
    clientId?: string,
  ): Promise<{ human: ChatMessageRow; context: TurnContext | null }> {
    const human = await repo.create({
      userId: user.id,
      channel,
      authorType: 'human',
      messageType: 'message',
      rawText: text,
      clientId,
    });
    if (human.duplicate) throw new AlreadyStored(human);
    hub.publish(user.id, channel, presentMessage(human));
    return { human, context: null };
  }

  return {
    storeWaiting,

    /**
     * Stores the human message and echoes it to every tab; with a model, the same round trip reads
     * what the reply needs (the conversation before it and the relevant memories).
     */
    async startTurn(
      user: ChatUser,
      channel: Channel,
      text: string,
      clientId?: string,
    ): Promise<{ human: ChatMessageRow; context: TurnContext }> {
      if (!llm || (channel === 'onboarding' && STOP_WORDS.test(text))) {
        const { human } = await storeWaiting(user, channel, text, clientId);
        return { human, context: { conversation: [human], selection: emptySelection() } };
      }
      const turn = await repo.startTurn(
        { userId: user.id, channel, rawText: text, clientId },
        CONVERSATION_WINDOW - 1,
        (first) => memories.selectionQuery(user.id, text, MEMORY_SELECTION, first),
      );
      if (turn.human.duplicate) throw new AlreadyStored(turn.human);
      hub.publish(user.id, channel, presentMessage(turn.human));
      return {
        human: turn.human,
        context: { conversation: [...turn.before, turn.human], selection: memories.selectionFromJson(turn.extra) },
      };
    },

    /** The context of a message that waited: the conversation as it is now, answers given meanwhile included. */
    async contextNow(user: ChatUser, human: ChatMessageRow): Promise<TurnContext> {
      if (!llm) return { conversation: [human], selection: emptySelection() };
      const { before, extra } = await repo.turnContext(human, CONVERSATION_WINDOW - 1, (first) =>
        memories.selectionQuery(user.id, human.rawText, MEMORY_SELECTION, first),
      );
      return { conversation: [...before, human], selection: memories.selectionFromJson(extra) };
    },

    /** What answering a message again needs: the conversation before it, and the memories its text brings up. */
    async contextAgain(
      user: ChatUser,
      { human, before }: { human: ChatMessageRow; before: ChatMessageRow[] },
    ): Promise<TurnContext> {
      if (!llm) return { conversation: [human], selection: emptySelection() };
      const selection = await memories.select(user.id, human.rawText, MEMORY_SELECTION);
      return { conversation: [...before, human], selection };
    },
  };
}

export type TurnContexts = ReturnType<typeof createTurnContexts>;
