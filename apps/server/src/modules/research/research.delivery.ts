// What the chat sees of a research asked for there: its card in every tab as it changes, and the
// outcome posted once it ends.
import { researchCancelledText, type TResearchCard } from '@daybook/contracts';
import type { ChatPostsService } from '../chat/chat.posts.service.ts';
import { reportMessage, researchCard, researchPath } from './research.present.ts';
import type { ResearchRepo, ResearchRow } from './research.repo.ts';

export function createDelivery(deps: {
  repo: Pick<ResearchRepo, 'fail' | 'markPosted'>;
  /** Posts the outcome to the user's chat. */
  chat: Pick<ChatPostsService, 'post'>;
  /** Shows a card to every tab of its user. */
  card: (userId: number, card: TResearchCard) => void;
}) {
  const { repo } = deps;

  /** Every tab of the user shows the research's card as it now is (researches asked for in the chat). */
  const show = (row: ResearchRow) => {
    if (row.origin === 'chat') deps.card(row.userId, researchCard(row));
  };

  /** The outcome, in the chat: the report, or a note that links to the research's page. */
  async function deliver(row: ResearchRow) {
    if (row.origin !== 'chat') return;
    show(row);
    const note = (rawText: string) => ({
      authorType: 'system' as const,
      messageType: 'system_message',
      rawText,
      url: researchPath(row.id),
    });
    const message =
      row.status === 'done'
        ? {
            authorType: 'assistant' as const,
            messageType: 'research_report',
            rawText: JSON.stringify(reportMessage(row)),
          }
        : row.status === 'cancelled'
          ? note(researchCancelledText(row.query))
          : note(`I could not finish the research on "${row.query}". ${row.error ?? ''}`.trim());
    const posted = await deps.chat.post(row.userId, { key: `research:${row.id}`, ...message });
    if (posted) await repo.markPosted(row.id, posted.messageId);
  }

  /** Ends a research failed, and tells the chat; null when it had already ended. */
  async function fail(id: number, error: string) {
    const failed = await repo.fail(id, error);
    if (failed) await deliver(failed);
    return failed;
  }

  return { show, deliver, fail };
}

export type Delivery = ReturnType<typeof createDelivery>;
