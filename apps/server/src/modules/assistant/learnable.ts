// Turns with nothing in them to learn (greetings, thanks, acknowledgements, goodbyes, questions about
// the assistant) skip the learning call: on a busy or billed model that is one call less per such turn.
// Conservative by design: any word about the user themselves (I, my, me...) or a request to remember
// or forget sends the turn to the model as before.

/** Words that may say something about the user: the turn goes to the model. */
const ABOUT_THE_USER =
  /\b(i|i'm|im|i've|ive|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us|remember|forget|call|name's|live|work|moved|love|like|hate|prefer)\b/;

/** Whole phrases that carry nothing to keep, each possibly followed by a name for the assistant. */
const NOTHING = new Set([
  // greetings, and the assistant addressed by name
  'daybook',
  'hi',
  'hello',
  'hey',
  'hiya',
  'yo',
  'howdy',
  'good morning',
  'good afternoon',
  'good evening',
  'morning',
  'evening',
  // thanks
  'thanks',
  'thank you',
  'thanks a lot',
  'thank you so much',
  'thanks so much',
  'many thanks',
  'thx',
  'ty',
  'cheers',
  'much appreciated',
  'appreciated',
  // acknowledgements
  'ok',
  'okay',
  'k',
  'kk',
  'alright',
  'all right',
  'cool',
  'great',
  'nice',
  'perfect',
  'awesome',
  'got it',
  'sounds good',
  'makes sense',
  'sure',
  'yes',
  'yeah',
  'yep',
  'no',
  'nope',
  'lol',
  'haha',
  'wow',
  'fine',
  'noted',
  'understood',
  'good',
  'very good',
  'well done',
  'nice one',
  // goodbyes
  'bye',
  'goodbye',
  'bye bye',
  'see you',
  'see you later',
  'later',
  'good night',
  'night',
  'take care',
  // about the assistant
  'who are you',
  'what are you',
  'what can you do',
  'how are you',
  "how's it going",
  'how is it going',
  "what's up",
  'whats up',
  "what's your name",
  'what is your name',
  'are you a bot',
  'are you an ai',
  'are you there',
  'how do you work',
  'what do you do',
  'help',
]);

const ADDRESSED = /\s+(there|daybook|assistant|again|everyone|all)$/;

/** Whether `text` has nothing the learning step could keep, so it need not ask the model. */
export function nothingToLearn(text: string): boolean {
  const plain = text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    // Emoji and other symbols say nothing to keep.
    .replace(/[\p{Extended_Pictographic}\p{Emoji_Component}]/gu, ' ')
    .trim();
  if (!plain) return true;
  if (ABOUT_THE_USER.test(plain)) return false;
  const parts = plain
    .split(/[.,!?;:()\n]+|\s+-\s+/)
    .map((part) =>
      part
        .replace(/[^\p{L}\p{N}' ]/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
  return parts.every((part) => NOTHING.has(part) || NOTHING.has(part.replace(ADDRESSED, '')));
}
