// What every message says whoever writes it: the template used without a model (or when it fails),
// and the ending every message gets (the links it must have, the weather's attribution).
import type { TCalendarDay, TResearch } from '@daybook/contracts';
import type { DayForecast } from '../weather/weather.types.ts';
import { plain } from './daily.markdown.ts';

/** The model's message is cut here (it is meant to be read in a minute). */
export const MESSAGE_MAX = 6000;

/** "Tuesday 24 November" for a YYYY-MM-DD. */
const dayFormat = new Intl.DateTimeFormat('en-GB', { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' });
export function dayWords(date: string): string {
  return dayFormat.format(new Date(`${date}T12:00:00Z`));
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function firstSentences(text: string, max = 280): string {
  const clean = text
    .replace(/\s*\[\d+\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max);
  const end = cut.lastIndexOf('. ');
  return end > 80 ? cut.slice(0, end + 1) : `${cut.slice(0, max - 1)}…`;
}

function eventTime(iso: string, twelveHour: boolean): string {
  const hh = Number(iso.slice(11, 13));
  const mm = iso.slice(14, 16);
  if (!twelveHour) return `${String(hh).padStart(2, '0')}:${mm}`;
  return `${hh % 12 || 12}:${mm} ${hh < 12 ? 'AM' : 'PM'}`;
}

export interface Parts {
  date: string;
  name: string | null;
  weather: { place: string; forecast: DayForecast; line: string; attribution: { text: string; url: string } } | null;
  calendar: TCalendarDay | null;
  research: TResearch[];
  notes: Record<string, string>;
  twelveHour: boolean;
}

export function calendarLines(day: TCalendarDay, twelveHour: boolean): string[] {
  const lines = day.events.slice(0, 12).map((e) => {
    const when = e.all_day ? 'All day' : `${eventTime(e.start, twelveHour)}–${eventTime(e.end, twelveHour)}`;
    const where = e.location ? ` · ${plain(e.location, 80)}` : '';
    return `- ${when}: ${plain(e.title, 120) || '(no title)'}${where}`;
  });
  if (day.events.length > 12) lines.push(`- …and ${day.events.length - 12} more`);
  return lines;
}

export function reconnectLines(day: TCalendarDay): string[] {
  return day.problems.map((p) =>
    p.status === 'needs_reconnect'
      ? `Your calendar "${plain(p.calendar, 80)}" needs reconnecting: [Calendar Connections](/accounts/3rdparty/).`
      : p.status === 'partial'
        ? `From your calendar "${plain(p.calendar, 80)}": ${plain(p.message, 300)}`
        : `Your calendar "${plain(p.calendar, 80)}" could not be read this morning.`,
  );
}

export const reportLink = (r: TResearch) => `/resources/research/${r.id}`;

/** The message without a model: weather, events and research links, still useful. */
export function templateMessage(p: Parts): string {
  const out: string[] = [`Good morning${p.name ? `, ${plain(p.name, 60)}` : ''}! Here is your ${dayWords(p.date)}.`];
  if (p.weather) {
    out.push(`### Weather in ${plain(p.weather.place, 100)}`, p.weather.line);
  }
  if (p.calendar) {
    out.push("### Today's calendar");
    const lines = calendarLines(p.calendar, p.twelveHour);
    if (lines.length || !p.calendar.problems.length)
      out.push(lines.length ? lines.join('\n') : 'Nothing on your calendar today.');
    out.push(...reconnectLines(p.calendar));
  }
  if (p.research.length) {
    out.push('### Research for you');
    out.push(
      p.research
        .map(
          (r) =>
            `- **${plain(capitalized(r.query), 120)}**: ${plain(firstSentences(r.conclusion ?? r.introduction ?? ''), 320)} [Read the report](${reportLink(r)})`,
        )
        .join('\n'),
    );
  }
  const notes = Object.values(p.notes);
  if (notes.length) out.push(notes.map((n) => `_${n}_`).join('\n'));
  return finish(out.join('\n\n'), p);
}

/** What every message ends with whoever wrote it: the links it must have and the weather's attribution. */
export function finish(text: string, p: Parts): string {
  let out = text.trim().slice(0, MESSAGE_MAX);
  const missing = p.research.filter((r) => !out.includes(reportLink(r)));
  if (missing.length)
    out += `\n\n${missing.map((r) => `- [${plain(capitalized(r.query), 120)}](${reportLink(r)})`).join('\n')}`;
  if (p.calendar?.problems.some((x) => x.status === 'needs_reconnect') && !out.includes('/accounts/3rdparty/'))
    out += `\n\n${reconnectLines(p.calendar).join('\n')}`;
  if (p.weather) out += `\n\n_[${p.weather.attribution.text}](${p.weather.attribution.url})_`;
  return out;
}
