import type { TMemory } from '@daybook/contracts';
import { useEffect, useId, useRef, useState } from 'react';
import { Banner } from '../../components/Banner.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { Loading } from '../../components/Loading.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { deleteMemory } from './api.ts';
import { ExportButton } from './ExportButton.tsx';
import { countLabel } from './format.ts';
import { pageCount, useMemories, useMemoryCategories } from './hooks.ts';
import { ImportButton, type ImportProblem, importSummary } from './ImportButton.tsx';
import { DELETE_FAILED, MemoryFormModal, type MemoryFormTarget } from './MemoryFormModal.tsx';
import { MemoryTable } from './MemoryTable.tsx';

export const LOAD_FAILED = 'Failed to load your memories. Please try again later.';
export const SEARCH_DEBOUNCE_MS = 300;
export const SOFT_DELETE_NOTE = 'You can restore it from "Show deleted memories".';
export const PERMANENT_DELETE_NOTE = 'This action cannot be undone.';

type Notice = { variant: 'error' | 'success'; message: string; details?: string[] };

export function MemoriesPage() {
  const memories = useMemories();
  const { list, showDeleted, search, page, removeLocal } = memories;
  const categories = useMemoryCategories();
  const [formTarget, setFormTarget] = useState<MemoryFormTarget | null>(null);
  const [toDelete, setToDelete] = useState<TMemory | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const listTopRef = useRef<HTMLDivElement>(null);
  const listRef = useRef<HTMLElement>(null);
  // Paging and deleting remove the button that had focus: focus goes to the list instead of <body>.
  // Bumped to ask for it; the effect runs after the dialog has put focus back where it was.
  const [focusList, setFocusList] = useState(0);
  useEffect(() => {
    if (focusList) listRef.current?.focus({ preventScroll: true });
  }, [focusList]);
  const showDeletedId = useId();

  const totalPages = list ? pageCount(list.count) : 1;

  async function confirmDelete() {
    if (!toDelete) return;
    setDeleting(true);
    try {
      await deleteMemory(toDelete.id);
      removeLocal(toDelete.id);
      setNotice(null);
    } catch {
      setNotice({ variant: 'error', message: DELETE_FAILED });
    }
    setDeleting(false);
    setToDelete(null);
    setFocusList((n) => n + 1);
  }

  function onSaved(memory: TMemory, mode: MemoryFormTarget['mode']) {
    setFormTarget(null);
    if (mode === 'add') memories.showFirstPage();
    else if (mode === 'restore') {
      removeLocal(memory.id);
      setNotice({ variant: 'success', message: `Restored "${memory.key}".` });
    } else memories.replaceLocal(memory);
  }

  function onImportFailed({ message, details }: ImportProblem) {
    setNotice({ variant: 'error', message, details });
  }

  function goToPage(next: number) {
    memories.setPage(next);
    listTopRef.current?.scrollIntoView?.({ block: 'start' });
    setFocusList((n) => n + 1);
  }

  return (
    <div className="container page memories-page">
      <header className="page-header memories-header">
        <div>
          <h1 className="page-title">Your Memories</h1>
          <p className="page-subtitle">Manage what your assistant remembers about you.</p>
        </div>
        <div className="memories-header-actions">
          {!showDeleted && (
            <ImportButton
              onImported={(result) => {
                setNotice({ variant: 'success', message: importSummary(result) });
                memories.showFirstPage();
              }}
              onFailed={onImportFailed}
            />
          )}
          <ExportButton onFailed={(message) => setNotice({ variant: 'error', message })} />
          {!showDeleted && (
            <button type="button" className="btn btn-primary" onClick={() => setFormTarget({ mode: 'add' })}>
              Add New Memory
            </button>
          )}
        </div>
      </header>

      <div className="memories-banners">
        {memories.loadFailed && (
          <Banner
            onDismiss={memories.dismissLoadFailure}
            action={
              <button type="button" className="btn btn-secondary btn-sm" onClick={memories.reload}>
                Retry
              </button>
            }
          >
            {LOAD_FAILED}
          </Banner>
        )}
        {notice && (
          <Banner variant={notice.variant} onDismiss={() => setNotice(null)}>
            {notice.message}
            {notice.details?.map((line) => (
              <span key={line} className="banner-detail">
                {line}
              </span>
            ))}
          </Banner>
        )}
      </div>

      <div className="memories-toolbar" ref={listTopRef}>
        <SearchBox value={search} onSearch={memories.setSearch} />
        <div className="checkbox">
          <input
            id={showDeletedId}
            type="checkbox"
            checked={showDeleted}
            onChange={(event) => memories.setShowDeleted(event.target.checked)}
          />
          <label htmlFor={showDeletedId}>Show deleted memories</label>
        </div>
        <p className="memories-count" aria-live="polite">
          {list ? countLabel(list.count, showDeleted) : ''}
        </p>
      </div>

      <section ref={listRef} className="memories-list" aria-label="Memory list" tabIndex={-1}>
        {list === null ? (
          memories.loading && <Loading label="Loading your memories..." />
        ) : list.results.length === 0 ? (
          !memories.loading && (
            <EmptyState showDeleted={showDeleted} search={search} onClear={() => memories.setSearch('')} />
          )
        ) : (
          <MemoryTable
            memories={list.results}
            busy={memories.loading}
            onOpen={(memory) => setFormTarget({ mode: memory.deleted_at ? 'restore' : 'edit', memory })}
            onDelete={setToDelete}
          />
        )}
      </section>

      <Pagination page={page} totalPages={totalPages} onChange={goToPage} label="Memory pages" />

      <MemoryFormModal
        target={formTarget}
        categories={categories}
        onClose={() => setFormTarget(null)}
        onSaved={onSaved}
        onDeleted={(memory) => {
          setFormTarget(null);
          removeLocal(memory.id);
          setFocusList((n) => n + 1);
        }}
      />
      <ConfirmDialog
        open={toDelete !== null}
        title="Confirm Deletion"
        message={
          <>
            <p>Are you sure you want to delete the memory "{toDelete?.key}"?</p>
            {/* The first delete is soft; deleting from the deleted view removes it for good. */}
            <p>{toDelete?.deleted_at ? PERMANENT_DELETE_NOTE : SOFT_DELETE_NOTE}</p>
          </>
        }
        confirmLabel="Delete"
        cancelLabel="Cancel"
        danger
        busy={deleting}
        onConfirm={() => void confirmDelete()}
        onCancel={() => setToDelete(null)}
      />
    </div>
  );
}

