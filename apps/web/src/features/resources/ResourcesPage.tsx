// /resources: the user's history of daily messages and web research reports, 15 to a page.
import type { TResourceItem } from '@daybook/contracts';
import { useId, useRef } from 'react';
import { Link } from 'react-router-dom';
import { Banner } from '../../components/Banner.tsx';
import { Loading } from '../../components/Loading.tsx';
import { formatDateTime, itemPath, itemTitle, previewText, statusLabel, TYPE_LABELS } from './format.ts';
import { useResources } from './useResources.ts';

export const LOAD_FAILED = 'Failed to load your resources. Please try again later.';
export const EMPTY_TITLE = 'No resources found';

export function ResourcesPage() {
  const resources = useResources();
  const { page, items } = resources;
  const headingRef = useRef<HTMLHeadingElement>(null);
  const headingId = useId();

  function goToPage(next: number) {
    resources.setPage(next);
    // Keyboard and screen reader users continue from the top of the new page, as everyone else does.
    headingRef.current?.focus({ preventScroll: true });
    headingRef.current?.scrollIntoView?.({ block: 'start' });
  }

  const empty = items !== null && items.length === 0 && page === 1;

  return (
    <div className="container page resources-page">
      <header className="page-header">
        <h1 className="page-title">Your Resources</h1>
        <p className="page-subtitle">View your daily messages and web research reports.</p>
      </header>

      {resources.showFailure && (
        <div className="resources-banner">
          <Banner
            onDismiss={resources.dismissFailure}
            action={
              <button type="button" className="btn btn-secondary btn-sm" onClick={resources.retry}>
                Retry
              </button>
            }
          >
            {LOAD_FAILED}
          </Banner>
        </div>
      )}

      {empty ? (
        <EmptyState />
      ) : (
        !resources.loadFailed && (
          <section className="resources-list-section" aria-labelledby={headingId}>
            <div className="resources-toolbar">
              <h2 id={headingId} ref={headingRef} className="resources-list-title" tabIndex={-1}>
                All resources<span className="visually-hidden">, page {page}</span>
              </h2>
              <p className="resources-count" aria-live="polite">
                {resources.count}
              </p>
            </div>
            {items === null ? (
              <Loading label="Loading your resources..." />
            ) : (
              <ul className="resource-list">
                {items.map((item) => (
                  <li key={`${item.resource_type}-${item.id}`}>
                    <ResourceCard item={item} />
                  </li>
                ))}
              </ul>
            )}
            {(resources.hasPrevious || resources.hasNext) && (
              <nav className="resources-pager" aria-label="Resource pages">
                <button
                  type="button"
                  className="btn btn-secondary btn-sm resources-pager-step"
                  disabled={!resources.hasPrevious}
                  onClick={() => goToPage(page - 1)}
                >
                  <span aria-hidden="true">←</span> Previous
                </button>
                <span className="resources-pager-page">Page {page}</span>
                <button
                  type="button"
                  className="btn btn-secondary btn-sm resources-pager-step"
                  disabled={!resources.hasNext}
                  onClick={() => goToPage(page + 1)}
                >
                  Next <span aria-hidden="true">→</span>
                </button>
              </nav>
            )}
          </section>
        )
      )}
      {resources.loadFailed && !resources.showFailure && (
        <p className="resources-retry">
          <button type="button" className="btn btn-secondary btn-sm" onClick={resources.retry}>
            Try loading again
          </button>
        </p>
      )}
    </div>
  );
}

function TypeIcon({ type }: { type: TResourceItem['resource_type'] }) {
  return type === 'daily_message' ? (
    <svg className="resource-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
      <circle cx="10" cy="10" r="3.5" />
      <path d="M10 2.5v2M10 15.5v2M2.5 10h2M15.5 10h2M4.7 4.7l1.4 1.4M13.9 13.9l1.4 1.4M4.7 15.3l1.4-1.4M13.9 6.1l1.4-1.4" />
    </svg>
  ) : (
    <svg className="resource-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
      <circle cx="8.5" cy="8.5" r="5.5" />
      <path d="m13 13 4.5 4.5" />
    </svg>
  );
}

function ResourceCard({ item }: { item: TResourceItem }) {
  const titleId = useId();
  const status = statusLabel(item);
  const preview = item.resource_type === 'daily_message' && item.preview ? previewText(item.preview) : '';
  return (
    <article className={`resource-card resource-card-${item.resource_type}`} aria-labelledby={titleId}>
      <div className="resource-main">
        <p className="resource-meta">
          <span className={`resource-type resource-type-${item.resource_type}`}>
            <TypeIcon type={item.resource_type} />
            {TYPE_LABELS[item.resource_type]}
          </span>
          <time className="resource-date" dateTime={item.sort_date}>
            {formatDateTime(item.sort_date)}
          </time>
          {status && <span className={`resource-status resource-status-${status.tone}`}>{status.text}</span>}
        </p>
        <h3 id={titleId} className="resource-title">
          {itemTitle(item)}
        </h3>
        {preview && <p className="resource-preview">{preview}</p>}
      </div>
      <Link className="btn btn-secondary btn-sm resource-open" to={itemPath(item)} aria-describedby={titleId}>
        {item.resource_type === 'daily_message' ? 'View Message' : 'View Report'}
      </Link>
    </article>
  );
}

function EmptyState() {
  return (
    <div className="card resources-empty">
      <svg className="resources-empty-icon" viewBox="0 0 48 48" aria-hidden="true" focusable="false">
        <rect x="9" y="7" width="30" height="34" rx="5" />
        <path d="M16 17h16M16 24h16M16 31h9" />
      </svg>
      <h2 className="resources-empty-title">{EMPTY_TITLE}</h2>
      <p className="muted">
        Your daily messages and web research reports will appear here. Ask Daybook to research something in the chat to
        get your first report.
      </p>
      <Link to="/chat" className="btn btn-primary">
        Start Chatting
      </Link>
    </div>
  );
}
