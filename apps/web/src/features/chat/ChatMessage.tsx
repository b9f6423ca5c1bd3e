// One item of the message list: bubbles for human and assistant text, plain system lines,
// collapsible markdown and research reports (the report component lives with the research feature).
import { ANSWER_STOPPED, RESEARCH_CANCELLED_LEAD } from '@daybook/contracts';
import { type FocusEvent, type ReactNode, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { CopyButton } from '../../components/CopyButton.tsx';
import { Markdown } from '../../components/Markdown.tsx';
import { formatFullDate, formatTime } from '../../lib/dates.ts';
import { ResearchReport } from '../research/ResearchReportView.tsx';
import type { ChatItem } from './chat.state.ts';
import { outcomeOf } from './research.cards.ts';

export { formatTime };

export const SENDING = 'sending...';
/** Under a message sent while the connection was lost: it goes out once it is back. */
export const WAITING_FOR_CONNECTION = 'waiting for connection...';
/** Under a message that waits while earlier ones are answered. */
export const QUEUED = 'waiting for the answers before it...';
/** The button on a note in place of an answer: the question is answered again. */
export const RETRY = 'Retry';
export const REGENERATE = 'Regenerate';
/** On the note about a research that failed or was cancelled: its page. */
export const RESEARCH_DETAILS = 'Details';
export const answerVersion = (n: number, of: number) => `Answer ${n} of ${of}`;
/** An answer stopped before its first word. */
export const STOPPED_EMPTY = 'You stopped this answer before it began.';
/** "Over about 12 lines" of rendered text collapse. */
export const COLLAPSE_LINES = 12;
/** Roughly how many characters fit on one line of a bubble. */
const CHARS_PER_LINE = 80;

/** Fewer characters than fit on a line of the narrowest bubble (a 320 px phone fits about 30). */
const NARROWEST_CHARS_PER_LINE = 20;

/** About how many lines `text` takes: its line breaks plus wrapping of long lines. */
export function estimateLines(text: string, charsPerLine = CHARS_PER_LINE): number {
  return text
    .trimEnd()
    .split('\n')
    .reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / charsPerLine)), 0);
}

/**
 * Whether `text` stays well under the fold on any screen: wrapped as on the narrowest bubble, with
 * every blank line a line of its own, it takes at most two thirds of the lines (the rest is room for
 * headings, list and table spacing). Such an answer is never measured: measuring reads the layout,
 * which a history of 50 answers would otherwise force at once, in the middle of its first render.
 */
export function surelyShort(text: string): boolean {
  return estimateLines(text, NARROWEST_CHARS_PER_LINE) * 3 <= COLLAPSE_LINES * 2;
}

/**
 * Markdown that collapses past about 12 lines. The lines are measured as laid out (a phone wraps
 * more), with the text estimate as fallback.
 *
 * One rule, after streaming as after a reload: a long answer is folded. The only exception is the
 * answer that streamed in while the user watched: it stays open (folding it away mid-read would be
 * jarring) and offers Collapse, but only while it is the latest message. Once the conversation
 * moves on (the user's next message, or any newer one) it folds like every other long answer,
 * unless the user opened or closed it themselves, which stands.
 */
