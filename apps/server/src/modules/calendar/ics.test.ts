import { readFileSync } from 'node:fs';
import ICAL from 'ical.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dayWindow, zonedIso } from '../../lib/day.ts';
import type { SourceEvent } from './calendar.types.ts';
import { EVENTS_MAX, IcsError, type ParsedCalendar, parseIcs as parseWithClock } from './ics.ts';

// The budgets' clock stands still, so what a calendar lists never depends on how busy the machine is
// (a loaded CI once cut off a series by wall time); the budgets' own tests move a clock of their own.
const parseIcs = (text: string) => parseWithClock(text, () => 0);

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** A calendar as feeds send it (CRLF), around the given VEVENT/VTIMEZONE lines. */
function ics(...blocks: string[]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Daybook tests//EN', ...blocks, 'END:VCALENDAR', ''].join('\r\n');
}

function vevent(uid: string, ...lines: string[]): string {
  return ['BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT'].join('\r\n');
}

/** A day as the user sees it: times in their zone, all-day events by date. */
function day(calendar: ParsedCalendar, date: string, timeZone = 'Europe/Berlin') {
  return calendar
    .events(dayWindow(date, timeZone))
    .map((e) =>
      e.allDay
        ? { title: e.title, start: e.startDate, end: e.endDate, allDay: true }
        : { title: e.title, start: zonedIso(e.start, timeZone), end: zonedIso(e.end, timeZone), allDay: false },
    )
    .sort((a, b) => a.start.localeCompare(b.start) || a.title.localeCompare(b.title));
}

const titles = (calendar: ParsedCalendar, date: string, timeZone = 'Europe/Berlin') =>
  day(calendar, date, timeZone).map((e) => e.title);

function timed(events: SourceEvent[], title: string) {
  const event = events.find((e) => e.title === title);
  if (!event || event.allDay) throw new Error(`no timed event "${title}"`);
  return event;
}

describe('a Google Calendar secret address', () => {
  const calendar = parseIcs(fixture('google-work.ics'));

  it('reads the calendar name', () => {
    expect(calendar.name).toBe('Work');
  });

  it('keeps a weekly 09:00 meeting at 09:00 local across the March change', () => {
    const before = calendar.events(dayWindow('2026-03-23', 'Europe/Berlin'));
    const after = calendar.events(dayWindow('2026-03-30', 'Europe/Berlin'));
    expect(timed(before, 'Team standup').start.toISOString()).toBe('2026-03-23T08:00:00.000Z');
    expect(timed(after, 'Team standup').start.toISOString()).toBe('2026-03-30T07:00:00.000Z');
    expect(day(calendar, '2026-03-30').find((e) => e.title === 'Team standup')).toEqual({
      title: 'Team standup',
      start: '2026-03-30T09:00:00+02:00',
      end: '2026-03-30T09:30:00+02:00',
      allDay: false,
    });
    expect(timed(after, 'Team standup').location).toBe('Room 4.12');
  });

  it('gives each instance of a series its own id', () => {
    const a = timed(calendar.events(dayWindow('2026-03-23', 'Europe/Berlin')), 'Team standup');
    const b = timed(calendar.events(dayWindow('2026-03-30', 'Europe/Berlin')), 'Team standup');
    expect(a.id).not.toBe(b.id);
    expect(a.id.startsWith('4k2m8q1v7b3n5c9x0z6l1h3j5g@google.com')).toBe(true);
  });

  it('leaves out the week an EXDATE removes, and only that week', () => {
    expect(titles(calendar, '2026-04-13')).not.toContain('Team standup');
    expect(titles(calendar, '2026-04-27')).toContain('Team standup');
  });

  it('shows a moved instance at its new time on its new day, and not at its old one', () => {
    expect(titles(calendar, '2026-04-06')).toEqual([]);
    expect(day(calendar, '2026-04-07')).toEqual([
      {
        title: 'Team standup (moved)',
        start: '2026-04-07T14:00:00+02:00',
        end: '2026-04-07T14:30:00+02:00',
        allDay: false,
      },
    ]);
  });

  it('leaves out a cancelled instance and a cancelled event', () => {
    expect(titles(calendar, '2026-04-20')).toEqual([]);
    expect(day(calendar, '2026-03-30').map((e) => e.title)).toEqual(['Team standup', 'Lunch with Dana']);
  });

  it('reads UTC times', () => {
    expect(day(calendar, '2026-03-30')[1]).toMatchObject({
      title: 'Lunch with Dana',
      start: '2026-03-30T14:00:00+02:00',
      end: '2026-03-30T15:00:00+02:00',
    });
  });

  it('follows INTERVAL and UNTIL', () => {
    const sprint = ['2026-03-05', '2026-03-12', '2026-03-19', '2026-04-02', '2026-04-16', '2026-04-30'].map((d) =>
      titles(calendar, d).includes('Sprint review'),
    );
    // Every other Thursday; UNTIL (13:59:59Z) ends the series before its 16:00 meeting on Apr 30.
    expect(sprint).toEqual([true, false, true, true, true, false]);
  });

  it('follows COUNT', () => {
    const pages = ['2026-03-01', '2026-03-02', '2026-03-06', '2026-03-07'].map((d) =>
      titles(calendar, d).includes('Morning pages'),
    );
    expect(pages).toEqual([false, true, true, false]);
  });

  it('follows a monthly BYDAY rule (last Tuesday)', () => {
    expect(day(calendar, '2026-03-31')).toEqual([
      { title: 'Book club', start: '2026-03-31T18:30:00+02:00', end: '2026-03-31T20:00:00+02:00', allDay: false },
    ]);
    expect(titles(calendar, '2026-04-21')).toEqual([]);
    expect(titles(calendar, '2026-04-28')).toEqual(['Book club']);
    expect(timed(calendar.events(dayWindow('2026-04-28', 'Europe/Berlin')), 'Book club').location).toBe(
      'Café Einstein, Kurfürstenstraße 58, 10785 Berlin, Germany',
    );
  });

  it('shows an all-day event on its date only, in any zone', () => {
    const easter = { title: 'Easter Sunday', start: '2026-04-05', end: '2026-04-06', allDay: true };
    expect(day(calendar, '2026-04-05')).toEqual([easter]);
    expect(day(calendar, '2026-04-05', 'Pacific/Kiritimati')).toEqual([easter]);
    expect(day(calendar, '2026-04-05', 'Pacific/Pago_Pago')).toEqual([easter]);
    expect(titles(calendar, '2026-04-04')).toEqual([]);
  });

  it('shows a multi-day all-day event on each day it covers', () => {
    const offsite = { title: 'Offsite', start: '2026-04-10', end: '2026-04-13', allDay: true };
    expect(day(calendar, '2026-04-10')).toEqual([offsite]);
    expect(day(calendar, '2026-04-11')).toEqual([offsite]);
    expect(day(calendar, '2026-04-12')).toEqual([offsite]);
    expect(titles(calendar, '2026-04-13')).not.toContain('Offsite');
    expect(titles(calendar, '2026-04-09')).not.toContain('Offsite');
  });
});

