// The chat_messages table. The message writes, a turn's reads, answering again, the sweep of pending
// answers and the history's pages are factories of their own (chat.*.repo.ts); this puts them together.
import type { Query } from '../../db/database.ts';
import { createChatAnswerAgainRepo } from './chat.answer-again.repo.ts';
import { createChatHistoryRepo } from './chat.history.repo.ts';
import { createChatPendingRepo } from './chat.pending.repo.ts';
import { createChatTurnsRepo } from './chat.turns.repo.ts';
import { createChatWritesRepo } from './chat.writes.repo.ts';

export type { Channel, ChatMessageRow, Stored } from './chat.writes.repo.ts';

export function createChatRepo(query: Query) {
  const writes = createChatWritesRepo(query);
  return {
    // create, byClientId, post.
    ...writes,
    // startTurn, turnContext.
    ...createChatTurnsRepo(query, writes.byClientId),
    // mayAnswerAgain, answerAgain.
    ...createChatAnswerAgainRepo(query),
    // keepPending, answerInterrupted.
    ...createChatPendingRepo(query),
    // page, pageJson.
    ...createChatHistoryRepo(query),
  };
}

export type ChatRepo = ReturnType<typeof createChatRepo>;
