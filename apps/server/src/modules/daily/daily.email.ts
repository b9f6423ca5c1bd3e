// The daily message as an email: sanitised HTML from the same markdown dialect the web app renders
// (GFM, raw HTML off), one inline-styled template, a plain-text part, and one-click pause headers.
// The message quotes text from the web, so every byte of it passes the sanitiser or is escaped.
import { MONTH_NAMES, WEEKDAY_NAMES } from '@daybook/contracts';
import type { Element, ElementContent, Root as HastRoot, RootContent as HastRootContent, Properties } from 'hast';
import type {
  Node as MdastNode,
  Nodes as MdastNodes,
  Parents as MdastParents,
  Root as MdastRoot,
  PhrasingContent,
} from 'mdast';
import rehypeSanitize, { defaultSchema, type Options as SanitizeSchema } from 'rehype-sanitize';
import rehypeStringify from 'rehype-stringify';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';
import { escapeHtml } from '../../lib/html.ts';

export interface DailyEmailInput {
  markdown: string;
  /** YYYY-MM-DD, the user's local delivery date. */
  deliveryDate: string;
  /** Base for the message's relative links (no trailing slash, as in config). */
  publicUrl: string;
  messageUrl: string;
  chatUrl: string;
  /** Signed one-click pause link; also the List-Unsubscribe target (RFC 8058). */
  pauseUrl: string;
  settingsUrl: string;
}

export interface DailyEmail {
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
}

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

const schema: SanitizeSchema = {
  ...defaultSchema,
  protocols: { ...defaultSchema.protocols, href: ['http', 'https', 'mailto'] },
  // With raw HTML off the only ids are remark-rehype's footnote ids, already prefixed: prefixing
  // them again would break the footnote links.
  clobber: [],
};

/**
 * The absolute address a link in the message may point to, or undefined if it must not be a link.
 * Root-relative links keep publicUrl's path, as every other link the server builds does.
 */
export function safeHref(href: string, publicUrl: string): string | undefined {
  const trimmed = href.trim();
  if (trimmed === '') return undefined;
  // In-message anchors (GFM footnotes) stay as they are.
  if (trimmed.startsWith('#')) return trimmed;
  let url: URL;
  try {
    url =
      trimmed.startsWith('/') && !trimmed.startsWith('//')
        ? new URL(`${publicUrl}${trimmed}`)
        : new URL(trimmed, `${publicUrl}/`);
  } catch {
    return undefined;
  }
  return SAFE_PROTOCOLS.has(url.protocol) ? url.href : undefined;
}

const FONT = "-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";
const INK = '#1c2130';
const MUTED = '#5b6172';
const ACCENT = '#4338ca';
const RULE = '#e3e5ea';
const MONO = "ui-monospace,SFMono-Regular,Menlo,Consolas,'Liberation Mono',monospace";

// Mail clients drop <style> (or rewrite it), so each element carries its own.
const STYLES: Record<string, string> = {
  p: 'margin:0 0 16px;font-size:16px;line-height:1.6',
  h1: `margin:24px 0 12px;font-size:22px;line-height:1.3;font-weight:700;color:${INK}`,
  h2: `margin:24px 0 12px;font-size:19px;line-height:1.3;font-weight:700;color:${INK}`,
  h3: `margin:20px 0 10px;font-size:17px;line-height:1.35;font-weight:700;color:${INK}`,
  h4: `margin:16px 0 8px;font-size:16px;line-height:1.4;font-weight:700;color:${INK}`,
  h5: `margin:16px 0 8px;font-size:15px;line-height:1.4;font-weight:700;color:${INK}`,
  h6: `margin:16px 0 8px;font-size:15px;line-height:1.4;font-weight:700;color:${MUTED}`,
  ul: 'margin:0 0 16px;padding:0 0 0 24px;font-size:16px;line-height:1.6',
  ol: 'margin:0 0 16px;padding:0 0 0 24px;font-size:16px;line-height:1.6',
  li: 'margin:0 0 6px',
  a: `color:${ACCENT};text-decoration:underline`,
  blockquote: `margin:0 0 16px;padding:4px 0 4px 16px;border-left:4px solid ${RULE};color:${MUTED}`,
  code: `font-family:${MONO};font-size:14px;background:#f1f2f5;border-radius:4px;padding:1px 4px`,
  pre: `margin:0 0 16px;padding:12px 14px;background:#f1f2f5;border-radius:8px;overflow-x:auto;font-size:14px;line-height:1.5;white-space:pre-wrap;word-wrap:break-word`,
  table: 'margin:0 0 16px;border-collapse:collapse;font-size:15px;line-height:1.45',
  th: `border:1px solid ${RULE};padding:6px 10px;background:#f6f7f9;font-weight:600;vertical-align:top`,
  td: `border:1px solid ${RULE};padding:6px 10px;vertical-align:top`,
  hr: `border:0;border-top:1px solid ${RULE};margin:24px 0`,
};
const CODE_IN_PRE = `font-family:${MONO};font-size:14px;background:transparent;padding:0`;

