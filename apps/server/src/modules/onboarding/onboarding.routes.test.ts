// "Skip for now" on the onboarding screen: POST /api/onboarding/skip/ ends the interview like a stop
// word, for the session's own user only; skipping again changes nothing.
import { ONBOARDING_FINISHED, ZSkipOnboardingResponse } from '@daybook/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { Browser, type TestApp } from '../../test/test-app.ts';
import { type ChatApp, connect, startChatApp, type } from '../chat/chat.test-client.ts';

let chatApp: ChatApp;
let t: TestApp;

beforeAll(async () => {
  chatApp = await startChatApp();
  t = chatApp.t;
});
afterAll(() => chatApp.close());
beforeEach(() => {
  chatApp.fake.onChat(() => ({ text: 'Nice to meet you! Where do you live?' }));
  chatApp.fake.onJson(() => ({ text: '{"operations":[]}' }));
});

const onboarded = async (browser: Browser) => (await browser.get('/api/users/me/')).json().onboarded as boolean;
const chatMessages = async (browser: Browser) =>
  (await browser.get('/api/chat/messages/?channel=chat')).json().results as Array<{ raw_text: string }>;

/** Waits for the chat's welcome message (written once the skip's learning has settled). */
async function welcomeOf(browser: Browser) {
  for (let i = 0; i < 100; i++) {
    const messages = await chatMessages(browser);
    if (messages.length) return messages;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no welcome message in the chat');
}

describe('POST /api/onboarding/skip/', () => {
  it('ends the onboarding: open onboarding tabs go to the chat, which greets the user', async () => {
    const { browser } = await signedInUser(t);
    expect(await onboarded(browser)).toBe(false);
    const tab = await connect(chatApp.wsBase, browser, '/ws/onboarding/');
    await tab.next(type('history'));

    const res = await browser.post('/api/onboarding/skip/');
    expect(res.statusCode).toBe(200);
    expect(ZSkipOnboardingResponse.parse(res.json())).toEqual({ onboarded: true, redirect: '/chat' });
    expect(await tab.next(type('redirect'))).toMatchObject({ url: '/chat' });
    expect(await onboarded(browser)).toBe(true);
    const [welcome] = await welcomeOf(browser);
    expect(welcome?.raw_text).toContain('Welcome to your chat!');

    // The interview is over: a message to it is refused, as after a stop word.
    tab.say('One more thing');
    expect(await tab.next(type('error'))).toMatchObject({ code: 'onboarding_finished', raw_text: ONBOARDING_FINISHED });
    tab.ws.close();
  });

  it('skipping twice is harmless: the same answer, no second redirect or welcome', async () => {
    const { browser } = await signedInUser(t);
    expect((await browser.post('/api/onboarding/skip/')).statusCode).toBe(200);
    await welcomeOf(browser);
    const tab = await connect(chatApp.wsBase, browser, '/ws/onboarding/');
    await tab.next(type('history'));

    const again = await browser.post('/api/onboarding/skip/');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ onboarded: true, redirect: '/chat' });
    // A message after the second skip reaches the tab; no redirect came before it.
    tab.say('Still here');
    await tab.next(type('error'));
    expect(tab.events.some((e) => e.message_type === 'redirect')).toBe(false);
    expect(await chatMessages(browser)).toHaveLength(1);
    expect(await onboarded(browser)).toBe(true);
    tab.ws.close();
  });

  it("skips only the session's own onboarding, whatever the body names", async () => {
    const alice = await signedInUser(t);
    const bob = await signedInUser(t);
    const aliceTab = await connect(chatApp.wsBase, alice.browser, '/ws/onboarding/');
    await aliceTab.next(type('history'));

    const res = await bob.browser.post('/api/onboarding/skip/', { user_id: alice.userId, userId: alice.userId });
    expect(res.statusCode).toBe(200);
    expect(await onboarded(bob.browser)).toBe(true);
    expect(await onboarded(alice.browser)).toBe(false);
    // Alice's interview goes on: her next message is answered, and her tab was never redirected.
    aliceTab.say('Hello');
    await aliceTab.next((e) => 'author_type' in e && e.author_type === 'assistant' && e.message_type !== 'stream');
    expect(aliceTab.events.some((e) => e.message_type === 'redirect')).toBe(false);
    expect(await onboarded(alice.browser)).toBe(false);
    expect(await chatMessages(alice.browser)).toEqual([]);
    aliceTab.ws.close();
  });

  it('answers 401 without a session and 403 without the CSRF token', async () => {
    const anonymous = new Browser(t.app);
    expect((await anonymous.post('/api/onboarding/skip/')).json()).toEqual({
      error: 'Authentication credentials were not provided.',
      code: 'unauthorized',
    });
    const { browser } = await signedInUser(t);
    const forged = await browser.post('/api/onboarding/skip/', {}, { 'x-csrftoken': '' });
    expect(forged.statusCode).toBe(403);
    expect(forged.json().code).toBe('csrf_failed');
    expect(await onboarded(browser)).toBe(false);
  });
});
