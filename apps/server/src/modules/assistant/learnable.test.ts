import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { MemoriesService } from '../memories/memories.service.ts';
import type { Llm } from '../model/model.types.ts';
import { nothingToLearn } from './learnable.ts';
import { createLearningService } from './learning.service.ts';

// Turns people send that hold nothing to remember: no learning call for these.
const NOTHING_TO_LEARN = [
  'hi',
  'Hello!',
  'hey there',
  'Good morning, Daybook!',
  'thanks',
  'Thank you so much!!',
  'thx 🙏',
  'ok',
  'Okay, got it.',
  'cool, thanks',
  'Sounds good!',
  'yes',
  'nope',
  'haha',
  'bye',
  'See you later!',
  'good night',
  'Who are you?',
  'what can you do?',
  'How are you?',
  "What's your name?",
  'are you a bot?',
  '👍',
  '',
  '   ',
];

// Turns with something about the user in them, however short or polite: they go to the model.
const TO_LEARN = [
  "hi, I'm Ada",
  'Hello! I moved to Lisbon last week',
  'thanks, my sister is visiting on Sunday',
  'remember that I take my coffee black',
  'forget my old address',
  'call me Sam',
  "no, I don't eat meat",
  'I love hiking',
  'ok my name is Bob',
  'good morning! training for a marathon this spring',
  'yes, every Saturday at the climbing gym',
  'We have two cats',
  'I work night shifts, so evenings are my mornings',
  'Thanks! Could you follow heat pump news for me?',
  'what is the weather in Porto',
  'Lisbon',
];

describe('turns with nothing to learn', () => {
  it.each(NOTHING_TO_LEARN)('%j is skipped', (text) => {
    expect(nothingToLearn(text)).toBe(true);
  });

  it.each(TO_LEARN)('%j goes to the model', (text) => {
    expect(nothingToLearn(text)).toBe(false);
  });

  it('makes no model call for them, and still asks the model about the others', async () => {
    const asked: string[] = [];
    const llm = {
      structured: async (request: { messages: Array<{ content: string }> }) => {
        asked.push(request.messages.at(-1)?.content ?? '');
        return { operations: [] };
      },
    } as unknown as Llm;
    const memories = {
      select: async () => ({ core: [], relevant: [], recent: [] }),
    } as unknown as MemoriesService;
    const learning = createLearningService({ llm, memories, log: pino({ level: 'silent' }) });
    const user = { id: 1, learnFromChats: true };
    expect(await learning.learn(user, { messageId: 1, source: 'chat' }, 'Thanks, bye!')).toEqual([]);
    expect(asked).toEqual([]);
    await learning.learn(user, { messageId: 2, source: 'chat' }, 'thanks, I moved to Lisbon');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('thanks, I moved to Lisbon');
  });
});
