// One item of the message list: bubbles for human and assistant text, plain system lines,
// collapsible markdown and research reports (the report component lives with the research feature).
import { type FocusEvent, useId, useLayoutEffect, useRef, useState } from 'react';
import { Markdown } from '../../components/Markdown.tsx';
import { ResearchReport } from '../research/ResearchReportView.tsx';
import type { ChatItem } from './chat.state.ts';

export const SENDING = 'sending...';
/** Under a message that waits while earlier ones are answered. */
export const QUEUED = 'waiting for the answers before it...';
export const ASK_AGAIN = 'Ask again';
/** "Over about 12 lines" of rendered text collapse. */
export const COLLAPSE_LINES = 12;
/** Roughly how many characters fit on one line of a bubble. */
const CHARS_PER_LINE = 80;

/** 12-hour clock in local time, e.g. "3:07 PM"; empty for an unreadable time stamp. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const hours = date.getHours();
  const minutes = String(date.getMinutes()).padStart(2, '0');
  return `${hours % 12 || 12}:${minutes} ${hours < 12 ? 'AM' : 'PM'}`;
}

/** About how many lines `text` takes: its line breaks plus wrapping of long lines. */
export function estimateLines(text: string): number {
  return text
    .trimEnd()
    .split('\n')
    .reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / CHARS_PER_LINE)), 0);
}

/**
 * Markdown that collapses past about 12 lines. The lines are measured as laid out (a phone wraps
 * more), with the text estimate as fallback. An answer that streamed in while the user watched
 * stays open (folding it away mid-read would be jarring) and offers Collapse once it is complete.
 */
export function CollapsibleMarkdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  const [expanded, setExpanded] = useState(streaming);
  const id = useId();
  const bodyRef = useRef<HTMLDivElement>(null);
  /** What received focus inside the clipped part, to bring into view once it opens. */
  const focusedRef = useRef<HTMLElement | null>(null);
  const [measured, setMeasured] = useState<boolean | null>(null);
  const long = !streaming && (measured ?? estimateLines(text) > COLLAPSE_LINES);
  const collapsed = long && !expanded;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the text changes the height to measure
  useLayoutEffect(() => {
    const body = bodyRef.current;
    // While streaming it never collapses: no layout reads for every piece.
    if (!body || streaming) return;
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

  // Links and code blocks in the clipped part stay in the tab order: reaching one opens the answer,
  // so what has focus is always visible.
  const onFocus = (event: FocusEvent<HTMLDivElement>) => {
    if (!collapsed) return;
    focusedRef.current = event.target;
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
          onClick={() => setExpanded((value) => !value)}
        >
          {expanded ? 'Collapse' : 'Read more...'}
        </button>
      )}
    </div>
  );
}

function Body({ item }: { item: ChatItem }) {
  if (item.message_type === 'research_report') return <ResearchReport raw={item.raw_text} />;
  if (item.message_type === 'markdown' && item.author_type !== 'human') {
    return <CollapsibleMarkdown text={item.raw_text} streaming={item.streaming} />;
  }
  return <p className="chat-text">{item.raw_text}</p>;
}

export interface AskAgain {
  disabled: boolean;
  onClick(): void;
}

export function ChatMessage({
  item,
  highlighted = false,
  onAskAgain,
}: {
  item: ChatItem;
  highlighted?: boolean;
  /** A note in place of an answer: offers to send the question again. */
  onAskAgain?: AskAgain;
}) {
  const anchor = item.message_id === null ? undefined : `message-${item.message_id}`;
  if (item.message_type === 'system_message' || (item.message_type === 'redirect' && item.raw_text.trim())) {
    return (
      <p id={anchor} className="chat-system">
        {item.raw_text}
        {onAskAgain && (
          <>
            {' '}
            <button
              type="button"
              className="chat-link-button"
              // Not `disabled`, so focus stays on it once used; a click then does nothing.
              aria-disabled={onAskAgain.disabled || undefined}
              onClick={() => {
                if (!onAskAgain.disabled) onAskAgain.onClick();
              }}
            >
              {ASK_AGAIN}
            </button>
          </>
        )}
      </p>
    );
  }
  if (item.message_type === 'redirect') return null;
  const human = item.author_type === 'human';
  const time = item.timestamp ? formatTime(item.timestamp) : '';
  const wide = item.message_type === 'research_report' || item.message_type === 'markdown';
  return (
    <article
      id={anchor}
      className={`chat-row chat-row-${human ? 'human' : 'assistant'}${highlighted ? ' is-highlighted' : ''}`}
      aria-label={human ? 'You said' : 'Assistant said'}
    >
      <div className={`chat-bubble${wide ? ' chat-bubble-wide' : ''}${item.streaming ? ' is-streaming' : ''}`}>
        <Body item={item} />
      </div>
      {!item.streaming && (
        <div className="chat-meta">
          {item.timestamp === null ? (
            <span className="chat-sending">{SENDING}</span>
          ) : (
            <time dateTime={item.timestamp}>{time}</time>
          )}
          {item.queued && <span className="chat-sending"> · {QUEUED}</span>}
        </div>
      )}
    </article>
  );
}
