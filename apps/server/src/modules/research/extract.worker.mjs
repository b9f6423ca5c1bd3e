// One extraction worker thread (started by extract.ts): HTML in, readable markdown out, so a large
// or pathological page never stalls the server's event loop; it runs at the lowest priority, so it
// takes no core the event loop wants. Plain JavaScript, so the same file runs under vitest, tsx and
// compiled builds.
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
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

/** Whether `text` has at least `min` words (counting stops there: pages run to thousands). */
function hasWords(text, min) {
  const word = /\S+/g;
  let n = 0;
  while (n < min && word.test(text)) n++;
  return n >= min;
}

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

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'img', 'noscript']);
// The markdown is read by a model, never rendered: escaping would only cost time and add backslashes.
turndown.escape = (text) => text;

function withReadability(document) {
  // The article as an element, not HTML: Turndown reads it without serialising and parsing it again.
  const article = new Readability(document, { serializer: (element) => element }).parse();
  if (!article?.content) return null;
  // Turndown copies the element it is given so as to leave it as it was; this one is thrown away
  // afterwards, and the copy took about a sixth of a long page's time.
  article.content.cloneNode = function () {
    return this;
  };
  return { title: article.title ?? '', markdown: turndown.turndown(article.content) };
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

// Readability first and defuddle second, against the first plan: both keep the article and
// drop the site around it (extract.test.ts), but on 100 KB long reads defuddle over linkedom takes
// ~155 ms of CPU a page against ~30 ms for Readability and Turndown, which made a 15-page research
// cost ~4.3 s of server CPU instead of ~0.9 s (scripts/bench-research.ts). defuddle still reads the
// pages where Readability finds no article.
async function extract(page, url, maxChars) {
  // The markdown is capped anyway, and the article starts early in the page: parse a bounded prefix.
  const html = strip(page).slice(0, Math.max(1_000_000, maxChars * 10));
  let title = '';
  const document = parse(html, url);
  const { elements, deep } = shape(document);
  try {
    const found = !deep && elements <= READABILITY_MAX_ELEMENTS ? withReadability(document) : null;
    if (found) {
      title = found.title.trim();
      const markdown = plainMarkdown(found.markdown);
      if (hasWords(markdown, MIN_WORDS)) return { title, markdown };
    }
  } catch {
    // Fall through to the next extractor.
  }
  try {
    if (!deep && elements <= DEFUDDLE_MAX_ELEMENTS) {
      const found = await withDefuddle(parse(html, url), url);
      const markdown = plainMarkdown(found.markdown);
      if (hasWords(markdown, MIN_WORDS)) return { title: title || found.title.trim(), markdown };
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

const LINUX = process.platform === 'linux';

/** This thread's CPU time in ms where Linux tells it (a page's wall time also counts waiting for a core). */
function threadCpuMs() {
  if (!LINUX) return Number.NaN;
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

parentPort.on('message', async ({ id, html, url, maxChars }) => {
  const start = performance.now();
  const cpuStart = threadCpuMs();
  const times = () => ({ ms: performance.now() - start, cpuMs: threadCpuMs() - cpuStart });
  try {
    const { title, markdown } = await extract(html, url, maxChars);
    parentPort.postMessage({ id, ok: true, title: title.slice(0, 500), markdown: cap(markdown, maxChars), ...times() });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err), ...times() });
  }
});

// Linux keeps a nice value per thread, and pid 0 names the calling thread: this worker, not the
// process, yields the cores to the event loop's thread (chat replies) whenever both want one. Other
// systems would renice the whole process, so they keep the default.
if (LINUX) {
  try {
    setPriority(0, 19);
  } catch {
    // Not allowed here: extraction runs at normal priority.
  }
}

// One small page first, so loading and warming up the libraries is not charged to a real page's time limit.
await extract(
  '<html><head><title>Warm-up</title></head><body><article><h1>Warm-up</h1><p>A short paragraph.</p></article></body></html>',
  'http://localhost/',
  10_000,
);
parentPort.postMessage({ ready: true });
