// The export's paging with a fake repository: pages are read only as the reader asks for more, so a
// long history is never held whole, and the text joins into one valid document.
import { ZAccountExport } from '@daybook/contracts';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { SessionsService } from '../accounts/sessions.service.ts';
import type { UsersService } from '../accounts/users.service.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import type { RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { type AccountDataRepo, EXPORT_PAGE_SIZE } from './account-data.repo.ts';
import { createAccountDataService, exportFilename } from './account-data.service.ts';

const AT = new Date('2026-05-01T23:30:00Z');

function fakeRepo(chatCount: number, reads: string[]) {
  const user = {
    id: 7,
    email: 'maya@example.com',
    passwordHash: 'hash',
    isActive: true,
    isAdmin: false,
    isDailyMessagePaused: false,
    learnFromChats: true,
    onboardedAt: null,
    passwordChangedAt: AT,
    lastLoginAt: AT,
    timeZone: 'Asia/Tokyo',
    dailyMessageTime: '07:00',
    dailyMessageEmail: true,
    locationName: null,
    locationCountry: null,
    latitude: null,
    longitude: null,
    temperatureUnit: 'auto',
    createdAt: AT,
    emailAddresses: [{ id: 1, userId: 7, email: 'maya@example.com', verified: true, primary: true, createdAt: AT }],
  };
  const chat = Array.from({ length: chatCount }, (_, i) => ({
    id: i + 1,
    channel: 'chat',
    authorType: 'human',
    messageType: 'message',
    rawText: `m${i + 1}`,
    url: null,
    createdAt: AT,
    replyToId: null,
  }));
  const repo = {
    findUser: async () => user,
    memories: async () => [],
    chatMessages: async (_userId: number, after: number) => {
      reads.push(`chat>${after}`);
      return chat.filter((m) => m.id > after).slice(0, EXPORT_PAGE_SIZE);
    },
    dailyMessages: async () => [],
    researches: async () => [],
    calendarConnections: async () => [],
    modelUsage: async () => [],
  };
  return repo as unknown as AccountDataRepo;
}

function service(repo: AccountDataRepo) {
  return createAccountDataService({
    repo,
    calendar: {} as CalendarService,
    sessions: {} as SessionsService,
    users: {} as UsersService,
    limiter: { consume: async () => true } as unknown as RateLimiter,
    clock: { now: () => AT },
    log: pino({ level: 'silent' }),
  });
}

describe('the export stream', () => {
  it('reads the next page only when the reader wants more', async () => {
    const reads: string[] = [];
    const { chunks, filename } = await service(fakeRepo(EXPORT_PAGE_SIZE * 2 + 3, reads)).export(7);
    // Tokyo is already on May 2nd.
    expect(filename).toBe('daybook-export-2026-05-02.json');
    expect(reads).toEqual([]);
    const parts: string[] = [];
    for await (const chunk of chunks) {
      parts.push(chunk);
      // The head, the empty memories, and the first page of chat: the second page is not read yet.
      if (parts.length === 5) expect(reads).toEqual(['chat>0']);
    }
    expect(reads).toEqual(['chat>0', `chat>${EXPORT_PAGE_SIZE}`, `chat>${EXPORT_PAGE_SIZE * 2}`]);
    const doc = ZAccountExport.parse(JSON.parse(parts.join('')));
    expect(doc.chat_messages.map((m) => m.id)).toEqual(
      Array.from({ length: EXPORT_PAGE_SIZE * 2 + 3 }, (_, i) => i + 1),
    );
    expect(doc.exported_at).toBe(AT.toISOString());
  });

  it('is a valid document with empty tables too', async () => {
    const { chunks } = await service(fakeRepo(0, [])).export(7);
    let text = '';
    for await (const chunk of chunks) text += chunk;
    expect(ZAccountExport.parse(JSON.parse(text))).toMatchObject({ memories: [], chat_messages: [] });
  });

  it('fails the stream (no valid document) when a page cannot be read', async () => {
    const repo = fakeRepo(10, []);
    Object.assign(repo, {
      chatMessages: async () => {
        throw new Error('connection lost');
      },
    });
    const { chunks } = await service(repo).export(7);
    const read = async () => {
      for await (const _ of chunks);
    };
    await expect(read()).rejects.toThrow('connection lost');
  });
});

describe('exportFilename', () => {
  it("uses the user's date, or UTC's for no or an unknown zone", () => {
    expect(exportFilename(AT, 'America/New_York')).toBe('daybook-export-2026-05-01.json');
    expect(exportFilename(AT, null)).toBe('daybook-export-2026-05-01.json');
    expect(exportFilename(AT, 'Mars/Olympus')).toBe('daybook-export-2026-05-01.json');
  });
});
