// Chat's one way in for other modules (research, daily messages): a message posted under a key is
// stored and sent to the user's tabs once, however many retries or workers post it.
import type { TServerEvent } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../../tests/helpers/test-db.ts';
import { uniqueEmail } from '../../test/factories.ts';
import { createChatPostsService } from './chat.posts.service.ts';
import { createChatRepo } from './chat.repo.ts';

describe('posting to a chat from another module', () => {
  let t: TestDatabase;
  const sent: Array<{ userId: number; event: TServerEvent }> = [];
  const posts = () =>
    createChatPostsService({
      repo: createChatRepo(t.db.query),
      hub: { publish: (userId, _channel, event) => sent.push({ userId, event }) },
      clock: { now: () => new Date('2026-11-28T07:00:00Z') },
    });
  const newUser = async () => (await t.db.prisma.user.create({ data: { email: uniqueEmail('posts') } })).id;
  const stored = (userId: number) => t.db.prisma.chatMessage.findMany({ where: { userId } });

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('stores the message in the chat and sends it to the user once', async () => {
    const userId = await newUser();
    const post = {
      key: `research:${userId}`,
      authorType: 'assistant',
      messageType: 'markdown',
      rawText: 'Hello',
    } as const;
    const first = await posts().post(userId, post);
    expect(first).toEqual({ messageId: expect.any(Number), created: true });
    const again = await posts().post(userId, { ...post, rawText: 'Hello again' });
    expect(again).toEqual({ messageId: first?.messageId, created: false });

    const rows = await stored(userId);
    expect(rows.map((r) => [r.authorType, r.messageType, r.rawText, r.channel])).toEqual([
      ['assistant', 'markdown', 'Hello', 'chat'],
    ]);
    const events = sent.filter((s) => s.userId === userId).map((s) => s.event);
    expect(events).toEqual([
      expect.objectContaining({ author_type: 'assistant', raw_text: 'Hello', message_id: first?.messageId }),
    ]);
  });

  it('parallel posts of one key (two workers delivering one research) store and send one message', async () => {
    const userId = await newUser();
    const service = posts();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        service.post(userId, {
          key: `daily:${userId}`,
          authorType: 'system',
          messageType: 'system_message',
          rawText: `try ${i}`,
        }),
      ),
    );
    expect(results.filter((r) => r?.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r?.messageId)).size).toBe(1);
    expect(await stored(userId)).toHaveLength(1);
    expect(sent.filter((s) => s.userId === userId)).toHaveLength(1);
  });

  it('dates a message by the service clock when asked, and keeps its link', async () => {
    const userId = await newUser();
    await posts().post(userId, {
      key: `daily:dated:${userId}`,
      authorType: 'system',
      messageType: 'system_message',
      rawText: 'Cancelled',
      url: '/resources/research/1',
      stampWithClock: true,
    });
    const [row] = await stored(userId);
    expect(row?.createdAt.toISOString()).toBe('2026-11-28T07:00:00.000Z');
    expect(row?.url).toBe('/resources/research/1');
    expect(sent.find((s) => s.userId === userId)?.event).toMatchObject({ url: '/resources/research/1' });
  });

  it('posts nothing for a user who is gone, and says so', async () => {
    const userId = await newUser();
    await t.db.prisma.user.delete({ where: { id: userId } });
    const result = await posts().post(userId, {
      key: `research:gone:${userId}`,
      authorType: 'assistant',
      messageType: 'markdown',
      rawText: 'Too late',
    });
    expect(result).toBeNull();
    expect(sent.some((s) => s.userId === userId)).toBe(false);
  });
});
