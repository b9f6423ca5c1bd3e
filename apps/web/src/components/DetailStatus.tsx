// What a history detail page (a daily message, a research report) shows before its content: the
// way back, loading, a load failure with a retry, and not found with its own, bigger way back.
import { Link } from 'react-router-dom';
import { Banner } from './Banner.tsx';
import { Loading } from './Loading.tsx';

export type DetailState = 'loading' | 'error' | 'not-found' | 'ready';

/** The back link above the title; not shown when not found, which has its own. */
export function BackToResources({ state }: { state: DetailState }) {
  if (state === 'not-found') return null;
  return (
    <Link to="/resources" className="back-link">
      <span aria-hidden="true">←</span> Back to resources
    </Link>
  );
}

export interface DetailStatusProps {
  state: DetailState;
  loadingLabel: string;
  failed: string;
  retryLabel: string;
  onRetry: () => void;
  notFound: string;
  /** Why it may not be found: "the report belongs to another account". */
  notFoundHint: string;
}

export function DetailStatus({
  state,
  loadingLabel,
  failed,
  retryLabel,
  onRetry,
  notFound,
  notFoundHint,
}: DetailStatusProps) {
  if (state === 'loading') return <Loading label={loadingLabel} />;
  if (state === 'error')
    return (
      <Banner
        action={
          <button type="button" className="btn btn-secondary btn-sm" onClick={onRetry}>
            {retryLabel}
          </button>
        }
      >
        {failed}
      </Banner>
    );
  if (state === 'not-found')
    return (
      <div className="card research-state">
        <h2 className="research-state-title">{notFound}</h2>
        <p className="muted">{notFoundHint}</p>
        <Link to="/resources" className="btn btn-primary">
          Back to resources
        </Link>
      </div>
    );
  return null;
}
