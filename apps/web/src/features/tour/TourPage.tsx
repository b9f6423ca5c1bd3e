// The demo tour: a scripted chat between Maya (a sample user) and Daybook, with a sidebar that
// explains each step. /guest-tour ends on Home; /demo-tour (after signup) leads to onboarding.
import {
  type CSSProperties,
  Fragment,
  type ReactNode,
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { CollapsibleMarkdown, formatTime } from '../chat/ChatMessage.tsx';
import { ResearchReport } from '../research/ResearchReportView.tsx';
import { parseReport } from '../research/report.ts';
import { DIM_MS, type TourClock, type TourState, type TourVisibleMessage, visibleText } from './tour.engine.ts';
import { TOUR_NAMES, TOUR_SCRIPT, type TourStage } from './tour.script.ts';
import { prefersReducedMotion, readTimeScale, useTour } from './useTour.ts';

export type TourMode = 'guest' | 'new-user';

const TITLES: Record<TourMode, { title: string; subtitle: string }> = {
  guest: { title: 'Guest Tour', subtitle: 'See what Daybook does, in two minutes.' },
  'new-user': { title: 'Demo Tour', subtitle: 'Welcome aboard! Here is what Daybook does before you start.' },
};

/** Within this distance of the end the transcript counts as scrolled to the bottom. */
const BOTTOM_SLACK_PX = 48;

export interface TourPageProps {
  mode: TourMode;
  /** Test seams; by default the real clock, Math.random, the user's motion setting and the test-only time scale. */
  script?: readonly TourStage[];
  clock?: TourClock;
  random?: () => number;
  reducedMotion?: boolean;
  timeScale?: number;
}

const isFormField = (element: Element | null) =>
  element instanceof HTMLElement &&
  (element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName));

/** Enter on these does its own thing (follows a link, presses a button). */
const handlesEnter = (target: EventTarget | null) =>
  target instanceof Element &&
  (isFormField(target) || target.closest('a[href], button, summary, [role="button"], [role="link"]') !== null);