describe('an Outlook published calendar (Windows zone names)', () => {
  const calendar = parseIcs(fixture('outlook-published.ics'));

  it('reads its VTIMEZONE for a Windows zone name, across the March change', () => {
    expect(day(calendar, '2026-03-23')).toEqual([
      { title: 'Design review', start: '2026-03-23T10:00:00+01:00', end: '2026-03-23T11:00:00+01:00', allDay: false },
    ]);
    expect(day(calendar, '2026-03-30')).toEqual([
      { title: 'Design review', start: '2026-03-30T10:00:00+02:00', end: '2026-03-30T11:00:00+02:00', allDay: false },
    ]);
    expect(timed(calendar.events(dayWindow('2026-03-30', 'Europe/Berlin')), 'Design review').location).toBe(
      'Microsoft Teams Meeting',
    );
  });

  it('applies an EXDATE with a TZID', () => {
    expect(titles(calendar, '2026-03-31')).toEqual([]);
    expect(titles(calendar, '2026-04-01')).toEqual([]);
    expect(titles(calendar, '2026-04-08')).toEqual(['Design review']);
  });

  it('moves an instance to another time on the same day', () => {
    expect(day(calendar, '2026-03-25')).toEqual([
      { title: 'Design review', start: '2026-03-25T15:30:00+01:00', end: '2026-03-25T16:30:00+01:00', allDay: false },
    ]);
  });

  it('ends the series at UNTIL, inclusive', () => {
    expect(titles(calendar, '2026-06-01')).toEqual(['Design review']);
    expect(titles(calendar, '2026-06-03')).toEqual([]);
  });

  it('maps a Windows zone name without a VTIMEZONE to its IANA zone, with its summer time', () => {
    // 08:00 in Los Angeles on 2026-03-18 is PDT (-07:00): 16:00 in Berlin, still on CET.
    expect(day(calendar, '2026-03-18')).toContainEqual({
      title: 'Forecast call',
      start: '2026-03-18T16:00:00+01:00',
      end: '2026-03-18T17:00:00+01:00',
      allDay: false,
    });
  });

  it("reads Outlook's TZID=UTC", () => {
    expect(day(calendar, '2026-03-19')).toEqual([
      { title: 'Release sync', start: '2026-03-19T15:00:00+01:00', end: '2026-03-19T15:30:00+01:00', allDay: false },
    ]);
  });

  it('shows all-day events, including midnight-to-midnight ones flagged all-day', () => {
    expect(day(calendar, '2026-04-06')).toContainEqual({
      title: 'Public holiday',
      start: '2026-04-06',
      end: '2026-04-07',
      allDay: true,
    });
    const conference = { title: 'Conference', start: '2026-04-22', end: '2026-04-24', allDay: true };
    expect(day(calendar, '2026-04-23')).toEqual([conference]);
    expect(day(calendar, '2026-04-23', 'America/Los_Angeles')).toEqual([conference]);
    expect(titles(calendar, '2026-04-24')).toEqual([]);
  });
});

describe('an iCloud calendar in another time zone', () => {
  const calendar = parseIcs(fixture('icloud-personal.ics'));

  it('reads the name trimmed', () => {
    expect(calendar.name).toBe('Family & Friends');
  });

  it('shows a 09:00 New York event at 15:00 for a user in Berlin, and at 09:00 for one in New York', () => {
    expect(day(calendar, '2026-02-10')).toEqual([
      { title: 'Check-up', start: '2026-02-10T15:00:00+01:00', end: '2026-02-10T16:00:00+01:00', allDay: false },
    ]);
    expect(day(calendar, '2026-02-10', 'America/New_York')).toContainEqual({
      title: 'Check-up',
      start: '2026-02-10T09:00:00-05:00',
      end: '2026-02-10T10:00:00-05:00',
      allDay: false,
    });
  });

  it('puts a late evening New York event on the next Berlin date', () => {
    expect(titles(calendar, '2026-02-10')).not.toContain('Call with Grandma');
    expect(day(calendar, '2026-02-11')).toContainEqual({
      title: 'Call with Grandma',
      start: '2026-02-11T02:30:00+01:00',
      end: '2026-02-11T04:30:00+01:00',
      allDay: false,
    });
    expect(titles(calendar, '2026-02-10', 'America/New_York')).toContain('Call with Grandma');
  });

  it('follows the New York summer time in the weeks Berlin has not changed yet', () => {
    expect(day(calendar, '2026-02-16')).toContainEqual(expect.objectContaining({ start: '2026-02-16T15:00:00+01:00' }));
    expect(day(calendar, '2026-03-16')).toContainEqual({
      title: 'Piano lesson',
      start: '2026-03-16T14:00:00+01:00',
      end: '2026-03-16T15:00:00+01:00',
      allDay: false,
    });
  });

  it('keeps http(s) URLs and drops others', () => {
    const checkUp = timed(calendar.events(dayWindow('2026-02-10', 'Europe/Berlin')), 'Check-up');
    expect(checkUp.url).toBe('https://example.com/appointments/8841?ref=ical');
    expect(checkUp.location).toBe('Dr. Patel, 350 5th Ave, New York');
    const call = timed(calendar.events(dayWindow('2026-02-11', 'Europe/Berlin')), 'Call with Grandma');
    expect(call.url).toBeNull();
    expect(call.location).toBeNull();
  });

  it("reads floating times in the user's zone", () => {
    expect(day(calendar, '2026-02-11')).toContainEqual({
      title: 'Morning run',
      start: '2026-02-11T07:00:00+01:00',
      end: '2026-02-11T07:30:00+01:00',
      allDay: false,
    });
    expect(day(calendar, '2026-02-11', 'America/New_York')).toContainEqual({
      title: 'Morning run',
      start: '2026-02-11T07:00:00-05:00',
      end: '2026-02-11T07:30:00-05:00',
      allDay: false,
    });
    // INTERVAL=2: every other day.
    expect(titles(calendar, '2026-02-12')).not.toContain('Morning run');
    expect(titles(calendar, '2026-02-13')).toContain('Morning run');
  });

  it('reads an IANA TZID that has no VTIMEZONE in the file', () => {
    // 10:00 in Tokyo is 02:00 in Berlin.
    expect(day(calendar, '2026-02-12')).toContainEqual({
      title: 'Video call with Kenji',
      start: '2026-02-12T02:00:00+01:00',
      end: '2026-02-12T03:00:00+01:00',
      allDay: false,
    });
  });

  it('reads DURATION and names an untitled event', () => {
    expect(day(calendar, '2026-02-13')).toContainEqual({
      title: '(No title)',
      start: '2026-02-13T18:00:00+01:00',
      end: '2026-02-13T18:45:00+01:00',
      allDay: false,
    });
  });

  it('repeats a yearly all-day event and a multi-day weekend', () => {
    const birthday = { title: "Mia's birthday", start: '2027-02-12', end: '2027-02-13', allDay: true };
    expect(day(calendar, '2027-02-12')).toContainEqual(birthday);
    const weekend = { title: 'Weekend in Vermont', start: '2026-02-14', end: '2026-02-16', allDay: true };
    expect(day(calendar, '2026-02-14')).toContainEqual(weekend);
    expect(day(calendar, '2026-02-15')).toContainEqual(weekend);
    expect(titles(calendar, '2026-02-16')).not.toContain('Weekend in Vermont');
  });
});

