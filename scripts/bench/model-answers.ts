// What the model benchmark's slot-limited model answers (run in its thread, see slot-model-thread.ts).
import type { SlotModelRequest } from './slot-model.ts';

/** An answer of ordinary length (60 to 180 words), different each turn. */
function chatAnswer(n: number): string {
  const words = 60 + ((n * 37) % 120);
  const vocabulary = [
    'try',
    'a',
    'short',
    'session',
    'with',
    'friends',
    'then',
    'note',
    'what',
    'worked',
    'and',
    'why',
  ];
  const text = Array.from({ length: words }, (_, i) => vocabulary[(i * 5 + n) % vocabulary.length]).join(' ');
  return `Here is an idea (${n}): ${text}.`;
}

/** The model's side: chat answers, and the learning step's operations (one new fact when the user states one). */
function prefixAnswer(req: SlotModelRequest): string {
  if (req.stream) return chatAnswer(req.messages.length);
  const said = JSON.stringify(req.messages.at(-1)?.content ?? '');
  const fact = /I started going to a ([a-z]+) club/.exec(said)?.[1];
  const op = (key: string, data: string) => ({
    action: 'ADD',
    id: null,
    key,
    data,
    memory_type: 'activity',
    frequency_description: 'every Tuesday',
  });
  return JSON.stringify({ operations: fact ? [op(`${fact} club`, `Goes to a ${fact} club`)] : [] });
}

const words = (n: number, seed: number) =>
  Array.from(
    { length: n },
    (_, i) => ['plan', 'a', 'walk', 'then', 'read', 'some', 'pages', 'today'][(i + seed) % 8],
  ).join(' ');

/** The model's side: daily messages of about 150 words, chat answers of about 80, learning that keeps nothing. */
function fanoutAnswer(req: SlotModelRequest): string {
  if (!req.stream) return JSON.stringify({ operations: [] });
  const first = JSON.stringify(req.messages[0]?.content ?? '');
  return first.includes("writing the user's daily message")
    ? `Good morning! ${words(150, req.messages.length)}.`
    : `Here is a thought: ${words(80, req.messages.length)}.`;
}

export const answers = { prefix: prefixAnswer, fanout: fanoutAnswer };
