// Markdown through react-markdown and GFM (remark-gfm's syntax): the dialect the server's daily email uses (GFM, raw
// HTML never rendered: it shows as text). React elements only, never HTML strings; only http(s), mailto
// and tel links (or relative ones) become links. Optionally, citations such as [2] or [1, 3] link to
// the numbered sources they name.
import type { Element as HastElement, Root as HastRoot } from 'hast';
import type { Nodes as MdastNodes, Parents as MdastParents, Root as MdastRoot, PhrasingContent } from 'mdast';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';
import { createContext, type ReactNode, useContext, useId, useMemo } from 'react';
import ReactMarkdown, { type Components, type ExtraProps } from 'react-markdown';
import remarkParse from 'remark-parse';
import { type Processor, unified } from 'unified';
import { CopyButton } from './CopyButton.tsx';

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

/** Numbered sources that `[n]` citations point at (n counts from 1). */
export type Citations = readonly { url: string; title?: string | undefined }[];

// ---- parsing (the same remark-parse + GFM as the renderer and the server's email) ----

/** A top-level block of a document, as far as callers need to know (heading levels). */
export type Block =
  | { type: 'heading'; level: number }
  | { type: Exclude<MdastRoot['children'][number]['type'], 'heading'> };

/**
 * remark-gfm without its markdown writer: what it adds to the parser, word for word. The app only
 * reads markdown, and the writer (mdast-util-to-markdown and GFM's serialisers) would be a tenth of
 * the chat's code, loaded and run on every chat page for nothing.
 */
function remarkGfm(this: Processor) {
  const data = this.data();
  data.micromarkExtensions = [...(data.micromarkExtensions ?? []), gfm()];
  data.fromMarkdownExtensions = [...(data.fromMarkdownExtensions ?? []), gfmFromMarkdown()];
}

const parser = unified().use(remarkParse).use(remarkGfm);

/** The document's top-level blocks. */
export const parseMarkdown = (text: string): Block[] =>
  parser.parse(text).children.map((node) => (node.type === 'heading' ? { type: 'heading', level: node.depth } : node));

// ---- remark: citations, line breaks, www. links ----