describe('an iCalcreator feed whose VTIMEZONE begins after its older events', () => {
  // iCalcreator writes a zone's transitions from a date it is given (here the feed's day, June 2024): one
  // STANDARD and one DAYLIGHT, later onsets as RDATEs (its VtimezonePopulateFactory; output as in its README).
  const calendar = parseIcs(fixture('icalcreator-berlin.ics'));
  const startOf = (date: string, title: string) =>
    timed(calendar.events(dayWindow(date, 'UTC')), title).start.toISOString();

  it("reads dates before the zone's first onset by IANA's rules for Europe/Berlin, winter and summer", () => {
    expect(startOf('2023-12-05', 'Adventsbasar 2023')).toBe('2023-12-05T08:00:00.000Z');
    expect(startOf('2023-07-12', 'Sommerfest')).toBe('2023-07-12T17:00:00.000Z');
    expect(timed(calendar.events(dayWindow('2023-07-12', 'UTC')), 'Sommerfest').end.toISOString()).toBe(
      '2023-07-12T20:00:00.000Z',
    );
    expect(startOf('2024-01-10', 'Chorprobe')).toBe('2024-01-10T18:30:00.000Z');
    expect(startOf('2024-07-10', 'Chorprobe')).toBe('2024-07-10T17:30:00.000Z');
  });

  it('reads the dates its VTIMEZONE covers by the file', () => {
    expect(startOf('2024-12-10', 'Adventsbasar 2024')).toBe('2024-12-10T08:00:00.000Z');
    expect(startOf('2024-11-13', 'Chorprobe')).toBe('2024-11-13T18:30:00.000Z');
    expect(startOf('2025-07-09', 'Chorprobe')).toBe('2025-07-09T17:30:00.000Z');
  });
});

