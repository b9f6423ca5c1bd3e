// "Search chat": a button in the chat's header (or Ctrl/Cmd+K) opens a dialog that searches the
// user's messages on the server as they type; a result opens /chat?message=<id>, where the chat
// pages back to that message and highlights it.
import { CHAT_SEARCH_TEXT_MAX, type TChatSearchHighlight, type TChatSearchResult } from '@daybook/contracts';
import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { Modal } from '../../components/Modal.tsx';
import { dayLabel, formatFullDate, formatTime } from '../../lib/dates.ts';
import { searchChat } from './api.ts';
import './chat-search.css';

export const SEARCH_TITLE = 'Search chat';
export const SEARCH_FAILED = "Couldn't search your messages. Please try again.";
export const MORE_FAILED = "Couldn't load more results.";
export const SEARCH_HINT = 'Find anything you or the assistant said. Choose a result to open it in the chat.';
/** Marks a result that is a web research report (its snippet is the part of the report that matched). */
export const REPORT_LABEL = 'Research report';
/** Typing pauses this long before the search runs. */
export const SEARCH_DEBOUNCE_MS = 250;

const RESULT = 'a.chat-search-result';

/** "Today, 3:05 PM", "Mon 16 November, 3:05 PM" (the chat's day labels) in the browser's zone; empty for an unreadable time stamp. */
export function formatWhen(iso: string, now = Date.now()): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : `${dayLabel(date, now)}, ${formatTime(iso)}`;
}

/** The snippet with each highlight in a <mark> (offsets outside it, or overlapping, are ignored). */
export function highlighted(snippet: string, highlights: TChatSearchHighlight[]): ReactNode[] {
  const parts: ReactNode[] = [];
  let at = 0;
  for (const { start, end } of [...highlights].sort((a, b) => a.start - b.start)) {
    if (start < at || end <= start || end > snippet.length) continue;
    if (start > at) parts.push(snippet.slice(at, start));
    parts.push(<mark key={start}>{snippet.slice(start, end)}</mark>);
    at = end;
  }
  if (at < snippet.length) parts.push(snippet.slice(at));
  return parts;
}

function SearchIcon() {
  return (
    <svg className="chat-search-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
      <circle cx="8.5" cy="8.5" r="5.5" fill="none" stroke="currentColor" strokeWidth="2" />
      <path d="m13 13 4.5 4.5" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
    </svg>
  );
}

const isMac = () => typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform ?? '');
const shortcutLabel = () => (isMac() ? '⌘K' : 'Ctrl+K');

/** The header's Search button; Ctrl+K (⌘K on a Mac) opens the dialog from anywhere on the chat page. */
export function ChatSearchButton() {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKeyDown = (event: globalThis.KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setOpen(true);
      }
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);
  const shortcut = shortcutLabel();
  return (
    <>
      <button
        type="button"
        className="btn btn-secondary btn-sm chat-search-trigger"
        aria-label={SEARCH_TITLE}
        aria-haspopup="dialog"
        aria-keyshortcuts="Control+K Meta+K"
        title={`${SEARCH_TITLE} (${shortcut})`}
        onClick={() => setOpen(true)}
      >
        <SearchIcon />
        <span className="chat-search-trigger-text">Search</span>
      </button>
      <ChatSearchDialog open={open} onClose={() => setOpen(false)} />
    </>
  );
}

interface Found {
  text: string;
  results: TChatSearchResult[];
  hasMore: boolean;
  status: 'loading' | 'ready' | 'error';
  more: 'idle' | 'loading' | 'error';
}

/** The search dialog: a debounced field, the results with snippets, and "Load more". */
export function ChatSearchDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal open={open} onClose={onClose} title={SEARCH_TITLE}>
      {open && <ChatSearchPanel onChoose={onClose} />}
    </Modal>
  );
}

