// A user's own rows, read in pages for the export, and deleted all at once with the account.

import type { Tx } from '../../db/database.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';

/** Rows per read: a page of the largest table is a few megabytes at most. */
export const EXPORT_PAGE_SIZE = 500;

/** Pages in id order: the cursor is the last id read, so a page costs the same at any depth. */
const page = { orderBy: { id: 'asc' as const }, take: EXPORT_PAGE_SIZE };

export function createAccountDataRepo(prisma: PrismaClient) {
  return {
    findUser: (userId: number) =>
      prisma.user.findUnique({
        where: { id: userId },
        include: { emailAddresses: { orderBy: [{ primary: 'desc' }, { id: 'asc' }] } },
      }),

    memories: (userId: number, after: number) =>
      prisma.memory.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          key: true,
          data: true,
          memoryType: true,
          url: true,
          frequencyDescription: true,
          source: true,
          createdAt: true,
          updatedAt: true,
          deletedAt: true,
          deletedReason: true,
        },
      }),

    chatMessages: (userId: number, after: number) =>
      prisma.chatMessage.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          channel: true,
          authorType: true,
          messageType: true,
          rawText: true,
          url: true,
          createdAt: true,
          replyToId: true,
        },
      }),

    dailyMessages: (userId: number, after: number) =>
      prisma.dailyMessage.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          localDate: true,
          status: true,
          trigger: true,
          messageText: true,
          createdAt: true,
          deliveredAt: true,
          emailedAt: true,
          researches: { select: { id: true }, orderBy: { id: 'asc' } },
        },
      }),

    researches: (userId: number, after: number) =>
      prisma.research.findMany({
        ...page,
        where: { userId, id: { gt: after } },
        select: {
          id: true,
          query: true,
          status: true,
          origin: true,
          introduction: true,
          body: true,
          conclusion: true,
          sources: true,
          error: true,
          createdAt: true,
          finishedAt: true,
          dailyMessageId: true,
          requestMessageId: true,
        },
      }),

    /** Only what the user sees of a connection: never `secret` (tokens, ICS address) or `uid`. */
    calendarConnections: (userId: number) =>
      prisma.calendarConnection.findMany({
        where: { userId },
        orderBy: { id: 'asc' },
        select: { provider: true, display: true, status: true, createdAt: true, lastSyncedAt: true },
      }),

    /** A few rows a day at most (one per purpose): read at once. */
    modelUsage: (userId: number) =>
      prisma.modelUsage.findMany({
        where: { userId },
        orderBy: [{ day: 'asc' }, { purpose: 'asc' }],
        select: {
          day: true,
          purpose: true,
          calls: true,
          promptTokens: true,
          cachedTokens: true,
          completionTokens: true,
        },
      }),

    /** One transaction for the deletion, whose parts belong to accounts, rate limits and the realtime bus. */
    transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      return prisma.$transaction(fn);
    },
  };
}

export type AccountDataRepo = ReturnType<typeof createAccountDataRepo>;
