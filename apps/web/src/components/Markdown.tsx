// biome-ignore-all lint/suspicious/noArrayIndexKey: blocks, list items and table cells have no identity beyond their place
// A small, safe markdown renderer: it builds React elements (never HTML strings), so raw HTML in the
// text shows as text, and only http(s), mailto and tel links (or relative ones) become links.
// Optionally, citations such as [2] or [1, 3] link to the numbered sources they name.
import { createElement, type ReactNode, useMemo } from 'react';

type Align = 'left' | 'center' | 'right' | null;

export type Block =
  | { type: 'paragraph'; text: string }
  | { type: 'heading'; level: number; text: string }
  | { type: 'code'; lang: string; text: string }
  | { type: 'quote'; blocks: Block[] }
  | { type: 'list'; ordered: boolean; start: number; loose: boolean; items: Block[][] }
  | { type: 'table'; header: string[]; align: Align[]; rows: string[][] }
  | { type: 'hr' };

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( *)(?:([-*+])|(\d{1,9})[.)])([ \t]+|$)(.*)$/;

interface ItemMatch {
  indent: number;
  ordered: boolean;
  start: number;
  contentIndent: number;
  text: string;
}

function matchItem(line: string): ItemMatch | null {
  const m = ITEM.exec(line);
  if (!m) return null;
  const indent = (m[1] ?? '').length;
  const marker = m[2] ?? `${m[3]}.`;
  const text = m[5] ?? '';
  // A bare marker with no text is only an item when something follows on the line.
  if (!text.trim()) return null;
  return {
    indent,
    ordered: m[2] === undefined,
    start: m[3] === undefined ? 1 : Number(m[3]),
    contentIndent: indent + marker.length + Math.min((m[4] ?? ' ').length, 4),
    text,
  };
}

const indentOf = (line: string) => (/^ */.exec(line)?.[0].length ?? 0) as number;
const isBlank = (line: string | undefined) => line === undefined || line.trim() === '';

function splitCells(row: string): string[] {
  let r = row.trim();
  if (r.startsWith('|')) r = r.slice(1);
  if (r.endsWith('|') && !r.endsWith('\\|')) r = r.slice(0, -1);
  return r.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

function isDelimiterRow(line: string | undefined): boolean {
  if (line === undefined || !line.includes('-')) return false;
  const cells = splitCells(line);
  return cells.length > 0 && cells.every((c) => /^:?-+:?$/.test(c));
}

const startsTable = (lines: string[], i: number) => (lines[i] ?? '').includes('|') && isDelimiterRow(lines[i + 1]);

/** Whether `line` begins a block other than a paragraph (so it ends a paragraph). */
function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || matchItem(line) !== null;
}

export function parseBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const indent = (fence[1] ?? '').length;
      const marker = fence[2] as string;
      const close = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
      const body: string[] = [];
      i++;
      while (i < lines.length && !close.test(lines[i] as string)) {
        const content = lines[i] as string;
        body.push(content.slice(Math.min(indent, indentOf(content))));
        i++;
      }
      i++; // the closing fence (or the end of a reply still streaming)
      const lang = fence[3] ?? '';
      blocks.push({ type: 'code', lang: /^[\w+#.-]+$/.test(lang) ? lang : '', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ type: 'heading', level: (heading[1] as string).length, text: heading[2] as string });
      i++;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ type: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length) {
        const m = QUOTE.exec(lines[i] as string);
        if (m) inner.push(m[1] ?? '');
        else if (!isBlank(lines[i]) && !startsBlock(lines[i] as string)) inner.push(lines[i] as string);
        else break;
        i++;
      }
      blocks.push({ type: 'quote', blocks: parseBlocks(inner) });
      continue;
    }
    const item = matchItem(line);
    if (item) {
      i = parseList(lines, i, item, blocks);
      continue;
    }
    if (startsTable(lines, i)) {
      const header = splitCells(line);
      const align = splitCells(lines[i + 1] as string).map((c): Align => {
        const left = c.startsWith(':');
        const right = c.endsWith(':');
        return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
      });
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && !isBlank(lines[i]) && (lines[i] as string).includes('|')) {
        rows.push(splitCells(lines[i] as string));
        i++;
      }
      blocks.push({ type: 'table', header, align, rows });
      continue;
    }
    const paragraph: string[] = [line.trim()];
    i++;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i] as string) && !startsTable(lines, i)) {
      paragraph.push((lines[i] as string).trim());
      i++;
    }
    blocks.push({ type: 'paragraph', text: paragraph.join('\n') });
  }
  return blocks;
}