/** Server-side search, sent once typing pauses; Enter sends at once. */
function SearchBox({ value, onSearch }: { value: string; onSearch: (text: string) => void }) {
  const id = useId();
  const [text, setText] = useState(value);
  const [shown, setShown] = useState(value);
  const onSearchRef = useRef(onSearch);
  onSearchRef.current = onSearch;

  // The URL changed under us (back/forward): show its search.
  if (value !== shown) {
    setShown(value);
    if (value !== text.trim()) setText(value);
  }

  useEffect(() => {
    if (text.trim() === value) return;
    const timer = setTimeout(() => onSearchRef.current(text), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text, value]);

  return (
    <div className="memories-search">
      <label htmlFor={id} className="visually-hidden">
        Search memories
      </label>
      <svg className="memories-search-icon" viewBox="0 0 20 20" aria-hidden="true">
        <circle cx="8.5" cy="8.5" r="5.5" />
        <path d="m13 13 4.5 4.5" />
      </svg>
      <input
        id={id}
        type="search"
        className="input"
        placeholder="Search memories"
        autoComplete="off"
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter') onSearch(text);
        }}
      />
    </div>
  );
}

function EmptyState({ showDeleted, search, onClear }: { showDeleted: boolean; search: string; onClear: () => void }) {
  if (search) {
    return (
      <div className="card memories-empty">
        <h2 className="memories-empty-title">
          No {showDeleted ? 'deleted ' : ''}memories match "{search}".
        </h2>
        <p className="muted">Try other words, or clear the search to see them all.</p>
        <button type="button" className="btn btn-secondary btn-sm" onClick={onClear}>
          Clear search
        </button>
      </div>
    );
  }
  return showDeleted ? (
    <div className="card memories-empty">
      <h2 className="memories-empty-title">No deleted memories found</h2>
      <p className="muted">
        You have not deleted any memories, or you have restored or permanently deleted all of them.
      </p>
    </div>
  ) : (
    <div className="card memories-empty">
      <h2 className="memories-empty-title">No memories found</h2>
      <p className="muted">
        Click <strong>Add New Memory</strong> to add one, or just chat: your assistant learns as you talk.
      </p>
    </div>
  );
}
