// One research report component for the chat message (collapsible) and the report's own page (full).
// Citations [n] in the introduction, body and conclusion link to the n-th source.
import { useId, useState } from 'react';
import { Link } from 'react-router-dom';
import { Markdown } from '../../components/Markdown.tsx';
import {
  headingShift,
  isWebUrl,
  parseReport,
  type ReportContent,
  type ReportSource,
  reportTitle,
  sourceHost,
} from './report.ts';

export const REPORT_ERROR = 'Error displaying research report';
export const OPEN_REPORT = 'Open report';

export const researchPagePath = (id: number) => `/resources/research/${id}`;

function SourceLink({ source }: { source: ReportSource }) {
  const url = source.url.trim();
  const label = source.title?.trim() || url;
  if (!isWebUrl(url)) return <span className="report-source-title">{label}</span>;
  return (
    <a href={url} target="_blank" rel="noopener noreferrer">
      {label}
    </a>
  );
}

function SourceList({
  sources,
  labelledBy,
  full,
}: {
  sources: readonly ReportSource[];
  labelledBy: string;
  full: boolean;
}) {
  return (
    <ol className={full ? 'report-sources' : 'chat-report-sources'} aria-labelledby={labelledBy}>
      {sources.map((source, index) => {
        const host = full ? sourceHost(source.url) : '';
        const titled = Boolean(source.title?.trim());
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: sources may repeat a URL; their place is their number
          <li key={index}>
            <SourceLink source={source} />
            {host && titled && <span className="report-source-host">{host}</span>}
          </li>
        );
      })}
    </ol>
  );
}

export interface ResearchReportViewProps {
  content: ReportContent;
  /** `collapsible`: the chat's message (introduction, then See the full report). `full`: the report's page. */
  mode: 'collapsible' | 'full';
  /** Full mode: the level of its section headings (2 on the report's page; deeper where it sits under other headings). */
  headingLevel?: 2 | 3 | 4 | 5;
}

export function ResearchReportView({ content, mode, headingLevel = 2 }: ResearchReportViewProps) {
  const [expanded, setExpanded] = useState(false);
  const id = useId();
  const cite = content.sources;
  // The page's sections sit under its h1; the chat's under the report's h3 title.
  const level = mode === 'full' ? headingLevel : 4;
  const Heading = `h${level}` as 'h2' | 'h3' | 'h4' | 'h5';
  const markdown = (text: string, className?: string) => (
    <Markdown text={text} className={className} headingOffset={headingShift(text, level)} citations={cite} />
  );
  const sections = (
    <>
      {content.report.trim() && markdown(content.report, mode === 'full' ? 'report-body' : undefined)}
      {content.conclusion?.trim() && (
        <section className={mode === 'full' ? 'report-section' : 'chat-report-section'} aria-labelledby={`${id}-end`}>
          <Heading id={`${id}-end`}>Conclusion</Heading>
          {markdown(content.conclusion)}
        </section>
      )}
      {content.sources.length > 0 && (
        <section className={mode === 'full' ? 'report-section' : 'chat-report-section'}>
          <Heading id={`${id}-sources`}>Sources</Heading>
          <SourceList sources={content.sources} labelledBy={`${id}-sources`} full={mode === 'full'} />
        </section>
      )}
    </>
  );

  if (mode === 'full') {
    return (
      <article className="card report">
        {content.introduction?.trim() && markdown(content.introduction, 'report-intro')}
        {sections}
      </article>
    );
  }

  return (
    <section className="chat-report" aria-labelledby={`${id}-title`}>
      <p className="chat-report-kicker">Web research</p>
      <h3 id={`${id}-title`} className="chat-report-title">
        {reportTitle(content.query)}
      </h3>
      {content.introduction?.trim() && markdown(content.introduction, 'chat-report-intro')}
      {expanded && (
        <div id={`${id}-body`} className="chat-report-body">
          {sections}
        </div>
      )}
      <div className="report-actions">
        <button
          type="button"
          className="chat-link-button"
          aria-expanded={expanded}
          aria-controls={`${id}-body`}
          onClick={() => setExpanded((value) => !value)}
        >
          {expanded ? 'Collapse' : 'See the full report'}
        </button>
        {content.id !== undefined && (
          <Link className="chat-link-button report-open-link" to={researchPagePath(content.id)}>
            {OPEN_REPORT}
          </Link>
        )}
      </div>
    </section>
  );
}

/** A research_report message: its raw_text is the report as JSON. */
export function ResearchReport({ raw }: { raw: string }) {
  const report = parseReport(raw);
  if (!report) return <p className="chat-report-error">{REPORT_ERROR}</p>;
  return <ResearchReportView content={report} mode="collapsible" />;
}