export function CollapsibleMarkdown({
  text,
  streaming = false,
  latest = true,
}: {
  text: string;
  streaming?: boolean;
  latest?: boolean;
}) {
  const [expanded, setExpanded] = useState(streaming);
  /** The user opened or closed it (button, or focus moving into the clipped part): their choice stands. */
  const chosenRef = useRef(false);
  const id = useId();
  const bodyRef = useRef<HTMLDivElement>(null);
  /** What received focus inside the clipped part, to bring into view once it opens. */
  const focusedRef = useRef<HTMLElement | null>(null);
  const [measured, setMeasured] = useState<boolean | null>(null);
  const long = !streaming && (measured ?? estimateLines(text) > COLLAPSE_LINES);
  const collapsed = long && !expanded;

  useLayoutEffect(() => {
    const body = bodyRef.current;
    // While streaming it never collapses: no layout reads for every piece.
    if (!body || streaming || surelyShort(text)) return;
    const measure = () => {
      // No layout (e.g. a test DOM): keep the estimate.
      if (!body.scrollHeight) return;
      const style = getComputedStyle(body);
      const line = Number.parseFloat(style.lineHeight) || Number.parseFloat(style.fontSize) * 1.55;
      setMeasured(body.scrollHeight > (COLLAPSE_LINES + 0.5) * line);
    };
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(body);
    return () => observer.disconnect();
  }, [text, streaming]);

  useEffect(() => {
    if (!latest && !chosenRef.current) setExpanded(false);
  }, [latest]);

  // Links and code blocks in the clipped part stay in the tab order: reaching one opens the answer,
  // so what has focus is always visible.
  const onFocus = (event: FocusEvent<HTMLDivElement>) => {
    if (!collapsed) return;
    focusedRef.current = event.target;
    chosenRef.current = true;
    setExpanded(true);
  };

  useLayoutEffect(() => {
    const body = bodyRef.current;
    if (!body) return;
    // The clipped box never keeps a scroll offset (browsers without `overflow: clip` scroll it to show focus).
    body.scrollTop = 0;
    const focused = focusedRef.current;
    focusedRef.current = null;
    if (expanded && focused) focused.scrollIntoView?.({ block: 'nearest' });
  }, [expanded]);

  return (
    <div className="chat-collapsible">
      {/* biome-ignore lint/a11y/noStaticElementInteractions: it only notices focus moving into its own links; it is not a control */}
      <div
        id={id}
        ref={bodyRef}
        className={collapsed ? 'chat-collapsible-body is-collapsed' : 'chat-collapsible-body'}
        onFocus={onFocus}
        onScroll={(event) => {
          if (collapsed) event.currentTarget.scrollTop = 0;
        }}
      >
        <Markdown text={text} headingOffset={2} />
      </div>
      {long && (
        <button
          type="button"
          className="chat-link-button"
          aria-expanded={expanded}
          aria-controls={id}
          onClick={() => {
            chosenRef.current = true;
            setExpanded((value) => !value);
          }}
        >
          {expanded ? 'Collapse' : 'Read more...'}
        </button>
      )}
    </div>
  );
}

function Body({ item, latest }: { item: ChatItem; latest: boolean }) {
  if (item.message_type === 'research_report') return <ResearchReport raw={item.raw_text} />;
  if (item.stopped && !item.raw_text.trim()) return <p className="chat-text chat-stopped-empty">{STOPPED_EMPTY}</p>;
  if (item.message_type === 'markdown' && item.author_type !== 'human') {
    return <CollapsibleMarkdown text={item.raw_text} streaming={item.streaming} latest={latest} />;
  }
  return <p className="chat-text">{item.raw_text}</p>;
}

export interface AskAgain {
  disabled: boolean;
  onClick(): void;
}

export function StopIcon() {
  return (
    <svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false" className="chat-stop-icon">
      <rect x="3" y="3" width="10" height="10" rx="2" fill="currentColor" />
    </svg>
  );
}

function RetryIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path
        d="M13.5 8a5.5 5.5 0 1 1-1.7-4M13.5 2v3.5H10"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.6"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}

/** A button that stays focusable while it cannot act (aria-disabled): focus is never lost from it. */
function ActionButton({ action, className, children }: { action: AskAgain; className: string; children: ReactNode }) {
  return (
    <button
      type="button"
      className={className}
      aria-disabled={action.disabled || undefined}
      onClick={() => {
        if (!action.disabled) action.onClick();
      }}
    >
      {children}
    </button>
  );
}

/**
 * A message's time: the full date on hover (title), for screen readers (the hidden text, left out
 * of a copied selection), and on a tap (touch screens have no hover); the day separator shows it too.
 */
