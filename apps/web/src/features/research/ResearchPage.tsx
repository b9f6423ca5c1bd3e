// /resources/research/{id}: one research report, rendered in full, with its sources. While the
// research runs the page says so and asks again every few seconds.
import type { TResearch } from '@daybook/contracts';
import { useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { BackToResources, DetailStatus } from '../../components/DetailStatus.tsx';
import { ApiError } from '../../lib/api.ts';
import { getResearch } from './api.ts';
import { ResearchReportView } from './ResearchReportView.tsx';
import { formatDate, reportMarkdown, reportTitle, researchContent } from './report.ts';

export const RESEARCH_NOT_FOUND = 'Research report not found';
export const RESEARCH_LOAD_FAILED = 'Failed to load the research report. Please try again later.';
export const RESEARCH_RUNNING = 'This research is still running…';
export const RESEARCH_FAILED = 'This research failed';
export const RESEARCH_CANCELLED = 'This research was cancelled';
export const COPY_LABEL = 'Copy as markdown';
export const COPIED = 'Copied';
export const COPY_FAILED = 'Could not copy. Your browser did not allow it.';
/** How often a running research is asked about again. */
export const RESEARCH_POLL_MS = 4000;
/** How long "Copied" stays. */
const COPIED_MS = 2500;

type Load =
  | { state: 'loading' }
  | { state: 'not-found' }
  | { state: 'error' }
  | { state: 'ready'; research: TResearch };

const isRunning = (research: TResearch) => research.status === 'queued' || research.status === 'running';

/** Only positive whole numbers name a research; anything else is not found without asking. */
function parseId(raw: string | undefined): number | null {
  if (!raw || !/^\d{1,15}$/.test(raw)) return null;
  const id = Number(raw);
  return id > 0 ? id : null;
}

export interface ResearchPageProps {
  /** Test seam: how often a running research is asked about again. */
  pollMs?: number;
}

export function ResearchPage({ pollMs = RESEARCH_POLL_MS }: ResearchPageProps) {
  const { id } = useParams();
  // A new id is a new page: nothing of the previous report carries over.
  return <ResearchDetail key={id} id={parseId(id)} pollMs={pollMs} />;
}

function ResearchDetail({ id, pollMs }: { id: number | null; pollMs: number }) {
  const [load, setLoad] = useState<Load>(id === null ? { state: 'not-found' } : { state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` asks again (retry, or the next poll)
  useEffect(() => {
    if (id === null) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () => {
      timer = setTimeout(() => setAttempt((n) => n + 1), pollMs);
    };
    getResearch(id, controller.signal)
      .then((research) => {
        setLoad({ state: 'ready', research });
        if (isRunning(research)) poll();
      })
      .catch((err: unknown) => {
        if (err instanceof Error && err.name === 'AbortError') return;
        if (err instanceof ApiError && err.status === 404) return setLoad({ state: 'not-found' });
        // A running report already on screen stays; the next poll may well succeed.
        if (loadRef.current.state === 'ready') {
          console.error('Failed to refresh the research report', err);
          return poll();
        }
        setLoad({ state: 'error' });
      });
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [id, attempt, pollMs]);

  const research = load.state === 'ready' ? load.research : null;

  return (
    <div className="container page research-page">
      <BackToResources state={load.state} />
      <header className="page-header research-header">
        <div className="research-heading">
          <h1 className="page-title">Web Research Report</h1>
          {research && (
            <p className="page-subtitle research-subtitle">
              <span className="research-query">{reportTitle(research.query)}</span>{' '}
              <time className="research-date" dateTime={research.created}>
                {formatDate(research.created)}
              </time>
            </p>
          )}
        </div>
        {research?.status === 'done' && <CopyButton research={research} />}
      </header>

      <DetailStatus
        state={load.state}
        loadingLabel="Loading the report..."
        failed={RESEARCH_LOAD_FAILED}
        retryLabel="Retry"
        onRetry={() => {
          setLoad({ state: 'loading' });
          setAttempt((n) => n + 1);
        }}
        notFound={RESEARCH_NOT_FOUND}
        notFoundHint="The link may be wrong, or the report belongs to another account."
      />
      {research && <ResearchBody research={research} />}
    </div>
  );
}

function ResearchBody({ research }: { research: TResearch }) {
  if (isRunning(research)) {
    const { found, read } = research.counts;
    return (
      <div className="card research-state research-running" role="status">
        <span className="spinner" aria-hidden="true" />
        <div>
          <h2 className="research-state-title">{RESEARCH_RUNNING}</h2>
          <p className="muted">
            {research.status === 'queued'
              ? 'It starts as soon as your earlier research is done.'
              : found > 0
                ? `Read ${read} of ${found} pages found so far.`
                : 'Daybook is searching the web and reading what it finds.'}{' '}
            This page updates by itself, and the report also arrives in your chat.
          </p>
        </div>
      </div>
    );
  }
  if (research.status === 'cancelled') {
    return (
      <div className="card research-state research-cancelled" role="status">
        <h2 className="research-state-title">{RESEARCH_CANCELLED}</h2>
        <p className="muted">It was stopped before it wrote a report. You can ask for it again in the chat.</p>
        <Link to="/chat" className="btn btn-secondary">
          Go to Chat
        </Link>
      </div>
    );
  }
  if (research.status === 'failed') {
    return (
      <div className="card research-state research-failed" role="alert">
        <h2 className="research-state-title">{RESEARCH_FAILED}</h2>
        <p>{research.error?.trim() || 'The research could not be completed.'}</p>
        <p className="muted">You can ask for it again in the chat.</p>
        <Link to="/chat" className="btn btn-secondary">
          Go to Chat
        </Link>
      </div>
    );
  }
  return (
    <>
      {research.counts.read > 0 && <p className="research-meta">{basedOn(research.counts)}</p>}
      <ResearchReportView content={researchContent(research)} mode="full" />
    </>
  );
}

/** Copies the whole report as markdown, and says so (or says why not). */
function CopyButton({ research }: { research: TResearch }) {
  const [result, setResult] = useState<'copied' | 'failed' | null>(null);
  useEffect(() => {
    if (result !== 'copied') return;
    const timer = setTimeout(() => setResult(null), COPIED_MS);
    return () => clearTimeout(timer);
  }, [result]);

  async function copy() {
    try {
      if (!navigator.clipboard) throw new Error('No clipboard');
      await navigator.clipboard.writeText(reportMarkdown(researchContent(research)));
      setResult('copied');
    } catch (err) {
      console.error('Copying the report failed', err);
      setResult('failed');
    }
  }

  return (
    <div className="copy-report">
      <button type="button" className="btn btn-secondary" onClick={() => void copy()}>
        <svg className="copy-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
          <rect x="7" y="7" width="10" height="10" rx="2" />
          <path d="M13 4.5V4a1 1 0 0 0-1-1H4a1 1 0 0 0-1 1v8a1 1 0 0 0 1 1h.5" />
        </svg>
        {COPY_LABEL}
      </button>
      <span className={`copy-status${result === 'failed' ? ' is-error' : ''}`} role="status">
        {result === 'copied' ? COPIED : result === 'failed' ? COPY_FAILED : ''}
      </span>
    </div>
  );
}

const pages = (n: number) => `${n} ${n === 1 ? 'page' : 'pages'}`;

/** "Based on 3 pages Daybook read; 1 more could not be read." */
export function basedOn({ read, failed }: TResearch['counts']): string {
  const base = `Based on ${pages(read)} Daybook read`;
  return failed > 0
    ? `${base}; ${failed} more could not be read (they refused, were too large, or were not web pages).`
    : `${base}.`;
}