function ChatSearchPanel({ onChoose }: { onChoose: () => void }) {
  const navigate = useNavigate();
  const [draft, setDraft] = useState('');
  const [text, setText] = useState('');
  const [attempt, setAttempt] = useState(0);
  const [found, setFound] = useState<Found | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const moreAbort = useRef<AbortController | null>(null);
  /** After "Load more": the index of the first new result, which takes focus. */
  const focusIndex = useRef<number | null>(null);

  useEffect(() => {
    const next = draft.trim();
    if (next === text) return;
    const timer = setTimeout(() => setText(next), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [draft, text]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` runs the same search again (Try again)
  useEffect(() => {
    moreAbort.current?.abort();
    if (!text) {
      setFound(null);
      return;
    }
    const abort = new AbortController();
    // The last results stay in sight (dimmed) until the new ones arrive.
    setFound((last) => ({ text, results: last?.results ?? [], hasMore: false, status: 'loading', more: 'idle' }));
    searchChat(text, undefined, abort.signal).then(
      (page) => setFound({ text, results: page.results, hasMore: page.has_more, status: 'ready', more: 'idle' }),
      () => {
        if (!abort.signal.aborted) setFound({ text, results: [], hasMore: false, status: 'error', more: 'idle' });
      },
    );
    return () => abort.abort();
  }, [text, attempt]);

  useEffect(() => () => moreAbort.current?.abort(), []);

  useEffect(() => {
    if (focusIndex.current === null) return;
    const items = listRef.current?.querySelectorAll<HTMLElement>(RESULT);
    const target = items?.[focusIndex.current];
    if (target) {
      focusIndex.current = null;
      target.focus();
    }
  });

  const loadMore = () => {
    if (found?.status !== 'ready' || found.more === 'loading') return;
    const last = found.results.at(-1);
    if (!last) return;
    const abort = new AbortController();
    moreAbort.current = abort;
    setFound({ ...found, more: 'loading' });
    searchChat(found.text, last.message_id, abort.signal).then(
      (page) => {
        focusIndex.current = found.results.length;
        setFound((now) =>
          now && now.text === found.text
            ? { ...now, results: [...now.results, ...page.results], hasMore: page.has_more, more: 'idle' }
            : now,
        );
      },
      () => {
        if (!abort.signal.aborted)
          setFound((now) => (now && now.text === found.text ? { ...now, more: 'error' } : now));
      },
    );
  };

  const results = () => Array.from(listRef.current?.querySelectorAll<HTMLElement>(RESULT) ?? []);

  // Arrow keys move between the field and the results; Enter in the field opens the first result.
  const onFieldKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') {
      const first = results()[0];
      if (first) {
        event.preventDefault();
        first.focus();
      }
    } else if (event.key === 'Enter' && found?.status === 'ready' && found.text === draft.trim()) {
      const first = found.results[0];
      if (first) {
        event.preventDefault();
        onChoose();
        navigate(`/chat?message=${first.message_id}`);
      }
    }
  };
  const onListKeyDown = (event: KeyboardEvent<HTMLUListElement>) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const items = results();
    const index = items.indexOf(document.activeElement as HTMLElement);
    if (index === -1) return;
    event.preventDefault();
    const next = event.key === 'ArrowDown' ? items[index + 1] : items[index - 1];
    (next ?? (event.key === 'ArrowUp' ? inputRef.current : null))?.focus();
  };

  const stale = found?.status === 'loading';
  const count = found?.results.length ?? 0;
  const announcement =
    !found || found.status === 'loading'
      ? ''
      : found.status === 'error'
        ? ''
        : count === 0
          ? 'No messages found.'
          : `${count} ${count === 1 ? 'result' : 'results'}${found.hasMore ? ', more available' : ''}.`;

  return (
    <div className="chat-search">
      <div className="chat-search-field">
        <SearchIcon />
        <input
          ref={inputRef}
          type="search"
          className="chat-search-input"
          aria-label="Search messages"
          placeholder="Search your messages…"
          autoComplete="off"
          spellCheck={false}
          enterKeyHint="search"
          maxLength={CHAT_SEARCH_TEXT_MAX}
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onFieldKeyDown}
        />
      </div>
      <p className="visually-hidden" role="status">
        {announcement}
      </p>
      <div className="chat-search-body">
        {!found && (
          <div className="chat-search-note">
            <p>{SEARCH_HINT}</p>
            <p className="chat-search-tip">
              Tip: <kbd>{shortcutLabel()}</kbd> opens this search from anywhere in the chat.
            </p>
          </div>
        )}
        {found?.status === 'loading' && count === 0 && <p className="chat-search-note">Searching…</p>}
        {found?.status === 'error' && (
          <div className="chat-search-error" role="alert">
            <p>{SEARCH_FAILED}</p>
            <button type="button" className="btn btn-secondary btn-sm" onClick={() => setAttempt((n) => n + 1)}>
              Try again
            </button>
          </div>
        )}
        {found?.status === 'ready' && count === 0 && (
          <div className="chat-search-note">
            <p className="chat-search-empty">
              No messages match “<span className="chat-search-empty-text">{found.text}</span>”.
            </p>
            <p>Try another word, or fewer of them.</p>
          </div>
        )}
        {count > 0 && (
          <>
            <ul
              ref={listRef}
              className={`chat-search-results${stale ? ' is-stale' : ''}`}
              aria-label="Results"
              aria-busy={stale}
              onKeyDown={onListKeyDown}
            >
              {found?.results.map((result) => (
                <li key={result.message_id}>
                  <Link to={`/chat?message=${result.message_id}`} className="chat-search-result" onClick={onChoose}>
                    <span className="chat-search-meta">
                      {/* The hidden punctuation keeps the parts apart in the link's spoken name. */}
                      <span className="chat-search-author">{result.author_type === 'human' ? 'You' : 'Assistant'}</span>
                      <span className="visually-hidden">, </span>
                      {result.message_type === 'research_report' && (
                        <>
                          <span className="chat-search-kind">{REPORT_LABEL}</span>
                          <span className="visually-hidden">, </span>
                        </>
                      )}
                      <time dateTime={result.timestamp} title={formatFullDate(result.timestamp) || undefined}>
                        {formatWhen(result.timestamp)}
                      </time>
                      <span className="visually-hidden">: </span>
                    </span>
                    <span className="chat-search-snippet">{highlighted(result.snippet, result.highlights)}</span>
                  </Link>
                </li>
              ))}
            </ul>
            {found?.status === 'ready' && found.hasMore && (
              <div className="chat-search-more">
                {found.more === 'error' && (
                  <p className="chat-search-more-error" role="alert">
                    {MORE_FAILED}
                  </p>
                )}
                <button
                  type="button"
                  className="btn btn-secondary btn-sm"
                  onClick={loadMore}
                  // Not `disabled`: the button keeps focus while the page loads.
                  aria-disabled={found.more === 'loading'}
                >
                  {found.more === 'loading' ? 'Loading…' : found.more === 'error' ? 'Try again' : 'Load more'}
                </button>
              </div>
            )}
          </>
        )}
      </div>
    </div>
  );
}