const textNode = (value: string): ElementContent => ({ type: 'text', value });
const element = (tagName: string, properties: Properties, children: ElementContent[]): Element => ({
  type: 'element',
  tagName,
  properties,
  children,
});

/**
 * After sanitising: absolute links only, no remote images (loading one would tell a third party who
 * opened the mail), and inline styles.
 */
function rehypeEmail({ publicUrl }: { publicUrl: string }) {
  const origin = new URL(publicUrl).origin;

  const rewrite = (node: Element, parent: Element | undefined, inLink: boolean): ElementContent[] => {
    const children = node.children.flatMap((child) =>
      child.type === 'element' ? rewrite(child, node, inLink || node.tagName === 'a') : [child],
    );
    const props = node.properties;

    if (node.tagName === 'a') {
      const href = typeof props.href === 'string' ? safeHref(props.href, publicUrl) : undefined;
      // A link that may not stay a link keeps its words.
      if (!href) return children;
      const external = /^https?:/.test(href) && new URL(href).origin !== origin;
      return [
        element(
          'a',
          {
            ...props,
            href,
            ...(external ? { target: '_blank', rel: ['noopener', 'noreferrer'] } : {}),
            style: STYLES.a,
          },
          children,
        ),
      ];
    }

    if (node.tagName === 'img') {
      const alt = typeof props.alt === 'string' && props.alt.trim() ? props.alt : 'image';
      const src = typeof props.src === 'string' ? safeHref(props.src, publicUrl) : undefined;
      // A link inside a link is not HTML: an image that is already a link shows its words.
      if (!src || !/^https?:/.test(src) || inLink) return [textNode(alt)];
      return [
        element('a', { href: src, target: '_blank', rel: ['noopener', 'noreferrer'], style: STYLES.a }, [
          textNode(`[${alt}]`),
        ]),
      ];
    }

    // GFM task list boxes: form controls render unpredictably in mail.
    if (node.tagName === 'input') return [textNode(props.checked ? '☑' : '☐')];

    let style = node.tagName === 'code' && parent?.tagName === 'pre' ? CODE_IN_PRE : STYLES[node.tagName];
    // GFM column alignment, as a style since a cell's style wins over its align attribute.
    if (style && (node.tagName === 'th' || node.tagName === 'td'))
      style += `;text-align:${typeof props.align === 'string' ? props.align : 'left'}`;
    return [{ ...node, properties: style ? { ...props, style } : props, children }];
  };

  return (tree: HastRoot) => {
    tree.children = tree.children.flatMap((child): HastRootContent[] =>
      child.type === 'element' ? rewrite(child, undefined, false) : [child],
    );
    // The card has its own padding: no extra gap above the first heading or paragraph.
    const first = tree.children.find((child) => child.type === 'element');
    if (first && typeof first.properties.style === 'string') first.properties.style += ';margin-top:0';
  };
}

// --- Plain text -------------------------------------------------------------------------------

type Definitions = Map<string, string>;

function collectDefinitions(node: MdastNode, into: Definitions): Definitions {
  const n = node as MdastNodes;
  if (n.type === 'definition') into.set(n.identifier, n.url);
  if ('children' in n) for (const child of n.children) collectDefinitions(child, into);
  return into;
}

const bareUrl = (url: string) => url.replace(/^(https?:\/\/|mailto:)/i, '').replace(/\/$/, '');

function linkText(label: string, url: string | undefined): string {
  if (!url || url.startsWith('#')) return label;
  if (label === '') return url;
  // Autolinks (<https://x>, www.x, a@b) already show their address.
  if (bareUrl(label) === bareUrl(url)) return url.startsWith('mailto:') ? label : url;
  return `${label} (${url})`;
}

function indent(block: string, first: string, rest: string): string {
  return block
    .split('\n')
    .map((line, i) => (line === '' ? line : `${i === 0 ? first : rest}${line}`))
    .join('\n');
}