const plain = (markdown: string) =>
  markdown
    .replace(/^#+\s*/gm, '')
    .replace(/^\s*[-*]\s+/gm, '')
    .replace(/[*_`]/g, '');

/** What screen readers hear when a message has finished. */
function describe(item: TourVisibleMessage): string {
  const { message } = item;
  const name = TOUR_NAMES[message.author];
  if (message.message_type === 'task_notification_final') return message.text;
  if (message.message_type === 'research_report') {
    const report = parseReport(message.text);
    return `${name} shared a research report${report?.query ? `: ${report.query}` : ''}.`;
  }
  return `${name}: ${plain(message.text)}`;
}

function CheckIcon() {
  return (
    <svg className="tour-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
      <path
        d="M16.7 5.3a1 1 0 0 1 0 1.4l-7.5 7.5a1 1 0 0 1-1.4 0L3.3 9.7a1 1 0 1 1 1.4-1.4l3.8 3.8 6.8-6.8a1 1 0 0 1 1.4 0Z"
        fill="currentColor"
      />
    </svg>
  );
}

function TourProgress({ stageIndex, stageCount }: { stageIndex: number; stageCount: number }) {
  return (
    <div className="tour-progress" aria-hidden="true">
      {Array.from({ length: stageCount }, (_, index) => (
        <span
          // biome-ignore lint/suspicious/noArrayIndexKey: one segment per stage, in order
          key={index}
          className={`tour-progress-segment${index <= stageIndex ? ' is-done' : ''}`}
        />
      ))}
    </div>
  );
}

function TourMessageRow({ item, past }: { item: TourVisibleMessage; past: boolean }) {
  const { message } = item;
  const name = TOUR_NAMES[message.author];
  const dim = past ? ' is-past' : '';
  if (message.message_type === 'task_notification_final') {
    return (
      <div className={`tour-message tour-notification-row${dim}`}>
        <p className="chat-notification is-final tour-notification">
          <CheckIcon />
          <span>{message.text}</span>
        </p>
      </div>
    );
  }
  const human = message.author === 'human';
  const wide = !human && (message.message_type === 'research_report' || message.message_type === 'markdown');
  const typing = !item.done;
  const time = formatTime(new Date(item.at).toISOString());
  let body: ReactNode;
  if (message.message_type === 'research_report') body = <ResearchReport raw={message.text} />;
  else if (message.message_type === 'markdown' && !human) body = <CollapsibleMarkdown text={message.text} />;
  else
    body = (
      <p className="chat-text">
        {visibleText(message.text, item.shown)}
        {typing && <span className="tour-caret" aria-hidden="true" />}
      </p>
    );
  return (
    <article
      className={`chat-row chat-row-${human ? 'human' : 'assistant'} is-new tour-message${dim}`}
      aria-label={`${name} said`}
      aria-busy={typing || undefined}
    >
      <div className={`chat-bubble${wide ? ' chat-bubble-wide' : ''}`}>{body}</div>
      <div className="chat-meta">
        {typing ? (
          <span className="tour-typing-label">{name} is typing...</span>
        ) : (
          <>
            <span className="tour-author">{name}</span> · <time dateTime={new Date(item.at).toISOString()}>{time}</time>
          </>
        )}
      </div>
    </article>
  );
}

function TourTranscript({ state, script }: { state: TourState; script: readonly TourStage[] }) {
  const stages = script.slice(0, state.stageIndex + 1);
  return (
    <>
      {stages.map((stage, index) => (
        <Fragment key={stage.id}>
          {index > 0 && (
            <p className={`tour-divider${index < state.stageIndex ? ' is-past' : ''}`}>
              <span>{stage.title}</span>
            </p>
          )}
          {state.messages
            .filter((item) => item.stageIndex === index)
            .map((item) => (
              <TourMessageRow key={item.key} item={item} past={index < state.stageIndex} />
            ))}
        </Fragment>
      ))}
      {state.typing && (
        <div className="chat-row chat-row-assistant is-new tour-message">
          <div className="chat-bubble chat-typing" role="img" aria-label={`${TOUR_NAMES.assistant} is typing`}>
            <span className="chat-typing-dot" />
            <span className="chat-typing-dot" />
            <span className="chat-typing-dot" />
          </div>
        </div>
      )}
    </>
  );
}

function hint(state: TourState, mode: TourMode) {
  if (state.continueEnabled) {
    if (!state.isLastStage) return 'Press Enter or Continue for the next step.';
    return mode === 'new-user'
      ? 'Next: a short chat so Daybook can get to know you.'
      : 'That is the tour. Thanks for watching!';
  }
  return state.stageComplete
    ? 'Take a moment to read...'
    : `${TOUR_NAMES.human} and ${TOUR_NAMES.assistant} are chatting...`;
}

export function TourPage({ mode, script = TOUR_SCRIPT, clock, random, reducedMotion, timeScale }: TourPageProps) {
  const navigate = useNavigate();
  // Read once: switching either mid-tour would restart it.
  const [motion] = useState(() => reducedMotion ?? prefersReducedMotion());
  const [scale] = useState(() => timeScale ?? readTimeScale());
  const { state, advance } = useTour({ script, clock, random, reducedMotion: motion, timeScale: scale });
  const stage = script[state.stageIndex];
  const newUser = mode === 'new-user';
  const { title, subtitle } = TITLES[mode];

  const stateRef = useRef(state);
  stateRef.current = state;
  const listRef = useRef<HTMLElement>(null);
  const followRef = useRef(true);
  const continueRef = useRef<HTMLButtonElement>(null);

  const onContinue = useCallback(() => {
    const current = stateRef.current;
    if (!current.continueEnabled) return;
    if (current.isLastStage) {
      navigate(newUser ? '/onboarding' : '/');
      return;
    }
    followRef.current = true;
    advance();
  }, [advance, navigate, newUser]);

  // Enter continues, unless it belongs to a field, link or button that has focus.
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== 'Enter' || event.defaultPrevented || event.repeat || event.isComposing) return;
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (handlesEnter(event.target) || !stateRef.current.continueEnabled) return;
      event.preventDefault();
      onContinue();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [onContinue]);

  // Keyboard users land on Continue when it turns on, unless they are busy in a field, the transcript
  // (e.g. reading the report) or an open menu of the navigation bar.
  useEffect(() => {
    if (!state.continueEnabled) return;
    const active = document.activeElement;
    if (isFormField(active) || (active && listRef.current?.contains(active))) return;
    if (document.querySelector('.navbar [aria-expanded="true"]')) return;
    continueRef.current?.focus();
  }, [state.continueEnabled]);

  // Follow the newest message unless the reader has scrolled up.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs whenever the transcript grows
  useLayoutEffect(() => {
    const list = listRef.current;
    if (list && followRef.current) list.scrollTop = list.scrollHeight;
  }, [state.messages, state.typing, state.stageIndex]);

  // A resize (rotating a phone, narrowing the window) re-wraps the text: stay at the newest message.
  useEffect(() => {
    const list = listRef.current;
    if (!list || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (followRef.current) list.scrollTop = list.scrollHeight;
    });
    observer.observe(list);
    return () => observer.disconnect();
  }, []);

  // On a short screen the sidebar scrolls: bring the features this stage adds into view.
  const sidebarRef = useRef<HTMLElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the stage changes
  useEffect(() => {
    const fresh = sidebarRef.current?.querySelectorAll('.tour-features .is-new');
    const last = fresh?.[fresh.length - 1];
    if (last && typeof last.scrollIntoView === 'function') last.scrollIntoView({ block: 'nearest' });
  }, [state.stageIndex]);

  const onScroll = () => {
    const list = listRef.current;
    if (list) followRef.current = list.scrollHeight - list.scrollTop - list.clientHeight < BOTTOM_SLACK_PX;
  };

  if (!stage) return null;
  const step = `Step ${state.stageIndex + 1} of ${state.stageCount}`;
  const features = script
    .slice(0, state.stageIndex + 1)
    .flatMap((s, index) => s.features.map((feature) => ({ feature, fresh: index === state.stageIndex })));
  const lastDone = [...state.messages].reverse().find((item) => item.done);
  const announcement =
    lastDone && lastDone.stageIndex === state.stageIndex ? describe(lastDone) : `${step}: ${stage.title}`;
  const buttonLabel = state.isLastStage ? (newUser ? 'Start Onboarding' : 'Finish Tour') : 'Continue';
  const style = { '--tour-dim-ms': `${motion ? 0 : DIM_MS * scale}ms` } as CSSProperties;

  return (
    <div className={`tour-page${motion ? ' is-reduced-motion' : ''}`} style={style}>
      <header className="tour-header">
        <div className="tour-header-inner">
          <div className="tour-title-row">
            <h1 className="tour-title">{title}</h1>
            <span className="tour-badge">Sample conversation</span>
          </div>
          <p className="tour-subtitle">{subtitle}</p>
        </div>
      </header>

      <div className="tour-layout">
        <aside ref={sidebarRef} className="tour-sidebar" aria-label="Tour guide">
          <p className="tour-step">{step}</p>
          <TourProgress stageIndex={state.stageIndex} stageCount={state.stageCount} />
          <h2 className="tour-stage-title">{stage.title}</h2>
          <p className="tour-explanation">{stage.explanation}</p>
          <h3 className="tour-features-title">Key Features</h3>
          <ul className="tour-features">
            {features.map(({ feature, fresh }) => (
              <li key={feature} className={fresh ? 'is-new' : undefined}>
                <CheckIcon />
                <span>{feature}</span>
              </li>
            ))}
          </ul>
        </aside>

        <section className="tour-chat" aria-label="Sample conversation">
          <div className="tour-progress-compact">
            <p>
              <strong>{step}</strong>
              <span aria-hidden="true"> · </span>
              <span>{stage.title}</span>
            </p>
            <TourProgress stageIndex={state.stageIndex} stageCount={state.stageCount} />
          </div>
          <section
            ref={listRef}
            className="tour-scroll"
            onScroll={onScroll}
            aria-label="Tour messages"
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region takes focus so the keyboard can scroll it (WCAG 2.1.1)
            tabIndex={0}
          >
            <div className="chat-thread tour-thread">
              <TourTranscript state={state} script={script} />
            </div>
          </section>
          <p className="visually-hidden" aria-live="polite" aria-atomic="true">
            {announcement}
          </p>
          <div className="tour-controls">
            <div className="tour-controls-inner">
              <p className="tour-hint">{hint(state, mode)}</p>
              <div className="tour-actions">
                {newUser && !state.isLastStage && (
                  <Link to="/onboarding" className="btn btn-ghost tour-skip">
                    Start Onboarding
                  </Link>
                )}
                <button
                  ref={continueRef}
                  type="button"
                  className="btn btn-primary tour-continue"
                  disabled={!state.continueEnabled}
                  onClick={onContinue}
                >
                  {buttonLabel}
                </button>
              </div>
            </div>
          </div>
        </section>
      </div>
    </div>
  );
}

export const GuestTourScreen = () => <TourPage mode="guest" />;
export const DemoTourScreen = () => <TourPage mode="new-user" />;
