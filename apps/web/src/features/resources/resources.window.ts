// The part of the resource history the page holds, and what to fetch to show a page of it.
//
// The API has cursors but no total or offsets, so the page keeps a window: up to 60 consecutive items
// (newest first) and `offset`, the place of the first of them in the list as first loaded (0 = the
// newest). Page p shows places (p-1)*15 to p*15-1. Moving past the window's older end fetches 30
// with `before=<last held sort_date>` (only while the last such fetch was a full 30, or older items
// were dropped) and drops the newest beyond 60, raising `offset`; moving before its newer end fetches
// the 30 just newer with `after=<first held sort_date>` (oldest first) and drops the oldest beyond 60.
// So page numbers stay those of the first load, and Previous and Next always have something to fetch.
// If the newer fetch comes back short, the newest item is now held: its place is 0 again (items may
// have been deleted). If it comes back full but there were fewer places above the window, items were
// added meanwhile: the window is dropped and the list loads again from the newest.
import { RESOURCES_FETCH, RESOURCES_HELD_MAX, RESOURCES_PAGE_SIZE, type TResourceItem } from '@daybook/contracts';

export interface HeldWindow {
  /** Consecutive items, newest first; at most RESOURCES_HELD_MAX. */
  items: readonly TResourceItem[];
  /** The place of items[0] in the list (0 = the newest). */
  offset: number;
  /** Older items may exist past the held ones. */
  moreOlder: boolean;
}

export type Fetch = { kind: 'first' } | { kind: 'older'; before: string } | { kind: 'newer'; after: string };

const keyOf = (item: TResourceItem) => `${item.resource_type}:${item.id}`;
const end = (win: HeldWindow) => win.offset + win.items.length;
const pageStart = (page: number) => (page - 1) * RESOURCES_PAGE_SIZE;

/** 1-based; anything else in the URL means page 1. */
export function readPage(raw: string | null): number {
  const page = Number(raw);
  return Number.isInteger(page) && page > 1 ? page : 1;
}

/** What must be fetched before `page` can be shown, or null when it can be (or is past the end). */
export function fetchFor(win: HeldWindow | null, page: number): Fetch | null {
  if (!win) return { kind: 'first' };
  const start = pageStart(page);
  const first = win.items[0];
  const last = win.items[win.items.length - 1];
  if (first && start < win.offset) return { kind: 'newer', after: first.sort_date };
  if (last && win.moreOlder && start + RESOURCES_PAGE_SIZE > end(win)) return { kind: 'older', before: last.sort_date };
  return null;
}

/** Adds a fetch of older items (or the first fetch) at the older end. */
export function addOlder(win: HeldWindow | null, fetched: readonly TResourceItem[]): HeldWindow {
  const held = win?.items ?? [];
  const seen = new Set(held.map(keyOf));
  const fresh = fetched.filter((item) => !seen.has(keyOf(item)));
  const items = [...held, ...fresh];
  const drop = Math.max(0, items.length - RESOURCES_HELD_MAX);
  return {
    items: items.slice(drop),
    offset: (win?.offset ?? 0) + drop,
    // A full fetch may have more behind it; one that brought nothing new must not be asked again.
    moreOlder: fetched.length >= RESOURCES_FETCH && fresh.length > 0,
  };
}

/** Adds a fetch of newer items (oldest first, as the API answers `after`); null: load from the newest again. */
export function addNewer(win: HeldWindow, fetchedOldestFirst: readonly TResourceItem[]): HeldWindow | null {
  const seen = new Set(win.items.map(keyOf));
  const fresh = [...fetchedOldestFirst].reverse().filter((item) => !seen.has(keyOf(item)));
  const reachedNewest = fetchedOldestFirst.length < RESOURCES_FETCH;
  const offset = reachedNewest ? 0 : win.offset - fresh.length;
  if (offset < 0 || (!reachedNewest && fresh.length === 0)) return null;
  const items = [...fresh, ...win.items];
  const drop = Math.max(0, items.length - RESOURCES_HELD_MAX);
  return { items: items.slice(0, items.length - drop), offset, moreOlder: win.moreOlder || drop > 0 };
}

/** The items of `page` (fewer on the last page; none past the end). */
export function pageItems(win: HeldWindow, page: number): readonly TResourceItem[] {
  const from = pageStart(page) - win.offset;
  return from < 0 ? [] : win.items.slice(from, from + RESOURCES_PAGE_SIZE);
}

/** The last page known to have items (more may follow while `moreOlder`). */
export const lastKnownPage = (win: HeldWindow) => Math.max(1, Math.ceil(end(win) / RESOURCES_PAGE_SIZE));

/** Whether Next can lead somewhere. */
export const hasNext = (win: HeldWindow, page: number) => page < lastKnownPage(win) || win.moreOlder;

/** The page to show instead of `page` when it lies past the end of the list. */
export function pageInRange(win: HeldWindow, page: number): number {
  if (fetchFor(win, page) !== null) return page;
  return pageStart(page) >= end(win) ? lastKnownPage(win) : page;
}

/** After a failed fetch: the page nearest to `page` that the held items fill. */
export function nearestHeldPage(win: HeldWindow, page: number): number {
  const firstHeld = Math.ceil(win.offset / RESOURCES_PAGE_SIZE) + 1;
  const lastHeld = win.moreOlder ? Math.floor(end(win) / RESOURCES_PAGE_SIZE) : lastKnownPage(win);
  return Math.max(1, Math.min(Math.max(page, firstHeld), lastHeld));
}

/** "Showing 16–30", with "of N" once the end of the list is known. */
export function countLabel(win: HeldWindow, page: number): string {
  const shown = pageItems(win, page).length;
  if (shown === 0) return '';
  const from = pageStart(page) + 1;
  const range = `Showing ${from}–${from + shown - 1}`;
  return win.moreOlder ? range : `${range} of ${end(win)}`;
}