/** Markdown as a person would read it in a plain-text mail: links as "text (url)". */
export function markdownToText(tree: MdastRoot, publicUrl: string): string {
  const definitions = collectDefinitions(tree, new Map());
  const href = (url: string) => safeHref(url, publicUrl);

  const inline = (nodes: PhrasingContent[]): string => nodes.map(phrasing).join('');
  const phrasing = (node: PhrasingContent): string => {
    switch (node.type) {
      case 'text':
        return node.value;
      case 'inlineCode':
        return node.value;
      case 'break':
        return '\n';
      case 'emphasis':
      case 'strong':
        return inline(node.children);
      case 'delete':
        return `~~${inline(node.children)}~~`;
      case 'link':
        return linkText(inline(node.children), href(node.url));
      case 'linkReference': {
        const url = definitions.get(node.identifier);
        return linkText(inline(node.children), url === undefined ? undefined : href(url));
      }
      case 'image':
        return linkText(node.alt ?? '', href(node.url));
      case 'imageReference': {
        const url = definitions.get(node.identifier);
        return linkText(node.alt ?? '', url === undefined ? undefined : href(url));
      }
      case 'footnoteReference':
        return `[${node.label ?? node.identifier}]`;
      default:
        // Raw HTML is dropped here as in the HTML part.
        return '';
    }
  };

  const blocks = (nodes: MdastNodes[], separator = '\n\n'): string =>
    nodes
      .map(block)
      .filter((b) => b !== '')
      .join(separator);

  const block = (node: MdastNodes): string => {
    switch (node.type) {
      case 'paragraph':
        return inline(node.children).trim();
      case 'heading': {
        const title = inline(node.children).trim();
        if (node.depth === 1) return `${title}\n${'='.repeat(Math.max(3, title.length))}`;
        if (node.depth === 2) return `${title}\n${'-'.repeat(Math.max(3, title.length))}`;
        return title;
      }
      case 'thematicBreak':
        return '----';
      case 'blockquote':
        return indent(blocks(node.children), '> ', '> ').replace(/^$/gm, '>');
      case 'code':
        return indent(node.value, '    ', '    ');
      case 'list': {
        const start = node.start ?? 1;
        return node.children
          .map((item, i) => {
            const box = item.checked === true ? '[x] ' : item.checked === false ? '[ ] ' : '';
            const marker = node.ordered ? `${start + i}. ` : '- ';
            const body = blocks(item.children, item.spread ? '\n\n' : '\n');
            return indent(`${box}${body}`, marker, ' '.repeat(marker.length));
          })
          .join(node.spread ? '\n\n' : '\n');
      }
      case 'table': {
        const rows = node.children.map((row) => row.children.map((cell) => inline(cell.children).trim()));
        const widths: number[] = [];
        for (const row of rows)
          for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
        const line = (row: string[]) =>
          row
            .map((cell, i) => cell.padEnd(widths[i] ?? 0))
            .join(' | ')
            .trimEnd();
        const [head, ...body] = rows;
        if (!head) return '';
        return [line(head), widths.map((w) => '-'.repeat(Math.max(w, 1))).join('-|-'), ...body.map(line)].join('\n');
      }
      case 'footnoteDefinition':
        return indent(blocks(node.children), `[${node.label ?? node.identifier}] `, '    ');
      case 'root':
        return blocks(node.children);
      default:
        // definitions (used by references above) and raw HTML
        return '';
    }
  };

  return block(tree);
}

// --- The mail ---------------------------------------------------------------------------------

/** "Tuesday, 24 November" from 2026-11-24: a calendar date, so no time zone may move it. */
export function formatDeliveryDate(deliveryDate: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(deliveryDate);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
  if (!date || date.toISOString().slice(0, 10) !== deliveryDate) throw new Error(`not a date: ${deliveryDate}`);
  return `${WEEKDAY_NAMES[date.getUTCDay()]}, ${date.getUTCDate()} ${MONTH_NAMES[date.getUTCMonth()]}`;
}

function requireHttpUrl(name: string, value: string): string {
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {}
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(`${name} must be an absolute http(s) URL`);
  return value;
}

const button = (label: string, url: string, primary: boolean) =>
  `<a href="${escapeHtml(url)}" style="display:inline-block;margin:0 8px 8px 0;padding:11px 18px;border-radius:8px;font-family:${FONT};font-size:15px;font-weight:600;line-height:1.2;text-decoration:none;${
    primary
      ? `background:${ACCENT};color:#ffffff;border:1px solid ${ACCENT}`
      : `background:#ffffff;color:${ACCENT};border:1px solid #c7cbe0`
  }">${escapeHtml(label)}</a>`;

const footerLink = (label: string, url: string) =>
  `<a href="${escapeHtml(url)}" style="color:${MUTED};text-decoration:underline">${escapeHtml(label)}</a>`;

const FOOTER_NOTE = 'You get this because daily emails are on in your Daybook settings.';