describe('time zones', () => {
  const at = (tzid: string) =>
    parseIcs(
      ics(vevent('z', `DTSTART;TZID=${tzid}:20260115T120000`, `DTEND;TZID=${tzid}:20260115T130000`, 'SUMMARY:Noon')),
    );
  const startOf = (calendar: ParsedCalendar) =>
    calendar.events(dayWindow('2026-01-15', 'UTC')).map((e) => (e.allDay ? e.startDate : e.start.toISOString()));

  it.each([
    ['W. Europe Standard Time', '2026-01-15T11:00:00.000Z'],
    ['Central Europe Standard Time', '2026-01-15T11:00:00.000Z'],
    ['Romance Standard Time', '2026-01-15T11:00:00.000Z'],
    ['GMT Standard Time', '2026-01-15T12:00:00.000Z'],
    ['Eastern Standard Time', '2026-01-15T17:00:00.000Z'],
    ['Pacific Standard Time', '2026-01-15T20:00:00.000Z'],
    ['"AUS Eastern Standard Time"', '2026-01-15T01:00:00.000Z'],
    ['Tokyo Standard Time', '2026-01-15T03:00:00.000Z'],
    ['India Standard Time', '2026-01-15T06:30:00.000Z'],
    ['China Standard Time', '2026-01-15T04:00:00.000Z'],
    ['UTC', '2026-01-15T12:00:00.000Z'],
  ])('maps the Windows zone %s', (tzid, expected) => {
    expect(startOf(at(tzid))).toEqual([expected]);
  });

  it('reads IANA names, also behind an old exporter path', () => {
    expect(startOf(at('America/Sao_Paulo'))).toEqual(['2026-01-15T15:00:00.000Z']);
    expect(startOf(at('/mozilla.org/20050126_1/Europe/Berlin'))).toEqual(['2026-01-15T11:00:00.000Z']);
  });

  it('treats an unknown TZID without a VTIMEZONE as UTC', () => {
    expect(startOf(at('Mars/Olympus_Mons'))).toEqual(['2026-01-15T12:00:00.000Z']);
  });

  it("keeps each calendar's own zone definitions to itself", () => {
    const custom = (offset: string) =>
      [
        'BEGIN:VTIMEZONE',
        'TZID:Custom/Zone',
        'BEGIN:STANDARD',
        'DTSTART:19700101T000000',
        `TZOFFSETFROM:${offset}`,
        `TZOFFSETTO:${offset}`,
        'END:STANDARD',
        'END:VTIMEZONE',
      ].join('\r\n');
    const event = vevent('c', 'DTSTART;TZID=Custom/Zone:20260115T120000', 'SUMMARY:Custom');
    const a = parseIcs(ics(custom('+0500'), event));
    const b = parseIcs(ics(custom('+0900'), event));
    const c = parseIcs(ics(event));
    expect(startOf(a)).toEqual(['2026-01-15T07:00:00.000Z']);
    expect(startOf(b)).toEqual(['2026-01-15T03:00:00.000Z']);
    expect(startOf(c)).toEqual(['2026-01-15T12:00:00.000Z']);
    expect(startOf(a)).toEqual(['2026-01-15T07:00:00.000Z']);
  });

  it("ignores zones registered in ical.js's process-wide TimezoneService", () => {
    const bogus = new ICAL.Timezone({
      tzid: 'Europe/Berlin',
      component: ICAL.Component.fromString(
        'BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0500\r\nTZOFFSETTO:+0500\r\nEND:STANDARD\r\nEND:VTIMEZONE',
      ),
    });
    ICAL.TimezoneService.register(bogus, 'Europe/Berlin');
    try {
      expect(startOf(at('Europe/Berlin'))).toEqual(['2026-01-15T11:00:00.000Z']);
    } finally {
      ICAL.TimezoneService.remove('Europe/Berlin');
    }
  });

  /** A VTIMEZONE written from October 2024 on, as iCalcreator does, under another name. */
  const fromOctober2024 = (tzid: string) =>
    [
      'BEGIN:VTIMEZONE',
      `TZID:${tzid}`,
      'BEGIN:STANDARD',
      'DTSTART:20241027T030000',
      'TZOFFSETFROM:+0200',
      'TZOFFSETTO:+0100',
      'RDATE:20251026T030000',
      'END:STANDARD',
      'BEGIN:DAYLIGHT',
      'DTSTART:20250330T020000',
      'TZOFFSETFROM:+0100',
      'TZOFFSETTO:+0200',
      'END:DAYLIGHT',
      'END:VTIMEZONE',
    ].join('\r\n');

  it.each(['Customized Time Zone', 'W. Europe Standard Time'])(
    "reads dates before the first onset of %s (no IANA name) at that onset's TZOFFSETFROM",
    (tzid) => {
      const calendar = parseIcs(
        ics(
          fromOctober2024(tzid),
          vevent('w', `DTSTART;TZID=${tzid}:20231205T090000`, 'SUMMARY:Winter'),
          vevent('s', `DTSTART;TZID=${tzid}:20230712T090000`, 'SUMMARY:Summer'),
          vevent('c', `DTSTART;TZID=${tzid}:20241210T090000`, 'SUMMARY:Covered'),
        ),
      );
      const startOf = (date: string, title: string) =>
        timed(calendar.events(dayWindow(date, 'UTC')), title).start.toISOString();
      // What calendar apps guess for a zone they know only from the file: the offset before its first change.
      expect(startOf('2023-12-05', 'Winter')).toBe('2023-12-05T07:00:00.000Z');
      expect(startOf('2023-07-12', 'Summer')).toBe('2023-07-12T07:00:00.000Z');
      expect(startOf('2024-12-10', 'Covered')).toBe('2024-12-10T08:00:00.000Z');
    },
  );

  it("follows the file where it covers a date, even where IANA's rules differ", () => {
    // Written with rules IANA no longer has (Brazil ended summer time in 2019).
    const saoPaulo = [
      'BEGIN:VTIMEZONE',
      'TZID:America/Sao_Paulo',
      'BEGIN:DAYLIGHT',
      'DTSTART:20181104T000000',
      'TZOFFSETFROM:-0300',
      'TZOFFSETTO:-0200',
      'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
      'END:DAYLIGHT',
      'BEGIN:STANDARD',
      'DTSTART:20190217T000000',
      'TZOFFSETFROM:-0200',
      'TZOFFSETTO:-0300',
      'RRULE:FREQ=YEARLY;BYMONTH=2;BYDAY=3SU',
      'END:STANDARD',
      'END:VTIMEZONE',
    ].join('\r\n');
    const calendar = parseIcs(
      ics(
        saoPaulo,
        vevent('c', 'DTSTART;TZID=America/Sao_Paulo:20260115T120000', 'SUMMARY:Covered'),
        vevent('b', 'DTSTART;TZID=America/Sao_Paulo:20180115T120000', 'SUMMARY:Before'),
      ),
    );
    const startOf = (date: string, title: string) =>
      timed(calendar.events(dayWindow(date, 'UTC')), title).start.toISOString();
    expect(startOf('2026-01-15', 'Covered')).toBe('2026-01-15T14:00:00.000Z');
    // Before its first onset, IANA's rules: summer time (-02:00) in January 2018 too.
    expect(startOf('2018-01-15', 'Before')).toBe('2018-01-15T14:00:00.000Z');
  });

  it('moves a wall time in the spring gap forward', () => {
    const calendar = parseIcs(ics(vevent('g', 'DTSTART;TZID=Europe/Berlin:20260329T023000', 'SUMMARY:Early')));
    expect(day(calendar, '2026-03-29')).toEqual([
      { title: 'Early', start: '2026-03-29T03:30:00+02:00', end: '2026-03-29T03:30:00+02:00', allDay: false },
    ]);
  });
});

