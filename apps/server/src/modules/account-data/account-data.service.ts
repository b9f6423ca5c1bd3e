// A user's own data: the export (one JSON document, written page by page so a long history never
// sits in memory at once) and deleting the account with everything in it.
import {
  ACCOUNT_DATA_MESSAGES,
  ACCOUNT_EXPORT_FORMAT,
  ACCOUNT_EXPORT_VERSION,
  type TCalendarProviderId,
  type TExportAccount,
  type TExportCalendarConnection,
  type TExportChatMessage,
  type TExportDailyMessage,
  type TExportMemory,
  type TExportModelUsage,
  type TExportResearch,
  type TTemperatureUnit,
} from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Tx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { localDate } from '../../lib/day.ts';
import { AppError } from '../../lib/errors.ts';
import { presentLocation } from '../accounts/accounts.service.ts';
import type { UserRow } from '../accounts/index.ts';
import { verifyPassword } from '../accounts/index.ts';
import type { SessionsService } from '../accounts/sessions.service.ts';
import type { UsersService } from '../accounts/users.service.ts';
import { PROVIDER_NAMES } from '../calendar/calendar.service.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import { LIMITS, type RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { forgetUserEvents } from '../realtime/index.ts';
import { type AccountDataRepo, EXPORT_PAGE_SIZE } from './account-data.repo.ts';

type Row<K extends keyof AccountDataRepo> =
  Awaited<ReturnType<AccountDataRepo[K]>> extends Array<infer R>
    ? R
    : NonNullable<Awaited<ReturnType<AccountDataRepo[K]>>>;

const iso = (date: Date | null) => date?.toISOString() ?? null;

// ---- presenters (pure: the document's shape lives here and in the contract) ----

export function presentAccount(user: Row<'findUser'>): TExportAccount {
  return {
    id: user.id,
    email: user.email,
    email_addresses: user.emailAddresses.map((e) => ({
      email: e.email,
      primary: e.primary,
      verified: e.verified,
      created: e.createdAt.toISOString(),
    })),
    is_admin: user.isAdmin,
    has_usable_password: user.passwordHash !== null,
    created: user.createdAt.toISOString(),
    last_sign_in: iso(user.lastLoginAt),
    onboarded: iso(user.onboardedAt),
    settings: {
      learn_from_chats: user.learnFromChats,
      time_zone: user.timeZone,
      location: presentLocation(user),
      temperature_unit: user.temperatureUnit as TTemperatureUnit,
      daily_message: {
        paused: user.isDailyMessagePaused,
        time: user.dailyMessageTime,
        email: user.dailyMessageEmail,
      },
    },
  };
}

export const presentMemory = (m: Row<'memories'>): TExportMemory => ({
  id: m.id,
  key: m.key,
  data: m.data,
  memory_type: m.memoryType,
  url: m.url,
  frequency_description: m.frequencyDescription,
  source: m.source,
  created: m.createdAt.toISOString(),
  updated: m.updatedAt.toISOString(),
  deleted_at: iso(m.deletedAt),
  deleted_reason: m.deletedReason,
});

export const presentChatMessage = (m: Row<'chatMessages'>): TExportChatMessage => ({
  id: m.id,
  channel: m.channel,
  author_type: m.authorType,
  message_type: m.messageType,
  raw_text: m.rawText,
  url: m.url,
  created: m.createdAt.toISOString(),
  reply_to_id: m.replyToId,
});

export const presentDailyMessage = (d: Row<'dailyMessages'>): TExportDailyMessage => ({
  id: d.id,
  delivery_date: d.localDate.toISOString().slice(0, 10),
  status: d.status,
  trigger: d.trigger,
  message_text: d.messageText,
  created: d.createdAt.toISOString(),
  delivered: iso(d.deliveredAt),
  emailed: iso(d.emailedAt),
  research_ids: d.researches.map((r) => r.id),
});