function TimeStamp({ timestamp, time, full }: { timestamp: string; time: string; full: string }) {
  const [open, setOpen] = useState(false);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: keyboard and screen reader users have the full date as text; the tap is for touch
    // biome-ignore lint/a11y/useKeyWithClickEvents: as above, nothing here needs a key
    <time
      dateTime={timestamp}
      title={full || undefined}
      className={`chat-time${open ? ' is-open' : ''}`}
      onClick={() => setOpen((was) => !was)}
    >
      <span aria-hidden={full ? true : undefined}>{open && full ? full : time}</span>
      {full && <span className="visually-hidden chat-time-full">{full}</span>}
    </time>
  );
}

export function ChatMessage({
  item,
  highlighted = false,
  onAskAgain,
  onRegenerate,
  live = true,
  latest = true,
  version,
}: {
  item: ChatItem;
  highlighted?: boolean;
  /** A note in place of an answer: offers to answer the question again (Retry). */
  onAskAgain?: AskAgain;
  /** The latest answer: offers another answer to the same question. */
  onRegenerate?: AskAgain;
  /**
   * False while the connection is down: a streaming answer shows no cursor (it is not being written
   * here), and a message not yet echoed waits for the connection.
   */
  live?: boolean;
  /** The newest message in the list: an answer that streamed in here stays open only while it is. */
  latest?: boolean;
  /** One of several answers to its question (Regenerate): which one. */
  version?: { n: number; of: number };
}) {
  const anchor = item.message_id === null ? undefined : `message-${item.message_id}`;
  const research = item.message_type === 'system_message' ? outcomeOf(item) : null;
  if (research !== null) {
    const cancelled = item.raw_text.startsWith(RESEARCH_CANCELLED_LEAD);
    return (
      <p id={anchor} className={`chat-research-note${cancelled ? '' : ' is-failed'}`}>
        <span>{item.raw_text}</span>
        <Link to={`/resources/research/${research}`}>{RESEARCH_DETAILS}</Link>
      </p>
    );
  }
  if (item.message_type === 'system_message' || (item.message_type === 'redirect' && item.raw_text.trim())) {
    return (
      <p id={anchor} className="chat-system">
        {item.raw_text}
        {onAskAgain && (
          <>
            {' '}
            <ActionButton action={onAskAgain} className="btn btn-secondary btn-sm chat-retry">
              <RetryIcon />
              {RETRY}
            </ActionButton>
          </>
        )}
      </p>
    );
  }
  if (item.message_type === 'redirect') return null;
  const human = item.author_type === 'human';
  const time = item.timestamp ? formatTime(item.timestamp) : '';
  const full = item.timestamp ? formatFullDate(item.timestamp) : '';
  const wide = item.message_type === 'research_report' || item.message_type === 'markdown';
  const answer = !human && item.message_type === 'markdown' && !item.streaming && item.message_id !== null;
  return (
    <article
      id={anchor}
      className={`chat-row chat-row-${human ? 'human' : 'assistant'}${item.arrived ? ' is-new' : ''}${highlighted ? ' is-highlighted' : ''}`}
      aria-label={human ? 'You said' : 'Assistant said'}
    >
      <div className={`chat-bubble${wide ? ' chat-bubble-wide' : ''}${item.streaming && live ? ' is-streaming' : ''}`}>
        <Body item={item} latest={latest} />
      </div>
      {!item.streaming && (
        <div className="chat-meta">
          {item.timestamp === null ? (
            <span className="chat-sending">{live ? SENDING : WAITING_FOR_CONNECTION}</span>
          ) : (
            <TimeStamp timestamp={item.timestamp} time={time} full={full} />
          )}
          {version && <span className="chat-version"> · {answerVersion(version.n, version.of)}</span>}
          {item.queued && <span className="chat-sending"> · {QUEUED}</span>}
          {item.stopped && (
            <span className="chat-stopped">
              <StopIcon /> {ANSWER_STOPPED}
            </span>
          )}
          {answer && (
            <span className="chat-actions">
              {item.raw_text.trim() && <CopyButton text={item.raw_text} label="Copy" className="chat-action" />}
              {onRegenerate && (
                <ActionButton action={onRegenerate} className="chat-action">
                  <RetryIcon />
                  <span className="copy-button-label">{REGENERATE}</span>
                </ActionButton>
              )}
            </span>
          )}
        </div>
      )}
    </article>
  );
}
