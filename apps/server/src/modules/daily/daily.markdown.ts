// Markdown from elsewhere made inert: event titles and report sentences the template quotes, and
// the model's text, which read web pages and other people's invitations.

/** U+2060, an invisible word joiner: an address reads the same with it after "https:" or "www", and no renderer links it. */
const JOINER = '\u2060';

/**
 * Bare web addresses made words: GFM (the mail) and the chat's renderer link "https://…" and
 * "www.…" by themselves (a backslash escape does not stop GFM), and an address in an invitation's
 * title must not become Daybook's link.
 */
export const unlinkAddresses = (text: string) =>
  text.replace(/\b(https?:)(?=\/\/)/gi, `$1${JOINER}`).replace(/\b(www)(?=\.)/gi, `$1${JOINER}`);

/** Markdown text from elsewhere (event titles, report sentences) made inert: no links, no HTML, one line. */
export function plain(text: string, max = 200): string {
  const one = text.replace(/\s+/g, ' ').trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return unlinkAddresses(cut.replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`));
}

/** `text` with `fn` applied outside fenced blocks and code spans (where nothing is a link). */
export function outsideCode(text: string, fn: (prose: string) => string): string {
  return text
    .split(/(^ {0,3}(?:```|~~~)[\s\S]*?^ {0,3}(?:```|~~~)[ \t]*$|`[^`\n]+`)/m)
    .map((part, i) => (i % 2 ? part : fn(part)))
    .join('');
}

/**
 * An inline link or image: [label](target "title"), the label one bracket deep, the target one
 * parenthesis deep, after the backslashes before it (an odd number escapes the bracket). Bounded
 * spaces keep a long run of them from costing quadratic time.
 */
const INLINE_LINK =
  /(\\*)(!?)\[((?:[^[\]]|\[[^[\]]*\])*)\]\(\s{0,16}<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s{1,16}(?:"[^"]*"|'[^']*'))?\s{0,16}\)/g;

/**
 * The model's text with only the links Daybook gave it (its reports, the calendar connections page):
 * what it read came from web pages and other people's invitations, so any other link (inline,
 * reference, image, autolink or bare address) keeps its words and loses its target.
 */
export function keepOwnLinks(text: string, allowed: ReadonlySet<string>): string {
  return outsideCode(text, (prose) =>
    unlinkAddresses(
      prose
        .replace(INLINE_LINK, (link, slashes: string, image: string, label: string, target: string) =>
          slashes.length % 2 || (!image && allowed.has(target)) ? link : `${slashes}${label}`,
        )
        // Whatever still reads as "](" to a renderer and does not go where it may: no longer a link.
        .replace(/(\\*)\]\(\s*<?([^\s)>]*)/g, (m, slashes: string, target: string) =>
          slashes.length % 2 || allowed.has(target) ? m : `${slashes}\\${m.slice(slashes.length)}`,
        )
        // Reference definitions ("[1]: https://…") are links in the mail's markdown.
        .replace(/^( {0,3})\[(?=[^\]\n]+\]:)/gm, '$1\\['),
    ),
  );
}

/**
 * The message without the prompt's fact tags a model may echo (`<research link=… topic=…>`): the
 * chat, the message's page and the email render raw HTML differently, so it is taken out once, here,
 * and all three show the same text.
 */
export function withoutFactTags(text: string): string {
  return outsideCode(text, (prose) => prose.replace(/[<‹]\s*\/?\s*research\b[^>\n]*>/gi, ''))
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
