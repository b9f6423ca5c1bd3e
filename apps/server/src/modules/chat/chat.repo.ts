import type { PrismaClient } from '../../generated/prisma/client.ts';

export type ChatMessageRow = Awaited<ReturnType<PrismaClient['chatMessage']['findUniqueOrThrow']>>;
export type Channel = 'chat' | 'onboarding';

export function createChatRepo(prisma: PrismaClient) {
  return {
    create: (data: {
      userId: number;
      channel: Channel;
      authorType: string;
      messageType: string;
      rawText: string;
      url?: string | null;
    }) => prisma.chatMessage.create({ data }),
    /** Up to `limit` messages before `before` (newest first), plus whether more exist. */
    async page(userId: number, channel: Channel, limit: number, before?: number) {
      const rows = await prisma.chatMessage.findMany({
        where: { userId, channel, ...(before ? { id: { lt: before } } : {}) },
        orderBy: { id: 'desc' },
        take: limit + 1,
      });
      return { rows: rows.slice(0, limit).reverse(), hasMore: rows.length > limit };
    },
    markOnboarded: (userId: number, at: Date) =>
      prisma.user.update({ where: { id: userId }, data: { onboardedAt: at } }),
  };
}

export type ChatRepo = ReturnType<typeof createChatRepo>;