function parseList(lines: string[], start: number, first: ItemMatch, blocks: Block[]): number {
  const items: string[][] = [];
  let current: string[] = [first.text];
  let contentIndent = first.contentIndent;
  let loose = false;
  items.push(current);
  let i = start + 1;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      let j = i + 1;
      while (j < lines.length && isBlank(lines[j])) j++;
      const next = lines[j];
      const sibling = next === undefined ? null : matchItem(next);
      const continues =
        next !== undefined &&
        (indentOf(next) >= contentIndent ||
          (sibling !== null && sibling.indent < first.indent + 2 && sibling.ordered === first.ordered));
      if (next === undefined || !continues) {
        i = j;
        break;
      }
      for (let k = i; k < j; k++) current.push('');
      loose = loose || indentOf(next) < contentIndent;
      i = j;
      continue;
    }
    const m = matchItem(line);
    if (m && m.indent < first.indent + 2) {
      if (m.ordered !== first.ordered) break;
      current = [m.text];
      items.push(current);
      contentIndent = m.contentIndent;
      i++;
      continue;
    }
    const indent = indentOf(line);
    if (indent >= contentIndent || m) {
      current.push(line.slice(Math.min(indent, contentIndent)));
      i++;
      continue;
    }
    if (startsBlock(line)) break;
    current.push(line.trim()); // a lazy continuation of the item's text
    i++;
  }
  blocks.push({
    type: 'list',
    ordered: first.ordered,
    start: first.start,
    loose,
    items: items.map((content) => parseBlocks(content)),
  });
  return i;
}

// ---- inline ----

const PUNCTUATION = /[!-/:-@[-`{-~]/;
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);

/** The href to use for `raw`, or null when it must not become a link (javascript:, data:, vbscript:, ...). */
export function safeHref(raw: string): string | null {
  const url = raw.trim();
  if (!url) return null;
  // Browsers ignore whitespace and control characters inside a scheme ("java\tscript:").
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const compact = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(compact);
  if (scheme) return SAFE_SCHEMES.has(scheme[1] as string) ? url : null;
  if (compact.startsWith('\\') || compact.startsWith('/\\')) return null;
  return url;
}

/** Links to other sites open in a new tab. */
export function isExternal(href: string): boolean {
  try {
    const url = new URL(href, window.location.href);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin !== window.location.origin;
  } catch {
    return false;
  }
}

export function SafeLink({ href, children }: { href: string; children: ReactNode }) {
  const safe = safeHref(href);
  if (safe === null) return <span className="md-unsafe-link">{children}</span>;
  return isExternal(safe) ? (
    <a href={safe} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ) : (
    <a href={safe}>{children}</a>
  );
}

interface LinkMatch {
  label: string;
  href: string;
  end: number;
}

/** `[label](href "title")` starting at `start` (the `[`). */
function matchLink(text: string, start: number): LinkMatch | null {
  let depth = 0;
  let i = start;
  for (; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '[') depth++;
    else if (ch === ']' && --depth === 0) break;
  }
  if (i >= text.length || text[i + 1] !== '(') return null;
  const label = text.slice(start + 1, i);
  let j = i + 2;
  while (text[j] === ' ') j++;
  let href = '';
  if (text[j] === '<') {
    const close = text.indexOf('>', j);
    if (close < 0) return null;
    href = text.slice(j + 1, close);
    j = close + 1;
  } else {
    let parens = 0;
    const from = j;
    for (; j < text.length; j++) {
      const ch = text[j] as string;
      if (/\s/.test(ch)) break;
      if (ch === '(') parens++;
      else if (ch === ')' && parens-- === 0) break;
    }
    href = text.slice(from, j);
  }
  while (text[j] === ' ') j++;
  const quote = text[j];
  if (quote === '"' || quote === "'") {
    const close = text.indexOf(quote, j + 1);
    if (close < 0) return null;
    j = close + 1;
    while (text[j] === ' ') j++;
  }
  if (text[j] !== ')') return null;
  return { label, href, end: j + 1 };
}

const BARE_URL = /^(?:https?:\/\/|www\.)[^\s<>]+/i;

function matchBareUrl(text: string, i: number): string | null {
  if (i > 0 && /[\p{L}\p{N}/:._-]/u.test(text[i - 1] as string)) return null;
  const m = BARE_URL.exec(text.slice(i));
  if (!m) return null;
  let url = m[0];
  for (;;) {
    const last = url[url.length - 1] as string;
    if (/[.,;:!?"'*_~]/.test(last)) url = url.slice(0, -1);
    else if (last === ')' && (url.match(/\(/g)?.length ?? 0) < (url.match(/\)/g)?.length ?? 0)) url = url.slice(0, -1);
    else break;
  }
  return /^www\.$/i.test(url) || /^https?:\/\/$/i.test(url) ? null : url;
}

const isSpace = (ch: string | undefined) => ch === undefined || /\s/.test(ch);
const isWordChar = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

/** The end of emphasis opened by `n` × `ch` at `from`, or -1. */
function findCloser(text: string, from: number, ch: string, n: number): number {
  const delim = ch.repeat(n);
  for (let j = from; j < text.length; j++) {
    if (text[j] === '\\') {
      j++;
      continue;
    }
    if (text[j] === '`') {
      // Skip code spans: emphasis does not close inside them.
      const run = /^`+/.exec(text.slice(j))?.[0] ?? '`';
      const close = text.indexOf(run, j + run.length);
      if (close > 0) j = close + run.length - 1;
      continue;
    }
    if (!text.startsWith(delim, j) || isSpace(text[j - 1]) || j === from) continue;
    // Exactly n delimiters (a single * must not close on half of a **).
    if (text[j + n] === ch) {
      if (n === 1) j++;
      continue;
    }
    if (n === 1 && text[j - 1] === ch) continue;
    if (ch === '_' && isWordChar(text[j + n])) continue;
    return j;
  }
  return -1;
}

