// The resource history for the page in the URL (`?page=`, 1-based, left out for page 1): fetches
// what that page needs, one request at a time, into a held window of at most 60 items.
import { useCallback, useEffect, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { listResources } from './api.ts';
import {
  addNewer,
  addOlder,
  countLabel,
  type Fetch,
  fetchFor,
  type HeldWindow,
  hasNext,
  nearestHeldPage,
  pageInRange,
  pageItems,
  readPage,
} from './resources.window.ts';

const cursorOf = (fetch: Fetch) =>
  fetch.kind === 'older' ? { before: fetch.before } : fetch.kind === 'newer' ? { after: fetch.after } : {};

export function useResources() {
  const [params, setParams] = useSearchParams();
  const page = readPage(params.get('page'));
  const [win, setWin] = useState<HeldWindow | null>(null);
  /** The first load failed: nothing is fetched until Retry. */
  const [loadFailed, setLoadFailed] = useState(false);
  const [bannerDismissed, setBannerDismissed] = useState(false);

  const setPage = useCallback(
    (next: number, { replace = false } = {}) =>
      setParams(
        (previous) => {
          const out = new URLSearchParams(previous);
          if (next > 1) out.set('page', String(next));
          else out.delete('page');
          return out;
        },
        { replace },
      ),
    [setParams],
  );

  const needed = loadFailed ? null : fetchFor(win, page);
  const neededKey = needed && JSON.stringify(needed);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `neededKey` stands for `needed`; the window it was computed from is `win`
  useEffect(() => {
    if (!needed) return;
    const controller = new AbortController();
    listResources(cursorOf(needed), controller.signal)
      .then((fetched) => {
        if (needed.kind === 'newer' && win) setWin(addNewer(win, fetched));
        else setWin(addOlder(needed.kind === 'first' ? null : win, fetched));
      })
      .catch((err: unknown) => {
        if (err instanceof Error && err.name === 'AbortError') return;
        if (needed.kind === 'first' || !win) {
          setLoadFailed(true);
          setBannerDismissed(false);
          return;
        }
        // The spec: a failure loading more is only logged. The page goes back to what is held.
        console.error('Failed to load more resources', err);
        setPage(nearestHeldPage(win, page), { replace: true });
      });
    return () => controller.abort();
  }, [neededKey, win]);

  // Past the end of the list (a bookmarked page of a list that shrank): show its last page.
  const target = win && !needed ? pageInRange(win, page) : page;
  useEffect(() => {
    if (target !== page) setPage(target, { replace: true });
  }, [target, page, setPage]);

  return {
    page,
    setPage,
    /** The items of this page; null until they are loaded. */
    items: win && !needed && target === page ? pageItems(win, page) : null,
    loading: needed !== null,
    loadFailed,
    showFailure: loadFailed && !bannerDismissed,
    dismissFailure: () => setBannerDismissed(true),
    retry: () => {
      setLoadFailed(false);
      setWin(null);
    },
    hasPrevious: page > 1,
    hasNext: win ? hasNext(win, page) : false,
    count: win && !needed ? countLabel(win, page) : '',
  };
}
