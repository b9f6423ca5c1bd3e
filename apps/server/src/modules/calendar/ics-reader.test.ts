import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dayWindow } from '../../lib/day.ts';
import { CalendarError } from './calendar.types.ts';
import { IcsError, parseIcs } from './ics.ts';
import { createIcsReader, TOO_COMPLEX } from './ics-reader.ts';

const work = readFileSync(path.join(import.meta.dirname, 'fixtures/google-work.ics'), 'utf8');
const reader = createIcsReader();
afterAll(() => reader.close());

describe('ICS reader (a worker thread)', () => {
  it('gives the name and the same events as parsing in this thread, dates included', async () => {
    const window = dayWindow('2026-03-30', 'Europe/Berlin');
    const read = await reader.read(work, window);
    expect(read.name).toBe('Work');
    expect(read.events.length).toBeGreaterThan(0);
    expect(read.events).toEqual(parseIcs(work).events(window));
    // Again (the worker keeps the parsed calendar), for another day.
    const next = await reader.read(work, dayWindow('2026-03-31', 'Europe/Berlin'));
    expect(next.events).toEqual(parseIcs(work).events(dayWindow('2026-03-31', 'Europe/Berlin')));
    expect((await reader.read(work)).events).toEqual([]);
  });

  it("passes on what the calendar leaves out, for its owner's day", async () => {
    const odd = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:x',
      'BEGIN:VEVENT',
      'UID:1',
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20261102T090000Z',
      'RRULE:FREQ=DAILY;BYDAY=XX',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    expect((await reader.read(odd)).notes).toEqual([
      '1 event has a repeat rule Daybook cannot read, so it is left out.',
    ]);
  });

  it('says what is not a calendar', async () => {
    await expect(reader.read('<!doctype html><title>Sign in</title>')).rejects.toBeInstanceOf(IcsError);
  });

  it('gives up on a calendar that takes too long, and the next one is read by a new worker', async () => {
    const slow = createIcsReader({ timeoutMs: 1 });
    const big = work.replace(
      'END:VCALENDAR',
      `${Array.from({ length: 3000 }, (_, i) => `BEGIN:VEVENT\r\nUID:x${i}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T090000Z\r\nSUMMARY:Event ${i}\r\nEND:VEVENT`).join('\r\n')}\r\nEND:VCALENDAR`,
    );
    try {
      await expect(slow.read(big, dayWindow('2026-03-30', 'UTC'))).rejects.toThrow(TOO_COMPLEX);
    } finally {
      await slow.close();
    }
    expect((await reader.read(work)).name).toBe('Work');
  });

  it('refuses work beyond its queue, and after closing', async () => {
    const small = createIcsReader({ maxQueue: 1 });
    const reads = [small.read(work), small.read(work), small.read(work)];
    const results = await Promise.allSettled(reads);
    expect(results.some((r) => r.status === 'rejected' && r.reason instanceof CalendarError)).toBe(true);
    await small.close();
    await expect(small.read(work)).rejects.toBeInstanceOf(CalendarError);
  });
});
