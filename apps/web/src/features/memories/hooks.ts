import {
  MEMORY_PAGE_SIZE,
  MEMORY_TYPES,
  type TMemory,
  type TMemoryCategory,
  type TMemoryPage,
} from '@daybook/contracts';
import { startTransition, useCallback, useEffect, useOptimistic, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { listMemories, listMemoryCategories } from './api.ts';

export interface MemoryView {
  /** 1-based; `?page=`, left out for page 1. */
  page: number;
  /** `?deleted=1`: the deleted memories instead of the active ones. */
  showDeleted: boolean;
  /** `?q=`: the server-side search text. */
  search: string;
}

function readView(params: URLSearchParams): MemoryView {
  const page = Number(params.get('page'));
  return {
    page: Number.isInteger(page) && page > 1 ? page : 1,
    showDeleted: params.get('deleted') === '1',
    search: params.get('q')?.trim() ?? '',
  };
}

/** The view lives in the URL so that reloads, shared links and back/forward keep it. */
function useMemoryView() {
  const [params, setParams] = useSearchParams();
  const view = readView(params);
  const change = useCallback(
    (changes: Partial<MemoryView>, { replace = false } = {}) =>
      setParams(
        (previous) => {
          const next = { ...readView(previous), ...changes };
          const out = new URLSearchParams(previous);
          out.delete('page');
          out.delete('deleted');
          out.delete('q');
          if (next.showDeleted) out.set('deleted', '1');
          if (next.search) out.set('q', next.search);
          if (next.page > 1) out.set('page', String(next.page));
          return out;
        },
        { replace },
      ),
    [setParams],
  );
  return { view, change };
}

export const pageCount = (count: number) => Math.max(1, Math.ceil(count / MEMORY_PAGE_SIZE));

/** One page of memories for the view in the URL, with local updates after changes. */
export function useMemories() {
  const { view, change } = useMemoryView();
  // The router applies a URL change as a transition: until it is done, the checkbox (and the view
  // and page it picks) already show what the user chose, never its old state.
  const [chosen, choose] = useOptimistic({ showDeleted: view.showDeleted, page: view.page });
  const { showDeleted, page } = chosen;
  const { search } = view;
  // Which view the held page belongs to: a page of the other view is never shown, even while loading.
  const [held, setHeld] = useState<{ showDeleted: boolean; list: TMemoryPage } | null>(null);
  const [loading, setLoading] = useState(true);
  const [loadFailed, setLoadFailed] = useState(false);
  const [reloads, setReloads] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `reloads` is how reload() asks for the same page again
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setLoadFailed(false);
    listMemories({ offset: (page - 1) * MEMORY_PAGE_SIZE, showDeleted, search }, controller.signal)
      .then((list) => {
        setHeld({ showDeleted, list });
        setLoading(false);
      })
      .catch((err: Error) => {
        if (err.name === 'AbortError') return;
        setLoadFailed(true);
        setLoading(false);
      });
    return () => controller.abort();
  }, [page, showDeleted, search, reloads]);

  const list = held?.showDeleted === showDeleted ? held.list : null;

  // Past the last page (e.g. after deleting its last memory): go back to the last page that has some.
  const lastPage = list ? pageCount(list.count) : 1;
  const pastTheEnd = !loading && list !== null && page > 1 && list.results.length === 0;
  useEffect(() => {
    if (pastTheEnd) change({ page: lastPage < page ? lastPage : page - 1 }, { replace: true });
  }, [pastTheEnd, lastPage, page, change]);

  const reload = useCallback(() => setReloads((n) => n + 1), []);

  /** After a delete or restore: drop it from this page at once, then refill the page from the server. */
  const removeLocal = useCallback(
    (id: number) => {
      setHeld((current) => {
        if (!current?.list.results.some((memory) => memory.id === id)) return current;
        const results = current.list.results.filter((memory) => memory.id !== id);
        return { ...current, list: { ...current.list, results, count: Math.max(0, current.list.count - 1) } };
      });
      reload();
    },
    [reload],
  );

  const replaceLocal = useCallback((updated: TMemory) => {
    setHeld(
      (current) =>
        current && {
          ...current,
          list: {
            ...current.list,
            results: current.list.results.map((memory) => (memory.id === updated.id ? updated : memory)),
          },
        },
    );
  }, []);

  return {
    ...view,
    ...chosen,
    list,
    loading,
    loadFailed,
    dismissLoadFailure: () => setLoadFailed(false),
    setPage: (next: number) => change({ page: next }),
    setShowDeleted: (next: boolean) =>
      startTransition(() => {
        choose({ showDeleted: next, page: 1 });
        change({ showDeleted: next, page: 1 });
      }),
    /** Typing is not worth a history entry each time. */
    setSearch: (next: string) => change({ search: next.trim(), page: 1 }, { replace: true }),
    /** Where new memories appear (newest first). */
    showFirstPage: () => (page === 1 ? reload() : change({ page: 1 })),
    reload,
    removeLocal,
    replaceLocal,
  };
}

/** The Type choices; the contract's list until (or if) the server's answer arrives. */
export function useMemoryCategories(): readonly TMemoryCategory[] {
  const [categories, setCategories] = useState<readonly TMemoryCategory[]>(MEMORY_TYPES);
  useEffect(() => {
    const controller = new AbortController();
    listMemoryCategories(controller.signal)
      .then((loaded) => {
        if (loaded.length) setCategories(loaded);
      })
      .catch(() => {});
    return () => controller.abort();
  }, []);
  return categories;
}
