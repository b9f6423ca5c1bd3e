// A written message as the API gives it: its text and the reports of its researches.
import type { TDailyMessage, TResearch } from '@daybook/contracts';
import type { DailyResearchPort } from './daily.context.ts';
import type { DailyRepo } from './daily.repo.ts';

export function createDailyPresenter(deps: { repo: DailyRepo; research: Pick<DailyResearchPort, 'get'> }) {
  const { repo } = deps;

  return {
    async get(userId: number, id: number): Promise<TDailyMessage | null> {
      const row = await repo.getOwned(userId, id);
      if (!row?.messageText) return null;
      const ids = await repo.researchIds(row.id);
      const reports = (await Promise.all(ids.map((r) => deps.research.get(userId, r)))).filter(
        (r): r is TResearch => r !== null,
      );
      return {
        id: row.id,
        delivery_date: row.localDate,
        message_text: row.messageText,
        research_reports: reports,
        delivered: row.deliveredAt?.toISOString() ?? null,
        chat_message_id: row.chatMessageId,
      };
    },
  };
}
