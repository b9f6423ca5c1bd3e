import { describe, expect, it, vi } from 'vitest';
import { dayLabel, formatFullDate, formatTime, groupByDay, localDayKey, msUntilNextDay } from './dates.ts';

/** A local time as ISO, so the expectations hold in any time zone. */
const local = (...args: [number, number, number, number?, number?]) =>
  new Date(args[0], args[1], args[2], args[3] ?? 12, args[4] ?? 0).toISOString();
const at = (...args: [number, number, number, number?, number?]) => new Date(local(...args)).getTime();

describe('chat dates', () => {
  it('formats the time on a 12-hour clock and the full date behind it', () => {
    expect(formatTime(local(2026, 10, 17, 15, 7))).toBe('3:07 PM');
    expect(formatTime(local(2026, 10, 17, 0, 5))).toBe('12:05 AM');
    expect(formatFullDate(local(2026, 10, 17, 15, 7))).toBe('Tuesday 17 November 2026 at 3:07 PM');
    expect(formatFullDate(local(2025, 10, 17, 9, 30))).toBe('Monday 17 November 2025 at 9:30 AM');
    expect(formatFullDate('not a date')).toBe('');
    expect(formatTime('not a date')).toBe('');
  });

  it("never starts the engine's date formats, as it loads or after (their first use costs a phone tens of ms)", async () => {
    const format = vi.spyOn(Intl, 'DateTimeFormat');
    try {
      vi.resetModules();
      const fresh = await import('./dates.ts');
      fresh.formatFullDate(local(2026, 10, 17, 15, 7));
      fresh.dayLabel(new Date(local(2025, 10, 17)), at(2026, 10, 18, 9, 0));
      expect(format).not.toHaveBeenCalled();
    } finally {
      format.mockRestore();
    }
  });

  it('labels days as Today, Yesterday, a date this year and a date with its year', () => {
    const now = at(2026, 10, 18, 9, 0);
    expect(dayLabel(new Date(local(2026, 10, 18, 0, 0)), now)).toBe('Today');
    expect(dayLabel(new Date(local(2026, 10, 18, 23, 59)), now)).toBe('Today');
    expect(dayLabel(new Date(local(2026, 10, 17, 23, 59)), now)).toBe('Yesterday');
    expect(dayLabel(new Date(local(2026, 10, 16, 8, 0)), now)).toBe('Mon 16 November');
    expect(dayLabel(new Date(local(2026, 0, 1)), now)).toBe('Thu 1 January');
    expect(dayLabel(new Date(local(2025, 10, 17)), now)).toBe('Mon 17 November 2025');
    // Across a month and a year.
    expect(dayLabel(new Date(local(2026, 10, 30)), at(2026, 11, 1, 0, 1))).toBe('Yesterday');
    expect(dayLabel(new Date(local(2026, 11, 31)), at(2027, 0, 1, 8, 0))).toBe('Yesterday');
    expect(dayLabel(new Date(local(2026, 11, 30)), at(2027, 0, 1, 8, 0))).toBe('Wed 30 December 2026');
  });

  it('knows how long until the next local midnight', () => {
    expect(msUntilNextDay(at(2026, 10, 18, 23, 59) + 30_000)).toBe(30_000);
    expect(msUntilNextDay(at(2026, 10, 18, 0, 0))).toBe(new Date(2026, 10, 19).getTime() - at(2026, 10, 18, 0, 0));
    expect(localDayKey(new Date(2026, 0, 5, 23, 59))).toBe('2026-01-05');
  });

  it('groups runs of one local day; undated items are today, unreadable ones stay with the one before', () => {
    const now = at(2026, 10, 18, 9, 0);
    const items = [
      { id: 1, ts: local(2025, 10, 17, 10, 0) },
      { id: 2, ts: local(2026, 10, 17, 8, 0) },
      { id: 3, ts: 'garbled' },
      { id: 4, ts: local(2026, 10, 17, 22, 0) },
      { id: 5, ts: local(2026, 10, 18, 7, 0) },
      { id: 6, ts: null },
    ];
    const groups = groupByDay(items, (item) => item.ts, now);
    expect(groups.map((g) => [g.key, g.label, g.items.map((i) => i.id)])).toEqual([
      ['2025-11-17', 'Mon 17 November 2025', [1]],
      ['2026-11-17', 'Yesterday', [2, 3, 4]],
      ['2026-11-18', 'Today', [5, 6]],
    ]);
    // Something being sent after yesterday's last message opens today.
    expect(groupByDay(items.slice(0, 2).concat({ id: 7, ts: null }), (i) => i.ts, now).map((g) => g.label)).toEqual([
      'Mon 17 November 2025',
      'Yesterday',
      'Today',
    ]);
    // A day that comes back (a clock that went wrong) keeps keys unique.
    const back = groupByDay([local(2026, 10, 17), local(2026, 10, 18), local(2026, 10, 17)], (ts) => ts, now);
    expect(back.map((g) => g.key)).toEqual(['2026-11-17', '2026-11-18', '2026-11-17-1']);
    expect(groupByDay([], (ts: string) => ts, now)).toEqual([]);
  });
});
