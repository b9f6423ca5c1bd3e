// A research report as the screens show it, from either source: the chat message's JSON or the API.
import { type TResearch, type TResearchReport, ZResearchReport } from '@daybook/contracts';
import { parseMarkdown } from '../../components/Markdown.tsx';
import { reportTitle } from './title.ts';

export interface ReportSource {
  url: string;
  title?: string | undefined;
}

export interface ReportContent {
  /** The research's id: the report has a page of its own. */
  id?: number | undefined;
  query?: string | undefined;
  /** ISO 8601. */
  created?: string | undefined;
  introduction?: string | null | undefined;
  /** The body. */
  report: string;
  conclusion?: string | null | undefined;
  sources: readonly ReportSource[];
}

/** A research_report message's raw_text, or null when it is not a report. */
export function parseReport(raw: string): TResearchReport | null {
  try {
    const parsed = ZResearchReport.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** A finished research from the API as report content. */
export const researchContent = (research: TResearch): ReportContent => ({
  id: research.id,
  query: research.query,
  created: research.created,
  introduction: research.introduction,
  report: research.report ?? '',
  conclusion: research.conclusion,
  sources: research.sources,
});

export { capitalize, reportTitle } from './title.ts';

/** Only web pages are linked: a source list written by a model must never yield javascript: or a local path. */
export const isWebUrl = (url: string) => /^https?:\/\//i.test(url.trim());

/** The host of a source, without "www.", for showing beside its title. */
export function sourceHost(url: string): string {
  try {
    return new URL(url.trim()).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
}

/** How far to move the text's headings so its biggest one becomes `target` (a model may start at # or ###). */
export function headingShift(text: string, target: number): number {
  let smallest = 7;
  for (const block of parseMarkdown(text)) if (block.type === 'heading') smallest = Math.min(smallest, block.level);
  return smallest === 7 ? target - 1 : target - smallest;
}

/** A formatter made on first use, not as the module loads (an engine's first date format costs a phone tens of ms). */
const formatWith = (options: Intl.DateTimeFormatOptions) => {
  let format: Intl.DateTimeFormat | undefined;
  return (iso: string) => {
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return iso;
    format ??= new Intl.DateTimeFormat(undefined, options);
    return format.format(date);
  };
};

export const formatDate = formatWith({ dateStyle: 'long' });
export const formatDateTime = formatWith({ dateStyle: 'medium', timeStyle: 'short' });

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Headings of `text` moved so the biggest is `level` (fenced code left alone), to sit under the copy's title. */
function shiftHeadings(text: string, level: number): string {
  const shift = headingShift(text, level);
  if (shift <= 0) return text;
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const marker = FENCE.exec(line)?.[1];
      if (fence !== null) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
        return line;
      }
      if (marker) {
        fence = marker;
        return line;
      }
      return line.replace(
        /^( {0,3})(#{1,6})(?=[ \t])/,
        (_, indent: string, hashes: string) => indent + '#'.repeat(Math.min(6, hashes.length + shift)),
      );
    })
    .join('\n');
}

/** Square brackets in a link label would end it early. */
const escapeLabel = (text: string) => text.replace(/([[\]\\])/g, '\\$1');

/** The whole report as one markdown document: title, introduction, body, conclusion and numbered sources. */
export function reportMarkdown(content: ReportContent): string {
  const parts = [`# ${reportTitle(content.query, 'Web Research Report')}`];
  if (content.created) parts.push(`_Web research, ${formatDate(content.created)}_`);
  if (content.introduction?.trim()) parts.push(shiftHeadings(content.introduction.trim(), 2));
  if (content.report.trim()) parts.push(shiftHeadings(content.report.trim(), 2));
  if (content.conclusion?.trim()) parts.push('## Conclusion', shiftHeadings(content.conclusion.trim(), 3));
  if (content.sources.length) {
    const list = content.sources.map((source, index) => {
      const url = source.url.trim();
      const title = source.title?.trim();
      return `${index + 1}. ${title ? `[${escapeLabel(title)}](<${url}>)` : `<${url}>`}`;
    });
    parts.push('## Sources', list.join('\n'));
  }
  return `${parts.join('\n\n')}\n`;
}
