// Asking for a research: refused when research cannot run or the user reached the daily limit,
// else stored queued and started when it is the user's turn.
import { RESEARCH_QUERY_MAX } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Llm } from '../model/model.types.ts';
import type { ResearchOrigin, ResearchRepo, ResearchRow } from './research.repo.ts';
import type { SearchLike } from './research.search.ts';

export const RESEARCH_TURNED_OFF = 'Web research is turned off on this Daybook.';
export const EMPTY_QUERY = 'Tell me what to research, for example: /research the best e-bikes for commuting';
export const researchLimitReached = (limit: number) =>
  `You have asked for ${limit} researches in the last 24 hours, the most this Daybook allows. Try again later.`;

export function createRequests(deps: {
  repo: Pick<ResearchRepo, 'createWithinLimit' | 'create' | 'ahead'>;
  llm: Llm | null;
  search: SearchLike | null;
  /** What users read when no search provider is configured (whom to ask, not what to set). */
  searchNotConfigured: string;
  dailyLimit: number;
  /** Starts the job that runs research `id`. */
  enqueue: (id: number) => Promise<void>;
  show: (row: ResearchRow) => void;
  clock: Clock;
  log: FastifyBaseLogger;
}) {
  const { repo, clock, log, show } = deps;

  /** Null when research can run; otherwise why not, for the user. */
  function unavailable(): string | null {
    if (deps.dailyLimit === 0) return RESEARCH_TURNED_OFF;
    if (!deps.search) return deps.searchNotConfigured;
    if (!deps.llm) return 'No assistant model is configured, and research needs one to plan and write its report.';
    return null;
  }

  return {
    unavailable,

    /**
     * Asks for a research. Returns it with how many of the user's researches come first, or why it
     * cannot run (no provider, no model, over the daily limit).
     */
    async request(
      userId: number,
      query: string,
      options: { origin?: ResearchOrigin; requestMessageId?: number | null; dailyMessageId?: number | null } = {},
    ): Promise<{ research: ResearchRow; ahead: number } | { refused: string }> {
      const problem = unavailable();
      if (problem) return { refused: problem };
      const text = query.replace(/\s+/g, ' ').trim().slice(0, RESEARCH_QUERY_MAX);
      if (!text) return { refused: EMPTY_QUERY };
      const origin = options.origin ?? 'chat';
      let research: ResearchRow;
      if (origin === 'chat') {
        const since = new Date(clock.now().getTime() - 24 * 3600_000);
        const created = await repo.createWithinLimit(
          { userId, query: text, requestMessageId: options.requestMessageId },
          deps.dailyLimit,
          since,
        );
        if (!created) return { refused: researchLimitReached(deps.dailyLimit) };
        research = created;
      } else {
        research = await repo.create({
          userId,
          query: text,
          origin,
          requestMessageId: options.requestMessageId,
          dailyMessageId: options.dailyMessageId,
        });
      }
      show(research);
      const ahead = await repo.ahead(userId, research.id);
      if (!ahead) {
        // Not started now (the queue is down): the sweeper starts it within a minute.
        await deps.enqueue(research.id).catch((err) => log.warn({ err }, 'could not queue a research'));
      }
      return { research, ahead };
    },
  };
}