/** The stored sources as the report cites them; anything malformed is left out rather than guessed. */
function sourcesOf(value: unknown): TExportResearch['sources'] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((s) =>
    s && typeof s === 'object' && typeof s.url === 'string'
      ? [{ url: s.url as string, title: typeof s.title === 'string' ? s.title : s.url }]
      : [],
  );
}

export const presentResearch = (r: Row<'researches'>): TExportResearch => ({
  id: r.id,
  query: r.query,
  status: r.status,
  origin: r.origin,
  introduction: r.introduction,
  body: r.body,
  conclusion: r.conclusion,
  sources: sourcesOf(r.sources),
  error: r.error,
  created: r.createdAt.toISOString(),
  finished: iso(r.finishedAt),
  daily_message_id: r.dailyMessageId,
  request_message_id: r.requestMessageId,
});

export const presentCalendarConnection = (c: Row<'calendarConnections'>): TExportCalendarConnection => ({
  provider: c.provider,
  provider_name: PROVIDER_NAMES[c.provider as TCalendarProviderId] ?? c.provider,
  name: c.display,
  status: c.status,
  created: c.createdAt.toISOString(),
  last_synced: iso(c.lastSyncedAt),
});

export const presentModelUsage = (u: Row<'modelUsage'>): TExportModelUsage => ({
  day: u.day.toISOString().slice(0, 10),
  purpose: u.purpose,
  calls: u.calls,
  prompt_tokens: u.promptTokens,
  cached_tokens: u.cachedTokens,
  completion_tokens: u.completionTokens,
});

/** The file's name: the date the user sees on their calendar (their time zone, else UTC). */
export function exportFilename(at: Date, timeZone: string | null): string {
  let date = at.toISOString().slice(0, 10);
  if (timeZone) {
    try {
      date = localDate(at, timeZone);
    } catch {
      // An unknown zone keeps UTC's date.
    }
  }
  return `daybook-export-${date}.json`;
}

export interface AccountDataDeps {
  repo: AccountDataRepo;
  calendar: CalendarService;
  sessions: SessionsService;
  /** The user's row and the administrators' lock belong to accounts. */
  users: Pick<UsersService, 'lockAdmins' | 'isLastActiveAdmin' | 'othersExist' | 'delete'>;
  limiter: RateLimiter;
  clock: Clock;
  log: FastifyBaseLogger;
}