/**
 * A line ending inside a paragraph is a line break, as the app shows the same message (its
 * Markdown component turns each one into a <br>); plain markdown would join the lines with a space.
 */
export function remarkLineBreaks() {
  return (tree: MdastRoot) => {
    const walk = (parent: MdastParents) => {
      const children: MdastNodes[] = [];
      for (const child of parent.children as MdastNodes[]) {
        if (child.type === 'text' && child.value.includes('\n')) {
          child.value.split(/\r?\n/).forEach((line, index) => {
            if (index > 0) children.push({ type: 'break' });
            if (line) children.push({ type: 'text', value: index > 0 ? line.trimStart() : line });
          });
          continue;
        }
        if ('children' in child) walk(child);
        children.push(child);
      }
      parent.children = children as never;
    };
    walk(tree);
  };
}

export async function renderDailyEmail(input: DailyEmailInput): Promise<DailyEmail> {
  const publicUrl = requireHttpUrl('publicUrl', input.publicUrl).replace(/\/+$/, '');
  const chatUrl = requireHttpUrl('chatUrl', input.chatUrl);
  const messageUrl = requireHttpUrl('messageUrl', input.messageUrl);
  const pauseUrl = requireHttpUrl('pauseUrl', input.pauseUrl);
  const settingsUrl = requireHttpUrl('settingsUrl', input.settingsUrl);
  const day = formatDeliveryDate(input.deliveryDate);
  const subject = `Your daily message for ${day}`;

  const processor = unified()
    .use(remarkParse)
    .use(remarkGfm)
    .use(remarkLineBreaks)
    .use(remarkRehype, { allowDangerousHtml: false })
    .use(rehypeSanitize, schema)
    .use(rehypeEmail, { publicUrl })
    .use(rehypeStringify);
  const mdast = processor.parse(input.markdown);
  const messageText = markdownToText(mdast, publicUrl);
  const messageHtml = processor.stringify(await processor.run(mdast));

  // The inbox preview line; hidden in the opened mail.
  const preview = messageText
    // A heading runs into its section as "Weather in Lisbon: Light rain…", not "Lisbon Light rain".
    .replace(/^(.*\S)\n[=-]{3,}$/gm, (_m, h: string) => (/[.:!?]$/.test(h) ? h : `${h}:`))
    .replace(/^[=-]{3,}$/gm, '')
    .replace(/ \((?:https?|mailto):[^\s)]*\)/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 140);

  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="supported-color-schemes" content="light">
<title>${escapeHtml(subject)}</title>
</head>
<body style="margin:0;padding:0;background:#f4f5f7;-webkit-text-size-adjust:100%">
<div style="display:none;max-height:0;max-width:0;overflow:hidden;opacity:0;mso-hide:all;font-size:1px;line-height:1px;color:#f4f5f7">${escapeHtml(preview)}</div>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="width:100%;background:#f4f5f7">
<tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="width:100%;max-width:600px">
<tr><td style="padding:0 4px 14px;font-family:${FONT};font-size:18px;font-weight:700;color:${INK}">Daybook<span style="font-weight:400;color:${MUTED};font-size:15px">&nbsp;&middot; ${escapeHtml(day)}</span></td></tr>
<tr><td style="background:#ffffff;border:1px solid ${RULE};border-radius:12px;padding:28px 28px 20px;font-family:${FONT};font-size:16px;line-height:1.6;color:${INK};word-wrap:break-word;overflow-wrap:anywhere">
${messageHtml}
<div style="margin:24px 0 0;padding:20px 0 0;border-top:1px solid ${RULE}">${button('Open in Daybook', chatUrl, true)}${button('View in your history', messageUrl, false)}</div>
</td></tr>
<tr><td style="padding:18px 4px 0;font-family:${FONT};font-size:13px;line-height:1.6;color:${MUTED}">
<p style="margin:0 0 6px">${escapeHtml(FOOTER_NOTE)}</p>
<p style="margin:0">${footerLink('Pause daily messages', pauseUrl)} &nbsp;&middot;&nbsp; ${footerLink('Change delivery time or turn off email', settingsUrl)}</p>
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`;

  const text = [
    `Daybook · ${day}`,
    messageText,
    `Open in Daybook: ${chatUrl}\nView in your history: ${messageUrl}`,
    `--\n${FOOTER_NOTE}\nPause daily messages: ${pauseUrl}\nChange delivery time or turn off email: ${settingsUrl}`,
  ].join('\n\n');

  return {
    subject,
    html,
    text: `${text}\n`,
    headers: {
      'List-Unsubscribe': `<${pauseUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}
