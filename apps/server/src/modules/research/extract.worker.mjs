// One extraction worker thread (started by extract.ts): HTML in, readable markdown out, so a large
// or pathological page never stalls the server's event loop. Plain JavaScript, so the same file
// runs under vitest, tsx and compiled builds.
import { parentPort } from 'node:worker_threads';
import { Readability } from '@mozilla/readability';
import { Defuddle } from 'defuddle/node';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/** Fewer words than this from an extractor means it missed the article; try the next one. */
const MIN_WORDS = 40;
// defuddle and Readability over linkedom slow down faster than linearly with the number of elements
// and with nesting (10,000 empty divs, or 800 nested ones, take seconds): pages past these limits
// go to the next, simpler reader instead of using up their time limit.
const DEFUDDLE_MAX_ELEMENTS = 6000;
const READABILITY_MAX_ELEMENTS = 20_000;
const MAX_DEPTH = 100;
const NOISE = 'script, style, noscript, template, iframe, svg, canvas, nav, header, footer, aside, form, button';

/** A linkedom document with the bits of the DOM that defuddle expects (as defuddle's own helper does). */
function parse(html, url) {
  const { document } = parseHTML(html);
  if (!document.styleSheets) document.styleSheets = [];
  if (document.defaultView && !document.defaultView.getComputedStyle) {
    document.defaultView.getComputedStyle = () => ({ display: '' });
  }
  try {
    document.URL = url;
  } catch {
    // Read-only in some DOMs; only relative links suffer.
  }
  return document;
}

/**
 * Drops what no extractor reads (scripts, styles, inline SVG icons, comments) before parsing, and
 * keeps JSON-LD for metadata. One linear pass: an unclosed block is left alone.
 */
const CLOSING = Object.fromEntries(['script', 'style', 'svg', 'template'].map((t) => [t, new RegExp(`</${t}`, 'gi')]));

function strip(html) {
  const opening = /<!--|<(script|style|svg|template)\b/gi;
  let out = '';
  let from = 0;
  for (let match = opening.exec(html); match; match = opening.exec(html)) {
    const tag = match[1]?.toLowerCase();
    const closing = tag ? CLOSING[tag] : /-->/g;
    closing.lastIndex = opening.lastIndex;
    if (!closing.exec(html)) break;
    const end = tag ? html.indexOf('>', closing.lastIndex) + 1 : closing.lastIndex;
    if (end <= 0) break;
    const block = html.slice(match.index, end);
    if (!(tag === 'script' && /^<script[^>]*application\/ld\+json/i.test(block))) {
      out += html.slice(from, match.index);
      from = end;
    }
    opening.lastIndex = end;
  }
  return out + html.slice(from);
}

/** Elements in the page, and whether any is nested deeper than MAX_DEPTH (one walk, no recursion). */
function shape(document) {
  let elements = 0;
  const stack = document.documentElement ? [[document.documentElement, 1]] : [];
  while (stack.length) {
    const [element, depth] = stack.pop();
    elements++;
    if (depth > MAX_DEPTH) return { elements, deep: true };
    for (const child of element.children) stack.push([child, depth + 1]);
  }
  return { elements, deep: false };
}

const words = (text) => (text.match(/\S+/g) ?? []).length;

/** Links become their text and images go: the reader wants prose, and URLs only cost tokens. */
function plainMarkdown(markdown) {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"]*")?\)/g, '$1')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const refuseFetch = () => Promise.reject(new Error('extraction never fetches'));

async function withDefuddle(document, url) {
  const result = await Defuddle(document, url, {
    markdown: true,
    removeImages: true,
    // Off: async extractors would fetch third-party APIs from inside the worker.
    useAsync: false,
    fetch: refuseFetch,
  });
  return { title: result.title ?? '', markdown: result.content ?? '' };
}

function withReadability(html, url, maxChars) {
  const article = new Readability(parse(html, url)).parse();
  if (!article?.content) return null;
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  turndown.remove(['script', 'style', 'img', 'noscript']);
  return { title: article.title ?? '', markdown: turndown.turndown(article.content.slice(0, maxChars * 4)) };
}

function bodyText(html, url) {
  const document = parse(html, url);
  for (const node of document.querySelectorAll(NOISE)) node.remove();
  const text = (document.body?.textContent ?? document.documentElement?.textContent ?? '')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n\n');
  return { title: document.title ?? '', markdown: text };
}

async function extract(page, url, maxChars) {
  // The markdown is capped anyway, and the article starts early in the page: parse a bounded prefix.
  const html = strip(page).slice(0, Math.max(1_000_000, maxChars * 10));
  let title = '';
  const document = parse(html, url);
  const { elements, deep } = shape(document);
  try {
    if (!deep && elements <= DEFUDDLE_MAX_ELEMENTS) {
      const found = await withDefuddle(document, url);
      title = found.title.trim();
      const markdown = plainMarkdown(found.markdown);
      if (words(markdown) >= MIN_WORDS) return { title, markdown };
    }
  } catch {
    // Fall through to the next extractor.
  }
  try {
    const found = !deep && elements <= READABILITY_MAX_ELEMENTS ? withReadability(html, url, maxChars) : null;
    if (found) {
      const markdown = plainMarkdown(found.markdown);
      if (words(markdown) >= MIN_WORDS) return { title: title || found.title.trim(), markdown };
    }
  } catch {
    // Fall through to the page's text.
  }
  const found = bodyText(html, url);
  return { title: title || found.title.trim(), markdown: found.markdown };
}

/** At most `max` characters, cut at a paragraph (or line) break when one is near. */
function cap(markdown, max) {
  if (markdown.length <= max) return markdown;
  const cut = markdown.slice(0, max);
  const at = Math.max(cut.lastIndexOf('\n\n'), cut.lastIndexOf('\n'));
  return (at > max * 0.8 ? cut.slice(0, at) : cut).trimEnd();
}

parentPort.on('message', async ({ id, html, url, maxChars }) => {
  try {
    const { title, markdown } = await extract(html, url, maxChars);
    parentPort.postMessage({ id, ok: true, title: title.slice(0, 500), markdown: cap(markdown, maxChars) });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});

// One small page first, so loading and warming up the libraries is not charged to a real page's time limit.
await extract(
  '<html><head><title>Warm-up</title></head><body><article><h1>Warm-up</h1><p>A short paragraph.</p></article></body></html>',
  'http://localhost/',
  10_000,
);
parentPort.postMessage({ ready: true });