/** Numbered sources that `[n]` citations point at (n counts from 1). */
export type Citations = readonly { url: string; title?: string | undefined }[];

const CITATION = /^\[(\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*)\](?!\()/;

/** A citation's link: only to a web page (a model's source list must never yield javascript: or a local path). */
function citationLink(n: number, cite: Citations, key: number, text: string): ReactNode {
  const source = cite[n - 1];
  const href = source && /^https?:\/\//i.test(source.url.trim()) ? safeHref(source.url) : null;
  if (!source || href === null) return text;
  return (
    <a
      key={key}
      className="md-cite"
      href={href}
      target="_blank"
      rel="noopener noreferrer"
      title={source.title?.trim() || href}
    >
      {text}
    </a>
  );
}

/** `[1]` as one link, `[1, 3]` as a link per number. */
function renderCitation(numbers: number[], cite: Citations, key: number): ReactNode {
  if (numbers.length === 1) return citationLink(numbers[0] as number, cite, key, `[${numbers[0]}]`);
  const parts: ReactNode[] = ['['];
  numbers.forEach((n, index) => {
    if (index > 0) parts.push(', ');
    parts.push(citationLink(n, cite, index + 1, String(n)));
  });
  parts.push(']');
  return (
    <span key={key} className="md-cite-group">
      {parts}
    </span>
  );
}

export function renderInline(text: string, links = true, cite?: Citations): ReactNode[] {
  const out: ReactNode[] = [];
  let buffer = '';
  const flush = () => {
    if (buffer) out.push(buffer);
    buffer = '';
  };
  const push = (node: (key: number) => ReactNode) => {
    flush();
    out.push(node(out.length));
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '\\' && i + 1 < text.length && PUNCTUATION.test(text[i + 1] as string)) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === '\n') {
      push((key) => <br key={key} />);
      i++;
      continue;
    }
    if (ch === '`') {
      const run = /^`+/.exec(text.slice(i))?.[0] as string;
      let close = text.indexOf(run, i + run.length);
      while (close >= 0 && text[close + run.length] === '`') close = text.indexOf(run, close + run.length + 1);
      if (close >= 0) {
        let code = text.slice(i + run.length, close).replace(/\n/g, ' ');
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1);
        push((key) => <code key={key}>{code}</code>);
        i = close + run.length;
      } else {
        buffer += run;
        i += run.length;
      }
      continue;
    }
    if (links && cite && ch === '[') {
      // Citations side by side ([1][2]) stay together on one line.
      const groups: number[][] = [];
      for (let m = CITATION.exec(text.slice(i)); m; m = CITATION.exec(text.slice(i))) {
        groups.push((m[1] as string).split(',').map((n) => Number(n.trim())));
        i += m[0].length;
      }
      if (groups.length === 1) {
        push((key) => renderCitation(groups[0] as number[], cite, key));
        continue;
      }
      if (groups.length > 1) {
        push((key) => (
          <span key={key} className="md-cite-run">
            {groups.map((numbers, index) => renderCitation(numbers, cite, index))}
          </span>
        ));
        continue;
      }
    }
    if (links && (ch === '[' || (ch === '!' && text[i + 1] === '['))) {
      const image = ch === '!';
      const link = matchLink(text, image ? i + 1 : i);
      if (link) {
        // Images are shown as links: loading remote pictures would tell their hosts who reads the chat.
        const label = image ? link.label || link.href : link.label;
        push((key) => (
          <SafeLink key={key} href={link.href}>
            {renderInline(label, false)}
          </SafeLink>
        ));
        i = link.end;
        continue;
      }
    }
    if (links && ch === '<') {
      const auto = /^<((?:https?|mailto):[^\s<>]+)>/i.exec(text.slice(i));
      if (auto) {
        const href = auto[1] as string;
        push((key) => (
          <SafeLink key={key} href={href}>
            {href.replace(/^mailto:/i, '')}
          </SafeLink>
        ));
        i += auto[0].length;
        continue;
      }
    }
    if (links && (ch === 'h' || ch === 'H' || ch === 'w' || ch === 'W')) {
      const url = matchBareUrl(text, i);
      if (url) {
        const href = /^www\./i.test(url) ? `https://${url}` : url;
        push((key) => (
          <SafeLink key={key} href={href}>
            {url}
          </SafeLink>
        ));
        i += url.length;
        continue;
      }
    }
    if (ch === '~' && text[i + 1] === '~' && !isSpace(text[i + 2])) {
      const close = findCloser(text, i + 2, '~', 2);
      if (close > 0) {
        const inner = text.slice(i + 2, close);
        push((key) => <del key={key}>{renderInline(inner, links, cite)}</del>);
        i = close + 2;
        continue;
      }
    }
    if (ch === '*' || ch === '_') {
      const run = (new RegExp(`^\\${ch}+`).exec(text.slice(i))?.[0] ?? ch).length;
      const opens = !isSpace(text[i + run]) && !(ch === '_' && isWordChar(text[i - 1]));
      if (opens) {
        let done = false;
        for (let n = Math.min(run, 3); n >= 1 && !done; n--) {
          const close = findCloser(text, i + run, ch, n);
          if (close < 0) continue;
          const inner = renderInline(text.slice(i + run, close), links, cite);
          if (run > n) buffer += ch.repeat(run - n);
          push((key) =>
            n === 3 ? (
              <strong key={key}>
                <em>{inner}</em>
              </strong>
            ) : n === 2 ? (
              <strong key={key}>{inner}</strong>
            ) : (
              <em key={key}>{inner}</em>
            ),
          );
          i = close + n;
          done = true;
        }
        if (done) continue;
      }
      buffer += ch.repeat(run);
      i += run;
      continue;
    }
    buffer += ch;
    i++;
  }
  flush();
  return out;
}