describe('recurrence details', () => {
  const daily = (...extra: string[]) =>
    parseIcs(
      ics(
        vevent(
          'd',
          'DTSTART;TZID=Europe/Berlin:20260316T090000',
          'DTEND;TZID=Europe/Berlin:20260316T100000',
          'RRULE:FREQ=DAILY;UNTIL=20260331T220000Z',
          'SUMMARY:Daily',
          ...extra,
        ),
      ),
    );
  const dates = (calendar: ParsedCalendar) =>
    ['2026-03-16', '2026-03-17', '2026-03-18', '2026-03-19', '2026-03-20'].filter((d) =>
      titles(calendar, d).includes('Daily'),
    );

  it('applies EXDATEs written in UTC, as lists, and as dates', () => {
    expect(dates(daily('EXDATE:20260317T080000Z,20260319T080000Z'))).toEqual([
      '2026-03-16',
      '2026-03-18',
      '2026-03-20',
    ]);
    expect(dates(daily('EXDATE;VALUE=DATE:20260318'))).toEqual([
      '2026-03-16',
      '2026-03-17',
      '2026-03-19',
      '2026-03-20',
    ]);
  });

  it('adds RDATEs', () => {
    const calendar = daily('RDATE;TZID=Europe/Berlin:20260404T150000');
    expect(day(calendar, '2026-04-04')).toEqual([
      { title: 'Daily', start: '2026-04-04T15:00:00+02:00', end: '2026-04-04T16:00:00+02:00', allDay: false },
    ]);
    expect(titles(calendar, '2026-04-03')).toEqual([]);
  });

  it('brings an instance moved in from another day, and drops it where it was', () => {
    const calendar = parseIcs(
      ics(
        vevent(
          'w',
          'DTSTART;TZID=Europe/Berlin:20260302T090000',
          'DURATION:PT1H',
          'RRULE:FREQ=WEEKLY',
          'SUMMARY:Weekly',
        ),
        vevent(
          'w',
          'RECURRENCE-ID;TZID=Europe/Berlin:20260316T090000',
          'DTSTART;TZID=Europe/Berlin:20260312T170000',
          'DTEND;TZID=Europe/Berlin:20260312T180000',
          'SUMMARY:Weekly (early)',
        ),
      ),
    );
    expect(day(calendar, '2026-03-12')).toEqual([
      { title: 'Weekly (early)', start: '2026-03-12T17:00:00+01:00', end: '2026-03-12T18:00:00+01:00', allDay: false },
    ]);
    expect(titles(calendar, '2026-03-16')).toEqual([]);
    expect(titles(calendar, '2026-03-09')).toEqual(['Weekly']);
    expect(titles(calendar, '2026-03-23')).toEqual(['Weekly']);
  });

  it('follows BYDAY with several days and COUNT', () => {
    const calendar = parseIcs(
      ics(
        vevent(
          'b',
          'DTSTART;TZID=Europe/Berlin:20260302T180000',
          'DTEND;TZID=Europe/Berlin:20260302T190000',
          'RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=4',
          'SUMMARY:Gym',
        ),
      ),
    );
    const seen = ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-06', '2026-03-09', '2026-03-11'].filter((d) =>
      titles(calendar, d).includes('Gym'),
    );
    expect(seen).toEqual(['2026-03-02', '2026-03-04', '2026-03-06', '2026-03-09']);
  });

  it('reads a date without VALUE=DATE, a missing DTEND, and a DURATION on all-day events', () => {
    const calendar = parseIcs(
      ics(
        vevent('one', 'DTSTART:20260501', 'SUMMARY:Labour Day'),
        vevent('two', 'DTSTART;VALUE=DATE:20260514', 'DURATION:P2D', 'SUMMARY:Trip'),
      ),
    );
    expect(day(calendar, '2026-05-01')).toEqual([
      { title: 'Labour Day', start: '2026-05-01', end: '2026-05-02', allDay: true },
    ]);
    expect(titles(calendar, '2026-05-02')).toEqual([]);
    expect(titles(calendar, '2026-05-15')).toEqual(['Trip']);
    expect(titles(calendar, '2026-05-16')).toEqual([]);
  });

  it('finds the instance of a daily event that started a hundred years ago', () => {
    const calendar = parseIcs(
      ics(
        vevent(
          'old',
          'DTSTART;TZID=Europe/Berlin:19260101T080000',
          'DURATION:PT15M',
          'RRULE:FREQ=DAILY',
          'SUMMARY:Old',
        ),
      ),
    );
    expect(day(calendar, '2026-07-01')).toEqual([
      { title: 'Old', start: '2026-07-01T08:00:00+02:00', end: '2026-07-01T08:15:00+02:00', allDay: false },
    ]);
  });

  it('skips rules that would never end or never match, caps one that repeats by the second, and lists the rest', () => {
    const calendar = parseIcs(
      ics(
        vevent('s', 'DTSTART:20200101T000000Z', 'RRULE:FREQ=SECONDLY', 'SUMMARY:Every second'),
        // DTSTART is a Tuesday: every seventh day is never a Monday.
        vevent('n', 'DTSTART:20260303T090000Z', 'RRULE:FREQ=DAILY;INTERVAL=7;BYDAY=MO', 'SUMMARY:Never'),
        // Counted minute by minute from 2000 (its BY part keeps it from being computed directly).
        vevent(
          'm',
          'DTSTART:20000101T000000Z',
          'RRULE:FREQ=MINUTELY;BYSECOND=0;COUNT=900000000',
          'SUMMARY:Every minute',
        ),
        // ical.js refuses to iterate this one.
        vevent('r', 'DTSTART:20260105T090000Z', 'RRULE:FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=15', 'SUMMARY:Refused'),
        vevent('ok', 'DTSTART:20260316T100000Z', 'DTEND:20260316T110000Z', 'SUMMARY:Normal'),
      ),
    );
    // Every second: shown once a minute, a hundred times a day (said in the notes), not crowding out the rest.
    const shown = titles(calendar, '2026-03-16', 'UTC');
    expect(shown.filter((t) => t === 'Every second')).toHaveLength(100);
    expect(shown.filter((t) => t !== 'Every second')).toEqual(['Normal']);
    // A second day on the same parse answers as well.
    expect(titles(calendar, '2026-03-17', 'UTC').filter((t) => t !== 'Every second')).toEqual([]);
  });
});

describe('rules real producers write', () => {
  it("Exchange's BYDAY with spaces (MO, TU, WE) is read as meant, and nothing is reported", () => {
    const calendar = parseIcs(
      ics(
        vevent(
          'cdo',
          'DTSTART;TZID=Europe/Berlin:20261102T090000',
          'DTEND;TZID=Europe/Berlin:20261102T091500',
          'RRULE:FREQ=WEEKLY;BYDAY=MO, TU, WE, TH, FR',
          'SUMMARY:Standup',
        ),
      ),
    );
    expect(day(calendar, '2026-11-27')).toEqual([
      { title: 'Standup', start: '2026-11-27T09:00:00+01:00', end: '2026-11-27T09:15:00+01:00', allDay: false },
    ]);
    expect(day(calendar, '2026-11-28')).toEqual([]);
    expect(calendar.notes).toEqual([]);
  });

  it('a rule that cannot be read leaves its event out, keeps every other one, and says so', () => {
    const calendar = parseIcs(
      ics(
        vevent(
          'bad',
          'DTSTART:20261102T090000Z',
          'DTEND:20261102T100000Z',
          'RRULE:FREQ=WEEKLY;BYDAY=XX',
          'SUMMARY:Odd',
        ),
        vevent('ok', 'DTSTART:20261127T120000Z', 'DTEND:20261127T130000Z', 'SUMMARY:Lunch'),
      ),
    );
    expect(day(calendar, '2026-11-27').map((e) => e.title)).toEqual(['Lunch']);
    expect(calendar.notes).toEqual(['1 event has a repeat rule Daybook cannot read, so it is left out.']);
  });

  it('an all-day event whose end is its start (holiday feeds) is that one day', () => {
    const calendar = parseIcs(
      ics(vevent('h', 'DTSTART;VALUE=DATE:20261225', 'DTEND;VALUE=DATE:20261225', 'SUMMARY:Christmas Day')),
    );
    expect(day(calendar, '2026-12-25')).toEqual([
      { title: 'Christmas Day', start: '2026-12-25', end: '2026-12-26', allDay: true },
    ]);
    expect(day(calendar, '2026-12-26')).toEqual([]);
  });

  it('an event repeating every few seconds, begun months ago, is shown at most once a minute, and said so', () => {
    const calendar = parseIcs(
      ics(
        vevent(
          's',
          'DTSTART:20260601T090000Z',
          'DTEND:20260601T090001Z',
          'RRULE:FREQ=SECONDLY;INTERVAL=30',
          'SUMMARY:Tick',
        ),
      ),
    );
    const ticks = day(calendar, '2026-11-27', 'UTC');
    expect(ticks).toHaveLength(100);
    expect(ticks.slice(0, 2).map((e) => e.start)).toEqual(['2026-11-27T00:00:00+00:00', '2026-11-27T00:01:00+00:00']);
    expect(calendar.notes).toEqual([
      '1 event repeats every few seconds: shown at most once a minute.',
      '1 event repeats more than 100 times a day: each day lists the first 100.',
    ]);
  });
});