const CITATION = /\[(\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*)\](?!\()/g;

// Nodes the renderer knows only by their data.hName (mdast-util-to-hast's fallback for unknown types).
const span = (className: string, children: PhrasingContent[]): PhrasingContent =>
  ({ type: 'citation', data: { hName: 'span', hProperties: { className: [className] } }, children }) as never;

/** A citation's link: only to a web page (a model's source list must never yield javascript: or a local path). */
function citationLink(n: number, cite: Citations, text: string): PhrasingContent {
  const source = cite[n - 1];
  const href = source && /^https?:\/\//i.test(source.url.trim()) ? safeHref(source.url) : null;
  if (!source || href === null) return { type: 'text', value: text };
  return {
    type: 'link',
    url: href,
    data: { hProperties: { className: ['md-cite'], title: source.title?.trim() || href } },
    children: [{ type: 'text', value: text }],
  };
}

/** `[1]` as one link, `[1, 3]` as a link per number. */
function citation(numbers: number[], cite: Citations): PhrasingContent {
  if (numbers.length === 1) return citationLink(numbers[0] as number, cite, `[${numbers[0]}]`);
  const parts: PhrasingContent[] = [{ type: 'text', value: '[' }];
  numbers.forEach((n, index) => {
    if (index > 0) parts.push({ type: 'text', value: ', ' });
    parts.push(citationLink(n, cite, String(n)));
  });
  parts.push({ type: 'text', value: ']' });
  return span('md-cite-group', parts);
}

/** A text's citations as links; citations side by side ([1][2]) stay together on one line. */
function splitCitations(value: string, cite: Citations): PhrasingContent[] {
  const out: PhrasingContent[] = [];
  let last = 0;
  let run: PhrasingContent[] = [];
  const flushRun = () => {
    if (run.length === 1) out.push(run[0] as PhrasingContent);
    else if (run.length > 1) out.push(span('md-cite-run', run));
    run = [];
  };
  for (const m of value.matchAll(CITATION)) {
    const start = m.index;
    if (start > last) {
      flushRun();
      out.push({ type: 'text', value: value.slice(last, start) });
    }
    run.push(
      citation(
        (m[1] as string).split(',').map((n) => Number(n.trim())),
        cite,
      ),
    );
    last = start + m[0].length;
  }
  flushRun();
  if (last < value.length) out.push({ type: 'text', value: value.slice(last) });
  return out;
}

/** A text's line endings as line breaks, as a chat shows them. */
function splitLines(node: PhrasingContent): PhrasingContent[] {
  if (node.type !== 'text' || !node.value.includes('\n')) return [node];
  const out: PhrasingContent[] = [];
  node.value.split(/\r?\n/).forEach((line, index) => {
    if (index > 0) out.push({ type: 'break' });
    if (line) out.push({ type: 'text', value: index > 0 ? line.trimStart() : line });
  });
  return out;
}

function remarkDaybook(this: unknown, { citations }: { citations?: Citations | undefined }) {
  return (tree: MdastRoot, file: { value: unknown }) => {
    const source = String(file.value);
    const walk = (parent: MdastParents, inLink: boolean) => {
      const children: MdastNodes[] = [];
      for (const child of parent.children as MdastNodes[]) {
        if (child.type === 'text') {
          const parts = citations && !inLink ? splitCitations(child.value, citations) : [child];
          children.push(...parts.flatMap(splitLines));
          continue;
        }
        // GFM links a bare www.example.com over http: https, as everywhere else in the app.
        const start = child.position?.start.offset;
        if (child.type === 'link' && start !== undefined && /^www\./i.test(source.slice(start, start + 4))) {
          child.url = child.url.replace(/^http:/i, 'https:');
        }
        if ('children' in child) walk(child, inLink || child.type === 'link' || child.type === 'linkReference');
        children.push(child);
      }
      parent.children = children as never;
    };
    walk(tree, false);
  };
}

// ---- rehype: ids unique to each rendered text ----

/** GFM footnotes' ids get this text's prefix; "footnote-label" would otherwise repeat on a page of messages. */
function rehypeFootnoteLabel(this: unknown, { prefix }: { prefix: string }) {
  return (tree: HastRoot) => {
    const walk = (node: HastRoot | HastElement) => {
      for (const child of node.children) {
        if (child.type !== 'element') continue;
        const props = child.properties;
        if (props.id === 'footnote-label') props.id = `${prefix}footnote-label`;
        if (Array.isArray(props.ariaDescribedBy)) {
          props.ariaDescribedBy = props.ariaDescribedBy.map((id) => (id === 'footnote-label' ? `${prefix}${id}` : id));
        }
        walk(child);
      }
    };
    walk(tree);
  };
}

// ---- elements ----

/** Inside a link, an image must not become a second link. */
const InLink = createContext(false);

const urlTransform = (url: string) => safeHref(url) ?? undefined;

type Props<T extends keyof React.JSX.IntrinsicElements> = React.JSX.IntrinsicElements[T] & ExtraProps;

function Anchor({ node: _node, href, target: _target, rel: _rel, children, ...rest }: Props<'a'>) {
  const safe = href === undefined ? null : safeHref(href);
  // An unsafe link keeps its words as text.
  if (safe === null) return <span className="md-unsafe-link">{children}</span>;
  // The rest comes from remark-rehype alone (raw HTML never reaches the tree): footnotes' ids and labels.
  const newTab = rest.className === 'md-cite' || isExternal(safe);
  return (
    <InLink.Provider value={true}>
      <a {...rest} href={safe} {...(newTab ? { target: '_blank', rel: 'noopener noreferrer' } : {})}>
        {children}
      </a>
    </InLink.Provider>
  );
}

/** Images are shown as links: loading remote pictures would tell their hosts who reads the chat. */
function Image({ src, alt }: Props<'img'>) {
  const inLink = useContext(InLink);
  const href = typeof src === 'string' ? src : '';
  const label = alt || href;
  if (inLink || !href) return <>{label}</>;
  return <SafeLink href={href}>{label}</SafeLink>;
}

function Code({ node: _node, className, children }: Props<'code'>) {
  // A fenced block's text ends with the newline before its closing fence.
  const text = typeof children === 'string' && children.endsWith('\n') ? children.slice(0, -1) : children;
  const lang = /^language-([\w+#.-]+)$/.exec(className ?? '')?.[1];
  return <code className={lang ? `language-${lang}` : undefined}>{text}</code>;
}

/** The text of a hast element, as a code block shows it. */
function textOf(node: HastElement | HastRoot | HastElement['children'][number]): string {
  if (node.type === 'text') return node.value;
  if (!('children' in node)) return '';
  return node.children.map((child) => textOf(child as HastElement)).join('');
}

/** A code block with a Copy button for its text. */
function Pre({ node, children, ...rest }: Props<'pre'>) {
  const code = node ? textOf(node).replace(/\n$/, '') : '';
  return (
    <div className="md-pre">
      <pre {...rest}>{children}</pre>
      {code && <CopyButton text={code} label="Copy code" className="copy-button md-pre-copy" />}
    </div>
  );
}

/** A table in a wrapper that scrolls sideways when it is wider than the text, reachable by Tab to scroll with the keys. */
function Table({ node: _node, children }: Props<'table'>) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keyboard
    // biome-ignore lint/a11y/useSemanticElements: a fieldset is for form controls; this groups a table
    <div className="md-table" role="group" aria-label="Table" tabIndex={0}>
      <table>{children}</table>
    </div>
  );
}

/** A task list's box: read-only, and named, since its item's text is not its label. */
function Input({ type, checked }: Props<'input'>) {
  if (type !== 'checkbox') return null;
  return <input type="checkbox" checked={Boolean(checked)} disabled aria-label={checked ? 'Done' : 'To do'} />;
}

function headings(offset: number): Components {
  const out: Components = {};
  for (let level = 1; level <= 6; level++) {
    const Tag = `h${Math.min(6, level + offset)}` as 'h1';
    out[`h${level}` as 'h1'] = ({ node: _node, ...props }: Props<'h1'>) => <Tag {...props} />;
  }
  return out;
}

const components: Components = { a: Anchor, img: Image, code: Code, pre: Pre, table: Table, input: Input };

export interface MarkdownProps {
  text: string;
  /** Added to heading levels, so "# Title" inside a page section is not a second page title. */
  headingOffset?: number;
  className?: string;
  /** Sources that `[n]` citations in the text link to (web pages only, in a new tab). */
  citations?: Citations;
}

export function Markdown({ text, headingOffset = 0, className, citations }: MarkdownProps) {
  const prefix = `md${useId().replace(/[^\w-]/g, '')}-`;
  const options = useMemo(
    () => ({
      remarkPlugins: [remarkGfm, [remarkDaybook, { citations }]] as never,
      rehypePlugins: [[rehypeFootnoteLabel, { prefix }]] as never,
      // The app's own class for text only screen readers see.
      remarkRehypeOptions: { clobberPrefix: prefix, footnoteLabelProperties: { className: ['visually-hidden'] } },
      components: headingOffset ? { ...components, ...headings(headingOffset) } : components,
    }),
    [citations, headingOffset, prefix],
  );
  // The same element while nothing changed, so React skips parsing again.
  const rendered = useMemo(
    () => (
      <ReactMarkdown {...options} urlTransform={urlTransform}>
        {text}
      </ReactMarkdown>
    ),
    [options, text],
  );
  return <div className={className ? `markdown ${className}` : 'markdown'}>{rendered}</div>;
}
