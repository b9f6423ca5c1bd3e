// A written message reaches the user: posted to their chat once, then mailed once (with links to
// the chat, the message's page, the settings and a signed pause link).
import type { Clock } from '../../lib/clock.ts';
import type { Signer } from '../../lib/signing.ts';
import type { ChatPostsService } from '../chat/chat.posts.service.ts';
import type { Mailer } from '../mail/mail.service.ts';
import { renderDailyEmail } from './daily.email.ts';
import type { DailyRepo, DailyRow, DailyUser } from './daily.repo.ts';
import { dayWords } from './daily.template.ts';

export const PAUSE_PURPOSE = 'daily-pause';

export function createDailyDelivery(deps: {
  repo: DailyRepo;
  clock: Clock;
  /** Posts the message to the user's chat. */
  chat: Pick<ChatPostsService, 'post'>;
  /** The message reached the chat (once): tell the user's tabs it is ready. */
  delivered(userId: number): void;
  mailer: Mailer;
  signer: Signer;
  publicUrl: string;
}) {
  const { repo, clock } = deps;

  function links(row: DailyRow, userId: number) {
    const base = deps.publicUrl.replace(/\/$/, '');
    return {
      messageUrl: `${base}/resources/daily-message/${row.id}`,
      chatUrl: `${base}/chat?dmid=${row.id}`,
      pauseUrl: `${base}/daily-messages/pause/?token=${deps.signer.sign(PAUSE_PURPOSE, [userId])}`,
      settingsUrl: `${base}/profile`,
    };
  }

  async function email(row: DailyRow, user: DailyUser) {
    if (!row.messageText || row.emailedAt || !user.dailyMessageEmail || !user.verified || !user.isActive) return;
    if (!(await repo.claimEmail(row.id, clock.now()))) return;
    try {
      const rendered = await renderDailyEmail({
        markdown: row.messageText,
        deliveryDate: row.localDate,
        publicUrl: deps.publicUrl,
        ...links(row, user.id),
      });
      await deps.mailer.send({ template: 'daily_message', to: user.email, ...rendered });
    } catch (err) {
      await repo.releaseEmail(row.id);
      throw err;
    }
    // Outside the try: once SMTP has the mail, failing to record it must not free it for a retry to send again.
    await repo.emailed(row.id, clock.now());
  }

  /** Posts the written message `ready` to the chat (unless it is there) and mails it (unless it was). */
  async function deliver(ready: DailyRow, user: DailyUser): Promise<void> {
    if (ready.chatMessageId === null) {
      const posted = await deps.chat.post(ready.userId, {
        key: `daily:${ready.id}`,
        authorType: 'assistant',
        messageType: 'markdown',
        // The link first: a long message is collapsed in the chat, and this is its main action.
        rawText: `**[Your daily message for ${dayWords(ready.localDate)}](/resources/daily-message/${ready.id})**\n\n${ready.messageText}`,
        stampWithClock: true,
      });
      if (posted) await repo.delivered(ready.id, posted.messageId, clock.now());
      if (posted?.created) deps.delivered(ready.userId);
    }
    await email(ready, user);
  }

  return { deliver };
}

export type DailyDelivery = ReturnType<typeof createDailyDelivery>;