describe('text', () => {
  it('strips control characters, trims, and caps lengths', () => {
    const long = 'x'.repeat(400);
    const calendar = parseIcs(
      ics(
        `X-WR-CALNAME:\u0007 ${'N'.repeat(150)}`,
        vevent('t', 'DTSTART:20260316T100000Z', 'SUMMARY:  Stand\u0000up\\nnotes \u001b[31m ', 'LOCATION:   '),
        vevent('u', 'DTSTART:20260316T110000Z', `SUMMARY:${long}`, 'LOCATION:Room\u0007 7', 'URL:ftp://example.com/x'),
      ),
    );
    expect(calendar.name).toBe('N'.repeat(100));
    const events = calendar.events(dayWindow('2026-03-16', 'UTC'));
    expect(events.map((e) => [e.title, e.location, e.url])).toEqual([
      ['Standup notes [31m', null, null],
      ['x'.repeat(300), 'Room 7', null],
    ]);
  });

  it('keeps ids unique when a feed repeats a UID', () => {
    const calendar = parseIcs(
      ics(
        vevent('dup', 'DTSTART:20260316T100000Z', 'SUMMARY:A'),
        vevent('dup', 'DTSTART:20260316T120000Z', 'SUMMARY:B'),
      ),
    );
    const ids = calendar.events(dayWindow('2026-03-16', 'UTC')).map((e) => e.id);
    expect(new Set(ids).size).toBe(2);
  });

  it('skips a malformed event and keeps the others', () => {
    const calendar = parseIcs(
      ics(
        vevent('bad', 'DTSTART:20261399T250000Z', 'SUMMARY:Broken'),
        vevent('nostart', 'SUMMARY:No start'),
        vevent('good', 'DTSTART:20260316T100000Z', 'SUMMARY:Fine'),
      ),
    );
    expect(titles(calendar, '2026-03-16', 'UTC')).toEqual(['Fine']);
    expect(calendar.name).toBeNull();
  });
});

