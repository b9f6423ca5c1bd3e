// /resources/daily-message/{id}: one daily message, rendered as markdown, with the web research
// reports it carries and a way to ask about it in the chat.
import { DAILY_MESSAGES, type TDailyMessage, type TResearch } from '@daybook/contracts';
import { useEffect, useId, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { BackToResources, DetailStatus } from '../../components/DetailStatus.tsx';
import { Markdown } from '../../components/Markdown.tsx';
import { ResearchReportView } from '../research/ResearchReportView.tsx';
import { formatDate, headingShift, reportTitle, researchContent } from '../research/report.ts';
import { formatDeliveryDate } from '../resources/format.ts';
import { askInChatPath, getDailyMessage, isNotFound, parseDailyMessageId } from './api.ts';

export const DAILY_NOT_FOUND = DAILY_MESSAGES.notFound;
export const DAILY_LOAD_FAILED = DAILY_MESSAGES.loadFailed;
export const ASK_IN_CHAT = 'Ask about it in the chat';
export const DAILY_EMPTY = 'This message is still being written. It also arrives in your chat when it is ready.';

type Load =
  | { state: 'loading' }
  | { state: 'not-found' }
  | { state: 'error' }
  | { state: 'ready'; message: TDailyMessage };

/** Reports worth showing: the ones with a body (a failed or unfinished research has none). */
const withReport = (reports: readonly TResearch[]) => reports.filter((research) => research.report?.trim());

export function DailyMessagePage() {
  const { id } = useParams();
  // A new id is a new page: nothing of the previous message carries over.
  return <DailyMessageDetail key={id} id={parseDailyMessageId(id)} />;
}

function DailyMessageDetail({ id }: { id: number | null }) {
  const [load, setLoad] = useState<Load>(id === null ? { state: 'not-found' } : { state: 'loading' });
  const [attempt, setAttempt] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` asks again (Try again)
  useEffect(() => {
    if (id === null) return;
    const controller = new AbortController();
    getDailyMessage(id, controller.signal)
      .then((message) => {
        if (!controller.signal.aborted) setLoad({ state: 'ready', message });
      })
      .catch((err: unknown) => {
        if (controller.signal.aborted || (err instanceof Error && err.name === 'AbortError')) return;
        if (isNotFound(err)) return setLoad({ state: 'not-found' });
        console.error('Failed to load the daily message', err);
        setLoad({ state: 'error' });
      });
    return () => controller.abort();
  }, [id, attempt]);

  const message = load.state === 'ready' ? load.message : null;

  return (
    <div className="container page research-page daily-page">
      {/* Not found has its own, bigger way back. */}
      <BackToResources state={load.state} />
      <header className="page-header research-header">
        <div className="research-heading">
          <h1 className="page-title">Daily Message</h1>
          {message && (
            <p className="page-subtitle daily-subtitle">
              Delivered on{' '}
              <time className="daily-date" dateTime={message.delivery_date}>
                {formatDeliveryDate(message.delivery_date)}
              </time>
            </p>
          )}
        </div>
        {message && (
          <Link to={askInChatPath(message.id)} className="btn btn-secondary daily-ask">
            <svg className="daily-ask-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
              <path d="M4 4.5h12a1 1 0 0 1 1 1v7a1 1 0 0 1-1 1H9l-3.5 3v-3H4a1 1 0 0 1-1-1v-7a1 1 0 0 1 1-1Z" />
            </svg>
            {ASK_IN_CHAT}
          </Link>
        )}
      </header>

      <DetailStatus
        state={load.state}
        loadingLabel="Loading the daily message..."
        failed={DAILY_LOAD_FAILED}
        retryLabel="Try again"
        onRetry={() => {
          setLoad({ state: 'loading' });
          setAttempt((n) => n + 1);
        }}
        notFound={DAILY_NOT_FOUND}
        notFoundHint="The link may be wrong, or the message belongs to another account."
      />
      {message && <DailyMessageBody message={message} />}
    </div>
  );
}

function DailyMessageBody({ message }: { message: TDailyMessage }) {
  const researchId = useId();
  const reports = withReport(message.research_reports);
  const text = message.message_text;
  return (
    <>
      <article className="card report daily-message" aria-label="Daily message">
        {text.trim() ? (
          // The message's headings sit under the page's h1, whatever level it starts at.
          <Markdown text={text} className="daily-message-text" headingOffset={headingShift(text, 2)} />
        ) : (
          <p className="muted">{DAILY_EMPTY}</p>
        )}
      </article>
      {reports.length > 0 && (
        <section className="daily-research" aria-labelledby={researchId}>
          <h2 id={researchId} className="daily-research-title">
            Web Research
          </h2>
          {reports.map((research) => (
            <DailyResearch key={research.id} research={research} />
          ))}
        </section>
      )}
    </>
  );
}

function DailyResearch({ research }: { research: TResearch }) {
  const titleId = useId();
  return (
    <section className="daily-report" aria-labelledby={titleId}>
      <header className="daily-report-header">
        <h3 id={titleId} className="daily-report-query">
          {reportTitle(research.query)}
        </h3>
        <time className="daily-report-date" dateTime={research.created}>
          {formatDate(research.created)}
        </time>
      </header>
      <ResearchReportView content={researchContent(research)} mode="full" headingLevel={4} />
    </section>
  );
}