export function createAccountDataService({ repo, calendar, sessions, users, limiter, clock, log }: AccountDataDeps) {
  /** Whether deleting `userId` would leave other accounts without an active administrator. */
  const isLastAdmin = async (userId: number, tx?: Tx) =>
    (await users.isLastActiveAdmin(userId, tx)) && (await users.othersExist(userId, tx));

  /**
   * Deletes the user; every table that names them cascades (addresses, sessions, memories, chat,
   * researches, daily messages, calendar connections and OAuth states, invite uses), and invites
   * they created stay for the other administrators (created_by becomes null). What no foreign key
   * reaches goes in the same transaction: their rate-limit rows (keyed by id or address), the
   * realtime bus's recent events about them, and signed-out sessions that remember them in a
   * pending verification step. 'last_admin' (nothing deleted) when the user is, by now, the last
   * active administrator: the check takes the admin area's lock, so two administrators leaving at
   * once (or one leaving while demoting the other) cannot both go.
   */
  const deleteUser = (userId: number, emails: string[]): Promise<boolean | 'last_admin'> =>
    repo.transaction(async (tx) => {
      await users.lockAdmins(tx);
      if (await isLastAdmin(userId, tx)) return 'last_admin';
      await limiter.forgetUser(userId, emails, tx);
      await forgetUserEvents(userId, tx);
      return users.delete(userId, tx);
    });

  /** `"name":[` rows `]`, one page of rows per chunk, ids ascending. */
  async function* array<R extends { id: number }>(
    name: string,
    read: (after: number) => Promise<R[]>,
    present: (row: R) => unknown,
  ): AsyncGenerator<string> {
    yield `,${JSON.stringify(name)}:[`;
    let after = 0;
    let first = true;
    for (;;) {
      const rows = await read(after);
      if (rows.length) {
        yield (first ? '' : ',') + rows.map((row) => JSON.stringify(present(row))).join(',');
        first = false;
        after = (rows.at(-1) as R).id;
      }
      if (rows.length < EXPORT_PAGE_SIZE) break;
    }
    yield ']';
  }

  return {
    /**
     * The export as a stream of JSON text (null when the user is gone). Counted against the hourly
     * limit before anything is read. Rows written while it runs may or may not be in it.
     */
    async export(userId: number): Promise<{ filename: string; chunks: AsyncIterable<string> }> {
      if (!(await limiter.consume(LIMITS.accountExport(userId))))
        throw new AppError('rate_limited', ACCOUNT_DATA_MESSAGES.exportLimit);
      const user = await repo.findUser(userId);
      if (!user) throw new AppError('not_found', 'Not found');
      const now = clock.now();
      async function* chunks(): AsyncGenerator<string> {
        const head = {
          format: ACCOUNT_EXPORT_FORMAT,
          version: ACCOUNT_EXPORT_VERSION,
          exported_at: now.toISOString(),
          account: presentAccount(user as Row<'findUser'>),
        };
        yield JSON.stringify(head).slice(0, -1);
        yield* array('memories', (after) => repo.memories(userId, after), presentMemory);
        yield* array('chat_messages', (after) => repo.chatMessages(userId, after), presentChatMessage);
        yield* array('daily_messages', (after) => repo.dailyMessages(userId, after), presentDailyMessage);
        yield* array('researches', (after) => repo.researches(userId, after), presentResearch);
        const connections = (await repo.calendarConnections(userId)).map(presentCalendarConnection);
        yield `,"calendar_connections":${JSON.stringify(connections)}`;
        const usage = (await repo.modelUsage(userId)).map(presentModelUsage);
        yield `,"model_usage":${JSON.stringify(usage)}}`;
      }
      return { filename: exportFilename(now, user.timeZone), chunks: chunks() };
    },

    /**
     * Deletes the account after its password: calendar grants are revoked at the providers, every
     * row goes, and every session ends (which closes the user's chat sockets). Throws AppErrors.
     */
    async deleteAccount(user: UserRow, password: string): Promise<void> {
      if (!user.passwordHash) throw new AppError('forbidden', ACCOUNT_DATA_MESSAGES.noPassword);
      if (user.isAdmin && (await isLastAdmin(user.id))) throw new AppError('conflict', ACCOUNT_DATA_MESSAGES.lastAdmin);
      // Counted before the password is checked, as logins are: parallel guesses get no more tries.
      const attempt = await limiter.attempt(LIMITS.accountDeleteFailed(user.id));
      if (!attempt.allowed)
        throw new AppError('rate_limited', ACCOUNT_DATA_MESSAGES.tooManyAttempts, {
          password: [ACCOUNT_DATA_MESSAGES.tooManyAttempts],
        });
      if (!(await verifyPassword(user.passwordHash, password)))
        throw new AppError('validation_error', ACCOUNT_DATA_MESSAGES.wrongPassword, {
          password: [ACCOUNT_DATA_MESSAGES.wrongPassword],
        });

      // Through the calendar service, which revokes Google grants (a failed revocation is logged there
      // and does not stop the deletion: the tokens are deleted with the row either way).
      for (const connection of await calendar.list(user.id)) await calendar.disconnect(user.id, connection.id);
      const emails = (await repo.findUser(user.id))?.emailAddresses.map((e) => e.email) ?? [user.email];
      // Checked again under the admin area's lock: another administrator may have left meanwhile.
      if ((await deleteUser(user.id, emails)) === 'last_admin')
        throw new AppError('conflict', ACCOUNT_DATA_MESSAGES.lastAdmin);
      // The rows are gone with the user; this tells whatever holds a session open (chat sockets, on
      // every instance) that they ended.
      await sessions.destroyAllFor(user.id);
      log.info({ userId: user.id }, 'account deleted');
    },
  };
}

export type AccountDataService = ReturnType<typeof createAccountDataService>;
