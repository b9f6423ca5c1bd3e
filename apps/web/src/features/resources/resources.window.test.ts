import { RESOURCES_HELD_MAX, type TResourceItem } from '@daybook/contracts';
import { describe, expect, it } from 'vitest';
import {
  addNewer,
  addOlder,
  countLabel,
  fetchFor,
  type HeldWindow,
  hasNext,
  nearestHeldPage,
  pageInRange,
  pageItems,
  readPage,
} from './resources.window.ts';

/** A history of `n` items, newest first; item i (0-based) is titled `#i`. */
function history(n: number): TResourceItem[] {
  return Array.from({ length: n }, (_, i) => {
    const date = new Date(Date.UTC(2025, 5, 30) - i * 60_000).toISOString();
    return {
      resource_type: 'research',
      id: n - i,
      sort_date: date,
      created: date,
      title: `#${i}`,
      preview: null,
      status: 'done',
    };
  });
}

const titles = (items: readonly TResourceItem[]) => items.map((item) => item.title);

/** What the server answers (limit 30): `before` newest first, `after` oldest first. */
function serve(all: TResourceItem[], cursor: { before?: string; after?: string }): TResourceItem[] {
  if (cursor.before) return all.filter((item) => item.sort_date < (cursor.before as string)).slice(0, 30);
  if (cursor.after) {
    return all
      .filter((item) => item.sort_date > (cursor.after as string))
      .reverse()
      .slice(0, 30);
  }
  return all.slice(0, 30);
}

/** Fetches what `page` needs until it can be shown, as the page does; returns the window and the fetches. */
function show(all: TResourceItem[], start: HeldWindow | null, page: number) {
  let win = start;
  const fetches: string[] = [];
  for (let guard = 0; guard < 20; guard++) {
    const need = fetchFor(win, page);
    if (!need) return { win: win as HeldWindow, fetches };
    if (need.kind === 'first') {
      fetches.push('first');
      win = addOlder(null, serve(all, {}));
    } else if (need.kind === 'older') {
      fetches.push(`before #${titles(all.filter((i) => i.sort_date === need.before))[0]?.slice(1)}`);
      win = addOlder(win, serve(all, { before: need.before }));
    } else {
      fetches.push(`after #${titles(all.filter((i) => i.sort_date === need.after))[0]?.slice(1)}`);
      win = addNewer(win as HeldWindow, serve(all, { after: need.after }));
    }
    expect(win?.items.length ?? 0).toBeLessThanOrEqual(RESOURCES_HELD_MAX);
  }
  throw new Error('never settled');
}

describe('the held window of resources', () => {
  it('reads the page from the URL: 1-based, anything else is page 1', () => {
    expect([null, '', '0', '-2', '1.5', 'abc', '1', '3'].map(readPage)).toEqual([1, 1, 1, 1, 1, 1, 1, 3]);
  });

  it('fetches 30 at first and shows 15 per page; more only past the loaded items, after a full 30', () => {
    const all = history(42);
    const { win, fetches } = show(all, null, 1);
    expect(fetches).toEqual(['first']);
    expect(titles(pageItems(win, 1))).toEqual(titles(all.slice(0, 15)));
    expect(show(all, win, 2).fetches).toEqual([]);
    const third = show(all, win, 3);
    expect(third.fetches).toEqual(['before #29']);
    expect(titles(pageItems(third.win, 3))).toEqual(titles(all.slice(30, 42)));
    expect(countLabel(third.win, 3)).toBe('Showing 31–42 of 42');
    expect(hasNext(third.win, 3)).toBe(false);
    // The last fetch was short: the end is known and nothing more is asked.
    expect(fetchFor(third.win, 4)).toBeNull();
    expect(pageInRange(third.win, 4)).toBe(3);
  });

  it('holds at most 60: going forward drops the newest, going back fetches them again with after', () => {
    const all = history(100);
    const page5 = show(all, null, 5);
    expect(page5.fetches).toEqual(['first', 'before #29', 'before #59']);
    expect(page5.win.offset).toBe(30);
    expect(titles(pageItems(page5.win, 5))).toEqual(titles(all.slice(60, 75)));
    expect(countLabel(page5.win, 5)).toBe('Showing 61–75');
    // Pages 3 and 4 are still held.
    expect(show(all, page5.win, 3).fetches).toEqual([]);
    const page2 = show(all, page5.win, 2);
    expect(page2.fetches).toEqual(['after #30']);
    expect(page2.win.offset).toBe(0);
    expect(titles(page2.win.items)).toEqual(titles(all.slice(0, 60)));
    expect(titles(pageItems(page2.win, 2))).toEqual(titles(all.slice(15, 30)));
    // The dropped older ones can be fetched again, and the end is found.
    const page7 = show(all, page2.win, 7);
    expect(page7.fetches).toEqual(['before #59', 'before #89']);
    expect(titles(pageItems(page7.win, 7))).toEqual(titles(all.slice(90, 100)));
    expect(countLabel(page7.win, 7)).toBe('Showing 91–100 of 100');
    expect(show(all, page7.win, 1).fetches).toEqual(['after #40', 'after #10']);
  });

  it('a short answer going back means the newest is held: its place is 0 again', () => {
    const all = history(90);
    const { win } = show(all, null, 5);
    // 20 of the newest were deleted meanwhile.
    const remaining = all.slice(20);
    const back = addNewer(win, serve(remaining, { after: (win.items[0] as TResourceItem).sort_date }));
    expect(back?.offset).toBe(0);
    expect(titles(back?.items.slice(0, 10) ?? [])).toEqual(titles(all.slice(20, 30)));
  });

  it('more items newer than the window than places above it: load again from the newest', () => {
    const all = history(70);
    const { win } = show(all, null, 3);
    // 30 new ones arrive while the list is open.
    const fresh = Array.from({ length: 30 }, (_, i) => ({
      ...(all[0] as TResourceItem),
      id: 500 + i,
      title: `new ${i}`,
      sort_date: new Date(Date.UTC(2025, 5, 30) + (30 - i) * 60_000).toISOString(),
    }));
    const added = [...fresh, ...all];
    expect(win.offset).toBe(0);
    const shifted = { ...win, offset: 10 };
    const newer = serve(added, { after: (shifted.items[0] as TResourceItem).sort_date });
    expect(newer).toHaveLength(30);
    expect(addNewer(shifted, newer)).toBeNull();
  });

  it('a full answer of items already held is not asked for again', () => {
    const all = history(30);
    const win = addOlder(null, all);
    expect(win.moreOlder).toBe(true);
    const again = addOlder(win, all);
    expect(again.moreOlder).toBe(false);
    expect(again.items).toHaveLength(30);
  });

  it('after a failed fetch, the nearest page the held items fill', () => {
    const all = history(100);
    const { win } = show(all, null, 5);
    expect(nearestHeldPage(win, 7)).toBe(6);
    expect(nearestHeldPage(win, 1)).toBe(3);
    expect(nearestHeldPage(addOlder(null, all.slice(0, 30)), 3)).toBe(2);
  });

  it('an empty history is one empty page', () => {
    const win = addOlder(null, []);
    expect(fetchFor(win, 1)).toBeNull();
    expect(pageItems(win, 1)).toEqual([]);
    expect(pageInRange(win, 4)).toBe(1);
    expect(countLabel(win, 1)).toBe('');
    expect(hasNext(win, 1)).toBe(false);
  });
});
