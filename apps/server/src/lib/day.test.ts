import { describe, expect, it } from 'vitest';
import { addDays, dayWindow, localDate, zonedIso, zonedTimeToInstant } from './day.ts';

const hours = (w: { start: Date; end: Date }) => (w.end.getTime() - w.start.getTime()) / 3_600_000;

describe('dayWindow', () => {
  it('covers midnight to midnight on a normal day, east and west of UTC', () => {
    const berlin = dayWindow('2026-06-15', 'Europe/Berlin');
    expect(berlin).toEqual({
      date: '2026-06-15',
      timeZone: 'Europe/Berlin',
      start: new Date('2026-06-14T22:00:00Z'),
      end: new Date('2026-06-15T22:00:00Z'),
    });
    const la = dayWindow('2026-06-15', 'America/Los_Angeles');
    expect([la.start.toISOString(), la.end.toISOString()]).toEqual([
      '2026-06-15T07:00:00.000Z',
      '2026-06-16T07:00:00.000Z',
    ]);
    const utc = dayWindow('2026-06-15', 'UTC');
    expect([utc.start.toISOString(), hours(utc)]).toEqual(['2026-06-15T00:00:00.000Z', 24]);
  });

  it('is 23 hours on the spring change and 25 on the autumn change (Europe/Berlin)', () => {
    const spring = dayWindow('2026-03-29', 'Europe/Berlin');
    expect(hours(spring)).toBe(23);
    expect(zonedIso(spring.start, 'Europe/Berlin')).toBe('2026-03-29T00:00:00+01:00');
    expect(zonedIso(spring.end, 'Europe/Berlin')).toBe('2026-03-30T00:00:00+02:00');

    const autumn = dayWindow('2026-10-25', 'Europe/Berlin');
    expect(hours(autumn)).toBe(25);
    expect(zonedIso(autumn.start, 'Europe/Berlin')).toBe('2026-10-25T00:00:00+02:00');
    expect(zonedIso(autumn.end, 'Europe/Berlin')).toBe('2026-10-26T00:00:00+01:00');
  });

  it('is 23 and 25 hours on America/New_York change days', () => {
    expect(hours(dayWindow('2026-03-08', 'America/New_York'))).toBe(23);
    expect(hours(dayWindow('2026-11-01', 'America/New_York'))).toBe(25);
  });

  it('starts at the first existing instant when midnight is skipped', () => {
    // Chile moves from 00:00 to 01:00 on the first Sunday of September.
    const santiago = dayWindow('2026-09-06', 'America/Santiago');
    expect(zonedIso(santiago.start, 'America/Santiago')).toBe('2026-09-06T01:00:00-03:00');
    expect(hours(santiago)).toBe(23);
    // Lebanon moves from 00:00 to 01:00 on the last Sunday of March.
    const beirut = dayWindow('2026-03-29', 'Asia/Beirut');
    expect(zonedIso(beirut.start, 'Asia/Beirut')).toBe('2026-03-29T01:00:00+03:00');
    expect(zonedIso(beirut.end, 'Asia/Beirut')).toBe('2026-03-30T00:00:00+03:00');
  });

  it('uses half-hour offsets (Asia/Kolkata)', () => {
    const w = dayWindow('2026-06-01', 'Asia/Kolkata');
    expect([w.start.toISOString(), w.end.toISOString()]).toEqual([
      '2026-05-31T18:30:00.000Z',
      '2026-06-01T18:30:00.000Z',
    ]);
  });

  it('tiles the year without gaps or overlaps, whatever the zone does', () => {
    for (const zone of ['Europe/Berlin', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kolkata']) {
      let date = '2026-01-01';
      let total = 0;
      for (let i = 0; i < 365; i++) {
        const w = dayWindow(date, zone);
        const next = dayWindow(addDays(date, 1), zone);
        expect(next.start.getTime()).toBe(w.end.getTime());
        expect(localDate(w.start, zone)).toBe(date);
        expect(localDate(new Date(w.end.getTime() - 1000), zone)).toBe(date);
        total += hours(w);
        date = addDays(date, 1);
      }
      // Whatever the changes, a year of local days is a year of hours.
      expect(total).toBe(365 * 24);
    }
  });

  it('refuses a malformed date or an unknown zone with a clear error', () => {
    expect(() => dayWindow('2026-02-30', 'Europe/Berlin')).toThrow(RangeError);
    expect(() => dayWindow('26-1-1', 'Europe/Berlin')).toThrow(/YYYY-MM-DD/);
    expect(() => dayWindow('2026-01-01', 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});

describe('zonedIso', () => {
  const at = new Date('2026-01-15T12:00:00Z');
  const summer = new Date('2026-07-15T12:00:00Z');

  it('shows the local time with the offset in force at that instant', () => {
    expect(zonedIso(at, 'Europe/Berlin')).toBe('2026-01-15T13:00:00+01:00');
    expect(zonedIso(summer, 'Europe/Berlin')).toBe('2026-07-15T14:00:00+02:00');
    expect(zonedIso(new Date('2026-03-29T07:00:00Z'), 'Europe/Berlin')).toBe('2026-03-29T09:00:00+02:00');
    expect(zonedIso(at, 'UTC')).toBe('2026-01-15T12:00:00+00:00');
  });

  it('shows half- and quarter-hour offsets', () => {
    expect(zonedIso(at, 'Asia/Kolkata')).toBe('2026-01-15T17:30:00+05:30');
    expect(zonedIso(at, 'Asia/Kathmandu')).toBe('2026-01-15T17:45:00+05:45');
    expect(zonedIso(at, 'Pacific/Chatham')).toBe('2026-01-16T01:45:00+13:45');
  });

  it('shows negative offsets, including the previous local date', () => {
    expect(zonedIso(at, 'America/New_York')).toBe('2026-01-15T07:00:00-05:00');
    expect(zonedIso(summer, 'America/Los_Angeles')).toBe('2026-07-15T05:00:00-07:00');
    expect(zonedIso(at, 'America/St_Johns')).toBe('2026-01-15T08:30:00-03:30');
    expect(zonedIso(new Date('2026-01-15T03:00:00Z'), 'Pacific/Honolulu')).toBe('2026-01-14T17:00:00-10:00');
  });

  it('drops milliseconds', () => {
    expect(zonedIso(new Date('2026-01-15T12:00:59.999Z'), 'UTC')).toBe('2026-01-15T12:00:59+00:00');
  });
});

describe('localDate and addDays', () => {
  it('gives the date the instant falls on in each zone', () => {
    const instant = new Date('2026-03-29T23:30:00Z');
    expect(localDate(instant, 'Europe/Berlin')).toBe('2026-03-30');
    expect(localDate(instant, 'America/New_York')).toBe('2026-03-29');
    expect(localDate(instant, 'Asia/Kolkata')).toBe('2026-03-30');
    expect(localDate(instant, 'Pacific/Honolulu')).toBe('2026-03-29');
  });

  it('adds days across months, years and leap days', () => {
    expect(addDays('2026-01-31', 1)).toBe('2026-02-01');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-03-29', 0)).toBe('2026-03-29');
    expect(addDays('2026-01-01', 365)).toBe('2027-01-01');
  });
});

describe('zonedTimeToInstant', () => {
  it('places a wall time in its zone', () => {
    expect(zonedTimeToInstant(2026, 3, 23, 9, 0, 0, 'Europe/Berlin').toISOString()).toBe('2026-03-23T08:00:00.000Z');
    expect(zonedTimeToInstant(2026, 3, 30, 9, 0, 0, 'Europe/Berlin').toISOString()).toBe('2026-03-30T07:00:00.000Z');
    expect(zonedTimeToInstant(2026, 1, 15, 9, 15, 30, 'Asia/Kolkata').toISOString()).toBe('2026-01-15T03:45:30.000Z');
    expect(zonedTimeToInstant(2026, 2, 10, 21, 0, 0, 'America/New_York').toISOString()).toBe(
      '2026-02-11T02:00:00.000Z',
    );
  });

  it('moves a wall time in a gap forward by the gap', () => {
    // 02:30 does not exist in Berlin on 2026-03-29: it is 03:30 CEST.
    const gap = zonedTimeToInstant(2026, 3, 29, 2, 30, 0, 'Europe/Berlin');
    expect(zonedIso(gap, 'Europe/Berlin')).toBe('2026-03-29T03:30:00+02:00');
  });

  it('takes the first of a repeated wall time', () => {
    // 02:30 happens twice in Berlin on 2026-10-25: first in CEST.
    const repeated = zonedTimeToInstant(2026, 10, 25, 2, 30, 0, 'Europe/Berlin');
    expect(zonedIso(repeated, 'Europe/Berlin')).toBe('2026-10-25T02:30:00+02:00');
    expect(repeated.toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });
});
