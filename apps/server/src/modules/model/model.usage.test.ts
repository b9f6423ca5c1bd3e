// Tokens accounted through the real app: a chat turn over a WebSocket against the fake model (which
// reports usage, cached tokens included), kept per user, purpose and day, shown to administrators
// (GET /api/admin/usage/), totalled by purpose in /metrics; and a user's daily allowance.
import { ZModelUsage } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { signedInUser } from '../../test/factories.ts';
import { type Browser, type TestApp, waitFor } from '../../test/test-app.ts';
import { type ChatApp, connect, startChatApp, type } from '../chat/chat.test-client.ts';
import { sample } from '../metrics/metrics.test-helpers.ts';

const TOKEN = 'metrics-token-0123456789abcdef';
const LIMIT = 2000;

let chatApp: ChatApp;
let t: TestApp;
let fake: FakeOpenAI;

beforeAll(async () => {
  chatApp = await startChatApp({ METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN, LLM_USER_DAILY_TOKENS: String(LIMIT) });
  ({ t, fake } = chatApp);
  fake.onChat(() => ({ text: 'Here you are.', usage: { prompt: 700, completion: 100, cached: 500 } }));
  fake.onJson(() => ({ text: '{"operations":[]}', usage: { prompt: 300, completion: 10 } }));
});
afterAll(() => chatApp.close());

async function admin() {
  const user = await signedInUser(t);
  await t.app.db.prisma.user.update({ where: { id: user.userId }, data: { isAdmin: true } });
  return user;
}

const report = async (browser: Browser, days?: number) =>
  browser.get(`/api/admin/usage/${days === undefined ? '' : `?days=${days}`}`);

describe('tokens accounted', () => {
  it('keeps each purpose’s tokens per user, and shows them to administrators', async () => {
    const { browser, userId, email } = await signedInUser(t);
    const c = await connect(chatApp.wsBase, browser);
    await c.next(type('history'));
    c.say('I love climbing in the mountains');
    await c.next(type('markdown'));
    c.ws.close();
    const boss = await admin();
    // Learning's tokens are recorded once its call is over.
    const shown = await waitFor('the chat and the learning call to be recorded', async () => {
      const body = ZModelUsage.parse((await report(boss.browser)).json());
      const mine = body.top_users.find((u) => u.id === userId);
      return mine && mine.calls >= 2 ? { body, mine } : undefined;
    });
    expect(shown.mine).toEqual({
      id: userId,
      email,
      calls: 2,
      prompt_tokens: 1000,
      cached_tokens: 500,
      completion_tokens: 110,
    });
    const purposes = Object.fromEntries(shown.body.by_purpose.map((p) => [p.purpose, p]));
    expect(purposes.chat).toMatchObject({ prompt_tokens: expect.any(Number), cached_tokens: expect.any(Number) });
    expect(purposes.chat?.prompt_tokens).toBeGreaterThanOrEqual(700);
    expect(purposes.learning?.prompt_tokens).toBeGreaterThanOrEqual(300);
    expect(shown.body).toMatchObject({ days: 30, daily_limit: LIMIT });
    expect(shown.body.by_day.at(-1)?.day).toBe(new Date().toISOString().slice(0, 10));

    // Prometheus: totals by purpose, no user in them.
    const metrics = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(
      sample(metrics.body, 'daybook_model_purpose_tokens_total', { purpose: 'chat', type: 'cached' }),
    ).toBeGreaterThanOrEqual(500);
    expect(metrics.body).not.toMatch(/daybook_model_purpose_tokens_total\{[^}]*user/);
  });

  it('is for administrators only, and refuses a period it does not keep', async () => {
    const { browser } = await signedInUser(t);
    expect((await report(browser)).statusCode).toBe(403);
    const boss = await admin();
    for (const days of [0, 31]) {
      const res = await report(boss.browser, days);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_error' });
    }
    expect(ZModelUsage.parse((await report(boss.browser, 7)).json()).days).toBe(7);
  });

  it('answers with a note, and calls no model, once a user spent the day’s allowance', async () => {
    const { browser, userId } = await signedInUser(t);
    const c = await connect(chatApp.wsBase, browser);
    await c.next(type('history'));
    // 800 + 310 tokens a turn: the third message finds 2,220 spent of 2,000.
    for (const text of ['What is bouldering?', 'And sport climbing?']) {
      c.say(text);
      await c.next(type('markdown'));
    }
    const before = fake.requests.length;
    await waitFor('the turns to be recorded', async () => {
      const [row] = await t.app.db.query<{ n: number }>(
        'SELECT sum(prompt_tokens + completion_tokens)::int AS n FROM model_usage WHERE user_id = $1',
        [userId],
      );
      return (row?.n ?? 0) >= LIMIT || undefined;
    });
    c.say('One more question, please');
    const note = await c.next(
      (e) =>
        e.message_type === 'system_message' && /allowance/.test(e.message_type === 'system_message' ? e.raw_text : ''),
    );
    expect(note.message_type === 'system_message' && note.raw_text).toBe(
      "You have used today's allowance of the assistant (2,000 tokens). It renews at midnight UTC.",
    );
    expect(fake.requests.slice(before).filter((r) => r.stream)).toHaveLength(0);
    c.ws.close();
  });
});
