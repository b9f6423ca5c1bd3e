// A model per purpose: learning can ask a smaller model than the chat's, on the same endpoint.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { structuredName } from '../../../../../tests/helpers/fake-openai.ts';
import { signedInUser } from '../../test/factories.ts';
import { waitFor } from '../../test/test-app.ts';
import { type ChatApp, connect, startChatApp, type } from '../chat/chat.test-client.ts';

let chatApp: ChatApp;
beforeAll(async () => {
  chatApp = await startChatApp({ LLM_LEARNING_MODEL: 'fake-learner' });
  chatApp.fake.onChat(() => ({ text: 'Lisbon is lovely.' }));
  chatApp.fake.onJson(() => ({ text: '{"operations":[]}' }));
});
afterAll(() => chatApp?.close());

it('answers with the chat model and learns with LLM_LEARNING_MODEL', async () => {
  const { browser } = await signedInUser(chatApp.t);
  const c = await connect(chatApp.wsBase, browser);
  await c.next(type('history'));
  c.say('I live in Lisbon');
  await c.next((e) => e.message_type === 'markdown' && 'raw_text' in e && e.raw_text === 'Lisbon is lovely.', 15_000);
  const learning = await waitFor(
    'the learning call',
    () => chatApp.fake.requests.find((r) => structuredName(r) === 'save_memory_changes'),
    { timeoutMs: 15_000 },
  );
  expect(learning.model).toBe('fake-learner');
  const answers = chatApp.fake.requests.filter((r) => r.stream);
  expect(answers.map((r) => r.model)).toEqual(['fake-model']);
  c.ws.close();
});
