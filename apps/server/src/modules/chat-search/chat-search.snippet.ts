// A search result's snippet: plain text around the first match, with where each match is. The
// database finds the messages (chat-search.repo.ts); this finds the match again in the text shown.
import type { TChatSearchHighlight } from '@daybook/contracts';

/** About this many characters of context around the match. */
export const SNIPPET_LENGTH = 160;
const BEFORE_MATCH = 50;
/** How far a cut may move to land between words. */
const WORD_SLACK = 16;

const COMBINING_MARKS = /[\u0300-\u036f]/g;
const folded = new Map<string, string>();

/**
 * One UTF-16 code unit, lower-cased and without accents, always as one code unit: offsets in the
 * folded text are then offsets in the text itself. The same folding as the database's (NFD, no
 * combining marks, lower case).
 */
function foldUnit(c: string): string {
  let f = folded.get(c);
  if (f === undefined) {
    const bare = c.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase();
    const lower = c.toLowerCase();
    f = bare.length === 1 ? bare : lower.length === 1 ? lower : c;
    if (folded.size < 10_000) folded.set(c, f);
  }
  return f;
}

export function fold(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += foldUnit(text[i] as string);
  return out;
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Markdown's marks removed (links keep their text), well enough for a line of context. */
export function markdownToPlain(md: string): string {
  return md
    .replace(/^\s*(```|~~~).*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)/g, '$1')
    .replace(/^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+(?:\[[ xX]\][ \t]+)?|\d{1,9}[.)][ \t]+)/gm, '')
    .replace(/^[ \t]*(?:[-*_][ \t]*){3,}$/gm, ' ')
    .replace(/\*\*|__|~~|`+/g, '')
    .replace(/(^|[\s([{"'])[*_](?=\S)/g, '$1')
    .replace(/(\S)[*_](?=[\s)\]}.,:;!?"']|$)/g, '$1');
}

const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

function window(text: string, at: number, length: number): [number, number] {
  const span = Math.max(SNIPPET_LENGTH, length);
  let start = Math.max(0, Math.min(at - BEFORE_MATCH, text.length - span));
  let end = Math.min(text.length, start + span);
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space !== -1 && space < at && space - start <= WORD_SLACK) start = space + 1;
  }
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space >= at + length && end - space <= WORD_SLACK) end = space;
  }
  // Never half a character.
  if (start > 0 && isLow(text.charCodeAt(start))) start++;
  if (end < text.length && isLow(text.charCodeAt(end))) end--;
  while (start < at && text[start] === ' ') start++;
  while (end > at + length && text[end - 1] === ' ') end--;
  return [start, end];
}

/** Every non-overlapping occurrence of `needle` in `haystack` from `from` to `to`, as [start, end). */
function occurrences(haystack: string, needle: string, from: number, to: number): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  if (!needle) return found;
  for (let i = haystack.indexOf(needle, from); i !== -1 && i + needle.length <= to; ) {
    found.push([i, i + needle.length]);
    i = haystack.indexOf(needle, i + needle.length);
  }
  return found;
}

export interface Snippet {
  snippet: string;
  highlights: TChatSearchHighlight[];
}

/** A search text as the database compares it: accents (also decomposed ones) removed, lower case. */
export const foldSearch = (search: string) => fold(collapse(search).normalize('NFD').replace(COMBINING_MARKS, ''));

/** The escaped text of a JSON key's string value; the same pattern as chat-search.repo.ts's. */
const jsonString = (key: string) => new RegExp(String.raw`"${key}"\s*:\s*"((?:[^"\\]|\\.)*)"`, 'gs');
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', n: '\n', r: '\r', t: '\t', b: ' ', f: ' ' };
/** JSON string escapes decoded as the database decodes them (\u escapes become spaces). */
const decodeJson = (text: string) =>
  text.replace(/\\(u[0-9a-fA-F]{4}|.)/gs, (sequence, c: string) => (c.length > 1 ? ' ' : (ESCAPES[c] ?? sequence)));
const firstValue = (json: string, key: string) => {
  const value = jsonString(key).exec(json)?.[1];
  return value === undefined ? '' : decodeJson(value);
};

/**
 * A research report's readable parts, as the database searches them (chat-search.repo.ts's
 * REPORT_TEXT): query, introduction, body, conclusion (markdown) and source titles, from its JSON.
 */
export function reportParts(json: string) {
  return {
    query: firstValue(json, 'query'),
    markdown: ['introduction', 'report', 'conclusion'].map((key) => firstValue(json, key)),
    titles: Array.from(json.matchAll(jsonString('title')), (m) => decodeJson(m[1] ?? '')),
  };
}

/** The texts a match is looked for in, first to last, and the text shown when none has it. */
function searchedTexts(rawText: string, messageType: string): { candidates: string[]; fallback: string } {
  if (messageType === 'research_report') {
    const { query, markdown, titles } = reportParts(rawText);
    const plain = [query, ...markdown.map(markdownToPlain), ...titles].map(collapse).filter(Boolean);
    // The part that matched, on its own; a match only in the markdown's marks is looked for as written.
    return { candidates: [...plain, ...markdown.map(collapse)], fallback: plain.join(' ') };
  }
  if (messageType === 'markdown') {
    const plain = collapse(markdownToPlain(rawText));
    // A match only in the markdown's marks (a link's address) is looked for in the text as written.
    return { candidates: [plain, collapse(rawText)], fallback: plain };
  }
  const plain = collapse(rawText);
  return { candidates: [plain], fallback: plain };
}

/**
 * The snippet of a message for a search text: markdown is shown without its marks, a research
 * report as the plain text of the part that matched (never its JSON).
 */
export function snippetFor(rawText: string, messageType: string, search: string): Snippet {
  const needle = foldSearch(search);
  const { candidates, fallback: plain } = searchedTexts(rawText, messageType);
  for (const text of candidates) {
    const hay = fold(text);
    const at = hay.indexOf(needle);
    if (!needle || at === -1) continue;
    const [start, end] = window(text, at, needle.length);
    const prefix = start > 0 ? '…' : '';
    const suffix = end < text.length ? '…' : '';
    const highlights = occurrences(hay, needle, start, end).map(([s, e]) => ({
      start: s - start + prefix.length,
      end: e - start + prefix.length,
    }));
    return { snippet: `${prefix}${text.slice(start, end)}${suffix}`, highlights };
  }
  // The database matched by a folding this one does not share (rare scripts): the message's start.
  const [start, end] = window(plain, 0, 0);
  return { snippet: `${plain.slice(start, end)}${end < plain.length ? '…' : ''}`, highlights: [] };
}