// ---- blocks to elements ----

function renderBlocks(blocks: Block[], headingOffset: number, tight = false, cite?: Citations): ReactNode[] {
  const inline = (text: string) => renderInline(text, true, cite);
  return blocks.map((block, key) => {
    switch (block.type) {
      case 'paragraph':
        return tight ? <span key={key}>{inline(block.text)}</span> : <p key={key}>{inline(block.text)}</p>;
      case 'heading':
        return createElement(`h${Math.min(6, block.level + headingOffset)}`, { key }, inline(block.text));
      case 'code':
        return (
          <pre key={key}>
            <code className={block.lang ? `language-${block.lang}` : undefined}>{block.text}</code>
          </pre>
        );
      case 'quote':
        return <blockquote key={key}>{renderBlocks(block.blocks, headingOffset, false, cite)}</blockquote>;
      case 'hr':
        return <hr key={key} />;
      case 'list': {
        const items = block.items.map((content, index) => (
          <li key={index}>{renderBlocks(content, headingOffset, !block.loose, cite)}</li>
        ));
        return block.ordered ? (
          <ol key={key} start={block.start === 1 ? undefined : block.start}>
            {items}
          </ol>
        ) : (
          <ul key={key}>{items}</ul>
        );
      }
      case 'table':
        return (
          <div key={key} className="md-table">
            <table>
              <thead>
                <tr>
                  {block.header.map((cell, c) => (
                    <th key={c} style={block.align[c] ? { textAlign: block.align[c] } : undefined}>
                      {inline(cell)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {block.rows.map((row, r) => (
                  <tr key={r}>
                    {block.header.map((_, c) => (
                      <td key={c} style={block.align[c] ? { textAlign: block.align[c] } : undefined}>
                        {inline(row[c] ?? '')}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
    }
    return null;
  });
}

export const parseMarkdown = (text: string) =>
  parseBlocks(text.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n'));

export interface MarkdownProps {
  text: string;
  /** Added to heading levels, so "# Title" inside a page section is not a second page title. */
  headingOffset?: number;
  className?: string;
  /** Sources that `[n]` citations in the text link to (web pages only, in a new tab). */
  citations?: Citations;
}

export function Markdown({ text, headingOffset = 0, className, citations }: MarkdownProps) {
  const nodes = useMemo(
    () => renderBlocks(parseMarkdown(text), headingOffset, false, citations),
    [text, headingOffset, citations],
  );
  return <div className={className ? `markdown ${className}` : 'markdown'}>{nodes}</div>;
}
