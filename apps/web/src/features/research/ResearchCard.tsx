// A research asked for in the chat, while it waits or runs: where it stands (its four steps, the
// searches, pages read), with Cancel. Every tab shows the same card, after a reload too; its outcome
// (the report, or a note) takes its place when it arrives.
import type { TResearchCard, TResearchStage } from '@daybook/contracts';
import { useId } from 'react';

export const CANCEL_RESEARCH = 'Cancel';
export const CANCELLING = 'Cancelling…';

const STEPS = [
  { stage: 'planning', label: 'Plan' },
  { stage: 'searching', label: 'Search' },
  { stage: 'reading', label: 'Read' },
  { stage: 'writing', label: 'Write' },
] as const;

/** What the card says of a stage, in a few words. */
export function stageText(card: TResearchCard): string {
  const step = stepText(card);
  return card.waiting_for_model ? `${step}: waiting for the assistant model, which is busy` : step;
}

function stepText(card: TResearchCard): string {
  switch (card.stage) {
    case 'queued':
      return card.retrying ? 'Waiting to try again' : 'Waiting for your earlier research to finish';
    case 'planning':
      return 'Planning the searches';
    case 'searching':
      return 'Searching the web';
    case 'reading':
      return card.pages ? `Reading pages: ${card.pages.done} of ${card.pages.total}` : 'Reading pages';
    case 'writing':
      return 'Writing the report';
    case 'done':
      return 'Finished: the report follows';
    case 'failed':
      return 'The research failed';
    case 'cancelled':
      return 'Cancelled';
  }
}

const headingOf = (stage: TResearchStage) =>
  stage === 'queued' ? 'Research waiting' : stage === 'failed' ? 'Research failed' : 'Researching';

const stepIndex = (stage: TResearchStage) => STEPS.findIndex((s) => s.stage === stage);

export function ResearchCard({
  card,
  cancelling,
  canCancel,
  onCancel,
  onCancelFocus,
}: {
  card: TResearchCard;
  /** Cancel was pressed here; the card waits for the server to say it is cancelled. */
  cancelling: boolean;
  /** False while the connection is down: the request could not go out. */
  canCancel: boolean;
  onCancel(): void;
  /** Cancel took or lost focus (the chat moves focus on when the button goes away with it). */
  onCancelFocus?(focused: boolean): void;
}) {
  const titleId = useId();
  const kickerId = useId();
  const ended = card.stage === 'done' || card.stage === 'failed' || card.stage === 'cancelled';
  const current = stepIndex(card.stage);
  const reading = card.stage === 'reading' && card.pages && card.pages.total > 0 ? card.pages : null;
  return (
    <section className={`research-card is-${card.stage}`} aria-labelledby={`${kickerId} ${titleId}`}>
      <div className="research-card-head">
        <div className="research-card-titles">
          <p id={kickerId} className="research-card-kicker">
            {headingOf(card.stage)}
          </p>
          <h3 id={titleId} className="research-card-title">
            {card.query}
          </h3>
        </div>
        {!ended && (
          <button
            type="button"
            className="btn btn-secondary btn-sm research-card-cancel"
            aria-disabled={cancelling || !canCancel || undefined}
            aria-describedby={titleId}
            onFocus={() => onCancelFocus?.(true)}
            onBlur={() => onCancelFocus?.(false)}
            onClick={() => {
              if (!cancelling && canCancel) onCancel();
            }}
          >
            {cancelling ? CANCELLING : CANCEL_RESEARCH}
          </button>
        )}
      </div>
      {card.stage !== 'queued' && card.stage !== 'cancelled' && card.stage !== 'failed' && (
        <ol className="research-steps" aria-label="Steps">
          {STEPS.map((step, i) => {
            const state = card.stage === 'done' || i < current ? 'done' : i === current ? 'current' : 'todo';
            return (
              <li
                key={step.stage}
                className={`research-step is-${state}`}
                aria-current={state === 'current' ? 'step' : undefined}
              >
                <span className="research-step-dot" aria-hidden="true" />
                {step.label}
                {state === 'done' && <span className="visually-hidden"> (done)</span>}
              </li>
            );
          })}
        </ol>
      )}
      {/* Read out when the step changes, not at every page: the count is on screen and in the bar. */}
      <p className="visually-hidden" role="status">
        {`${card.query}: ${card.stage === 'reading' ? 'Reading pages' : stageText(card)}`}
      </p>
      <p className="research-card-status" aria-hidden="true">
        {!ended && card.stage !== 'queued' && <span className="spinner spinner-sm" />}
        {stageText(card)}
      </p>
      {reading && (
        <progress
          className="research-card-progress"
          max={reading.total}
          value={reading.done}
          aria-label={`Pages read: ${reading.done} of ${reading.total}`}
        />
      )}
      {card.stage === 'failed' && card.error && <p className="research-card-error">{card.error}</p>}
      {card.queries.length > 0 && !ended && (
        <ul className="research-card-queries" aria-label="Searches">
          {card.queries.map((q) => (
            <li key={q} className="research-card-query">
              {q}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