describe('not a calendar', () => {
  it.each([
    ['an HTML page', '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Sign in</body></html>'],
    ['JSON', '{"error":"not found"}'],
    ['nothing', ''],
    ['garbage', '\u0000\u0001binary\u00ff'],
    ['a vCard', 'BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada\r\nEND:VCARD\r\n'],
    ['a broken calendar', 'BEGIN:VCALENDAR\r\nthis is not a property\r\nEND:VCALENDAR\r\n'],
  ])('refuses %s with IcsError', (_what, text) => {
    let error: unknown;
    try {
      parseIcs(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(IcsError);
    expect(error).toMatchObject({
      code: 'not_a_calendar',
      message: 'That address did not return a calendar (an .ics file).',
    });
  });

  it('accepts an empty calendar and a byte order mark', () => {
    const calendar = parseIcs(`\uFEFF${ics()}`);
    expect(calendar.events(dayWindow('2026-03-16', 'UTC'))).toEqual([]);
  });
});

describe('a large calendar', () => {
  it('reads a 2 MB feed with thousands of events and answers several days from one parse', () => {
    const blocks: string[] = [];
    const filler = 'Notes for the meeting, with an agenda that goes on for a while. '.repeat(8);
    for (let i = 0; i < 3000; i++) {
      const date = new Date(Date.UTC(2025, 0, 1) + (i % 1000) * 86_400_000)
        .toISOString()
        .slice(0, 10)
        .replaceAll('-', '');
      const hour = String(8 + Math.floor(i / 1000)).padStart(2, '0');
      blocks.push(
        vevent(
          `single-${i}`,
          `DTSTART;TZID=Europe/Berlin:${date}T${hour}0000`,
          'DURATION:PT30M',
          `SUMMARY:Single ${i}`,
          `DESCRIPTION:${filler}`,
        ),
      );
    }
    for (let i = 0; i < 300; i++) {
      blocks.push(
        vevent(
          `weekly-${i}`,
          'DTSTART;TZID=Europe/Berlin:20200106T120000',
          'DURATION:PT1H',
          'RRULE:FREQ=WEEKLY',
          `SUMMARY:Weekly ${i}`,
        ),
      );
    }
    const text = ics(...blocks);
    expect(text.length).toBeGreaterThan(2_000_000);
    const calendar = parseIcs(text);
    // 2026-03-16 is day 439 of the single events and a Monday.
    const monday = calendar.events(dayWindow('2026-03-16', 'Europe/Berlin'));
    expect(monday.map((e) => e.title).filter((t) => t.startsWith('Single'))).toEqual([
      'Single 439',
      'Single 1439',
      'Single 2439',
    ]);
    expect(monday.filter((e) => e.title.startsWith('Weekly'))).toHaveLength(300);
    expect(calendar.events(dayWindow('2026-03-17', 'Europe/Berlin'))).toHaveLength(3);
  });
});

describe('hostile feeds', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The longest line ical.js's parameter parser is handed while `run` runs (it rescans to the value per parameter). */
  function longestParameterLine(run: () => void): number {
    const parser = ICAL.parse as unknown as { _parseParameters: (line: string, ...rest: unknown[]) => unknown };
    let longest = 0;
    const original = parser._parseParameters;
    vi.spyOn(parser, '_parseParameters').mockImplementation((line, ...rest) => {
      longest = Math.max(longest, line.length);
      return original(line, ...rest);
    });
    run();
    return longest;
  }

  const fold = (line: string) => (line.match(/.{1,74}/g) ?? []).join('\r\n ');
  const manyParams = (n: number) => `X-A${';A='.repeat(n)}:x`;
  const good = vevent('good', 'DTSTART:20260316T100000Z', 'DTEND:20260316T110000Z', 'SUMMARY:Good');

  describe('lines with too many parameters', () => {
    it('leaves out the event holding a line of 200,000 parameters, before ical.js reads it, and keeps the rest', () => {
      for (const line of [manyParams(200_000), fold(manyParams(200_000))]) {
        const text = ics(vevent('bad', 'DTSTART:20260316T090000Z', line, 'SUMMARY:Bad'), good);
        expect(text.length).toBeGreaterThan(600_000);
        let calendar: ParsedCalendar | undefined;
        expect(longestParameterLine(() => (calendar = parseIcs(text)))).toBeLessThan(1000);
        expect(titles(calendar as ParsedCalendar, '2026-03-16', 'UTC')).toEqual(['Good']);
      }
    });

    it("drops such a line outside any event alone (the reviewer's 1 MB line), so the calendar still reads", () => {
      const calendar = parseIcs(ics(manyParams(333_333), 'X-WR-CALNAME;A=;A=;A=:Team', good));
      expect(titles(calendar, '2026-03-16', 'UTC')).toEqual(['Good']);
      expect(calendar.name).toBe('Team');
      const named = parseIcs(ics(`X-WR-CALNAME${';A=1'.repeat(101)}:Team`, good));
      expect(named.name).toBeNull();
      expect(titles(named, '2026-03-16', 'UTC')).toEqual(['Good']);
    });

    it('keeps 100 parameters and drops 101', () => {
      const at = (n: number) =>
        titles(
          parseIcs(ics(vevent('p', 'DTSTART:20260316T090000Z', manyParams(n), 'SUMMARY:Params'))),
          '2026-03-16',
          'UTC',
        );
      expect(at(100)).toEqual(['Params']);
      expect(at(101)).toEqual([]);
    });

    it('counts parameters the way ical.js reads them, quotes and all', () => {
      const tricks = [
        // A quote opens only right after a parameter's "=": here ical.js sees 200 parameters inside it.
        `X-A;A=b=";${'B=;'.repeat(200)}":x`,
        // A ":" inside a quoted value does not end the parameters.
        `X-A;A="x:"${';B='.repeat(200)}:x`,
        // MEMBER's quotes stay open across '","' ...
        `ATTENDEE;MEMBER="mailto:a@example.com","mailto:b@example.com"${';B='.repeat(200)}:mailto:c@example.com`,
        // ... and another parameter's do not.
        `X-A;CN="a",";${'B=;'.repeat(200)}":x`,
        // A ":" in a parameter's name does not end them either.
        `X-A;A:${';B='.repeat(200)}:x`,
      ];
      for (const line of tricks) {
        const calendar = parseIcs(ics(vevent('t', 'DTSTART:20260316T090000Z', line, 'SUMMARY:Trick'), good));
        expect(titles(calendar, '2026-03-16', 'UTC')).toEqual(['Good']);
      }
      // Ordinary quoted parameters with ":" and ";" inside them are read as before.
      const attendee =
        'ATTENDEE;CN="Smith; Jo";DELEGATED-FROM="mailto:a@example.com","mailto:b@example.com";ROLE=REQ-PARTICIPANT:mailto:jo@example.com';
      const calendar = parseIcs(ics(vevent('a', 'DTSTART:20260316T090000Z', attendee, 'SUMMARY:Invited')));
      expect(titles(calendar, '2026-03-16', 'UTC')).toEqual(['Invited']);
    });

    it('keeps long values, and parameters up to 10,000 characters, but not longer', () => {
      const html = `<html><body style="margin:0;padding:0">${'<p style="color:#333;font:12px sans-serif">Agenda; notes</p>'.repeat(400)}</body></html>`;
      const calendar = parseIcs(
        ics(
          vevent(
            'long',
            'DTSTART:20260316T090000Z',
            'SUMMARY:Long',
            fold(`DESCRIPTION:${'Long notes. '.repeat(100_000)}`),
            fold(`X-ALT-DESC;FMTTYPE=text/html:${html}`),
          ),
          vevent(
            'cn',
            'DTSTART:20260316T100000Z',
            'SUMMARY:Long name',
            fold(`ATTENDEE;CN="${'N'.repeat(9000)}":mailto:a@example.com`),
          ),
          vevent(
            'over',
            'DTSTART:20260316T110000Z',
            'SUMMARY:Too long',
            fold(`ATTENDEE;CN="${'N'.repeat(11_000)}":mailto:a@example.com`),
          ),
        ),
      );
      expect(titles(calendar, '2026-03-16', 'UTC')).toEqual(['Long', 'Long name']);
    });

    it('leaves out a time zone holding such a line, and its TZID then reads as UTC', () => {
      const zone = [
        'BEGIN:VTIMEZONE',
        'TZID:Custom/Zone',
        manyParams(150),
        'BEGIN:STANDARD',
        'DTSTART:19700101T000000',
        'TZOFFSETFROM:+0500',
        'TZOFFSETTO:+0500',
        'END:STANDARD',
        'END:VTIMEZONE',
      ].join('\r\n');
      const calendar = parseIcs(ics(zone, vevent('c', 'DTSTART;TZID=Custom/Zone:20260316T120000', 'SUMMARY:Custom')));
      expect(timed(calendar.events(dayWindow('2026-03-16', 'UTC')), 'Custom').start.toISOString()).toBe(
        '2026-03-16T12:00:00.000Z',
      );
    });
  });

  describe('expensive recurrences', () => {
    // Every day's last day of the month, per ical.js, which expands every day of each year for it.
    const costly = 'RRULE:FREQ=YEARLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12';
    const weekly = vevent('w', 'DTSTART:20260303T080000Z', 'RRULE:FREQ=WEEKLY', 'SUMMARY:Weekly');
    const costlyEvents = (n: number) =>
      Array.from({ length: n }, (_, i) => vevent(`y${i}`, 'DTSTART:20200131T090000Z', costly, `SUMMARY:Costly ${i}`));

    /**
     * A budget clock that advances `ms` for every ical.js step of a costly rule (and not otherwise), so a
     * slow rule is slow on any machine, busy or not; counts those steps, which is the work the test bounds.
     */
    function slowCostlyRules(ms: number) {
      let late = 0;
      const next = ICAL.RecurIterator.prototype.next;
      const steps = { count: 0, clock: () => late };
      vi.spyOn(ICAL.RecurIterator.prototype, 'next').mockImplementation(function (this: ICAL.RecurIterator, again) {
        if (this.rule.parts.BYSETPOS) {
          late += ms;
          steps.count++;
        }
        return next.call(this, again);
      });
      return steps;
    }

    /** Steps of costly rules one call takes. */
    const stepsOf = (steps: { count: number }, calendar: ParsedCalendar, date: string) => {
      const before = steps.count;
      const list = titles(calendar, date, 'UTC');
      return { steps: steps.count - before, list };
    };

    it('lists such a rule when it is not slow', () => {
      const calendar = parseIcs(ics(weekly, ...costlyEvents(1)));
      expect(titles(calendar, '2026-03-31', 'UTC')).toEqual(['Weekly', 'Costly 0']);
    });

    it('skips a series over its own time budget from then on, and still lists the others', () => {
      const steps = slowCostlyRules(30);
      const calendar = parseWithClock(ics(weekly, ...costlyEvents(1)), steps.clock);
      const first = stepsOf(steps, calendar, '2026-03-31');
      expect(first.list).toEqual(['Weekly']);
      expect(first.steps).toBeGreaterThan(0);
      for (const date of ['2026-03-31', '2026-04-30', '2026-05-31']) {
        expect(stepsOf(steps, calendar, date)).toEqual({ steps: 0, list: date === '2026-03-31' ? ['Weekly'] : [] });
      }
    });

    it('does not spend the next calls on the series that used up a call, and soon on none', () => {
      // Each costly series fits its own budget (about 16 steps, 32 ms), but 300 of them are many times a call's.
      const steps = slowCostlyRules(2);
      const calendar = parseWithClock(ics(weekly, ...costlyEvents(300)), steps.clock);
      const calls = ['2026-03-31', '2026-03-31', '2026-03-31', '2026-03-31', '2026-04-30'].map((date) =>
        stepsOf(steps, calendar, date),
      );
      const [first, second] = calls as [(typeof calls)[0], (typeof calls)[0]];
      expect(first.steps).toBeGreaterThan(0);
      expect(first.list[0]).toBe('Weekly');
      // The series the first call expanded are not expanded again.
      const listed = first.list.filter((t) => t.startsWith('Costly'));
      expect(listed.length).toBeGreaterThan(0);
      expect(second.list.filter((t) => listed.includes(t))).toEqual([]);
      // After a few cut-off calls, no call spends anything on them, and the weekly series stays.
      expect(calls.slice(3).map((c) => c.steps)).toEqual([0, 0]);
      for (const call of calls.slice(0, 4)) expect(call.list[0]).toBe('Weekly');
    });

    it('computes the end of an evenly spaced COUNT rule instead of counting from its first day', () => {
      const calendar = parseIcs(
        ics(
          vevent('d', 'DTSTART:19900101T090000Z', 'RRULE:FREQ=DAILY;COUNT=20000', 'SUMMARY:Daily since 1990'),
          vevent('f', 'DTSTART:20260302T090000Z', 'RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=3', 'SUMMARY:Fortnightly'),
        ),
      );
      // 1990-01-01 plus 19,999 days is 2044-10-03.
      expect(titles(calendar, '2044-10-03', 'UTC')).toEqual(['Daily since 1990']);
      expect(titles(calendar, '2044-10-04', 'UTC')).toEqual([]);
      expect(titles(calendar, '2026-03-31', 'UTC')).toEqual(['Daily since 1990']);
      const fortnights = ['2026-03-02', '2026-03-09', '2026-03-16', '2026-03-30', '2026-04-13'].map((d) =>
        titles(calendar, d, 'UTC').includes('Fortnightly'),
      );
      expect(fortnights).toEqual([true, false, true, true, false]);
    });
  });

  describe('time zones by the hundred thousand', () => {
    /** Intl.DateTimeFormat objects built while `run` runs: each unknown TZID costs several, some throwing. */
    function formatsBuilt(run: () => void): number {
      const Real = Intl.DateTimeFormat;
      let built = 0;
      Intl.DateTimeFormat = new Proxy(Real, {
        construct(target, args) {
          built++;
          return Reflect.construct(target, args);
        },
      });
      try {
        run();
      } finally {
        Intl.DateTimeFormat = Real;
      }
      return built;
    }

    it('resolves each TZID once, unknown ones too, and at most 200 of them; further ones read as UTC', () => {
      const blocks = [vevent('berlin', 'DTSTART;TZID=Europe/Berlin:20260316T120000', 'SUMMARY:Berlin')];
      for (let i = 0; i < 5000; i++) {
        blocks.push(vevent(`u${i}`, `DTSTART;TZID=Nowhere/Zone-${i % 1000}:20260101T120000`, 'SUMMARY:Unknown'));
      }
      blocks.push(vevent('tokyo', 'DTSTART;TZID=Asia/Tokyo:20260316T120000', 'SUMMARY:Tokyo'));
      let calendar: ParsedCalendar | undefined;
      const built = formatsBuilt(() => (calendar = parseIcs(ics(...blocks))));
      // A few per distinct name tried (199 unknown ones and Berlin), none for the 800 past the cap.
      expect(built).toBeLessThan(1000);
      const events = (calendar as ParsedCalendar).events(dayWindow('2026-03-16', 'UTC'));
      expect(timed(events, 'Berlin').start.toISOString()).toBe('2026-03-16T11:00:00.000Z');
      expect(timed(events, 'Tokyo').start.toISOString()).toBe('2026-03-16T12:00:00.000Z');
    });

    it('still reads a few distinct zones exactly', () => {
      const calendar = parseIcs(
        ics(
          vevent('a', 'DTSTART;TZID=Nowhere/Zone:20260316T120000', 'SUMMARY:Nowhere'),
          vevent('b', 'DTSTART;TZID=Asia/Tokyo:20260316T120000', 'SUMMARY:Tokyo'),
        ),
      );
      const events = calendar.events(dayWindow('2026-03-16', 'UTC'));
      expect(timed(events, 'Tokyo').start.toISOString()).toBe('2026-03-16T03:00:00.000Z');
      expect(timed(events, 'Nowhere').start.toISOString()).toBe('2026-03-16T12:00:00.000Z');
    });
  });

  describe('a crowded day', () => {
    it(`returns at most ${EVENTS_MAX} events: the all-day ones, then the earliest timed ones`, () => {
      expect(EVENTS_MAX).toBe(500);
      const blocks: string[] = [];
      // Listed latest first, so the order is the sort's.
      for (let i = 599; i >= 0; i--) {
        const hh = String(Math.floor(i / 60)).padStart(2, '0');
        const mm = String(i % 60).padStart(2, '0');
        blocks.push(vevent(`t${i}`, `DTSTART:20260316T${hh}${mm}00Z`, 'DURATION:PT1M', `SUMMARY:Minute ${i}`));
      }
      blocks.push(vevent('h', 'DTSTART;VALUE=DATE:20260316', 'SUMMARY:Holiday'));
      blocks.push(
        vevent('m', 'DTSTART:20260316T000000Z', 'RRULE:FREQ=MINUTELY;INTERVAL=2', 'SUMMARY:Every other minute'),
      );
      const events = parseIcs(ics(...blocks)).events(dayWindow('2026-03-16', 'UTC'));
      expect(events).toHaveLength(EVENTS_MAX);
      expect(events[0]).toMatchObject({ title: 'Holiday', allDay: true });
      const starts = events.slice(1).map((e) => (e.allDay ? '' : e.start.toISOString()));
      expect(starts).toEqual([...starts].sort());
      // 499 timed ones: the series' first 100 (every other minute up to 03:18: one series lists at most
      // 100 a day) and minutes 0-398 of the singles.
      expect(events.filter((e) => e.title === 'Every other minute')).toHaveLength(100);
      expect(starts.at(-1)).toBe('2026-03-16T06:38:00.000Z');
      expect(new Set(events.map((e) => e.id)).size).toBe(EVENTS_MAX);
    });
  });
});
