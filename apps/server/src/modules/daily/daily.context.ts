// The facts a message is written from: the weather at the user's place, the day's events and the
// finished researches. A part that fails is left out with a note, and the rest still goes.
import type { TCalendarDay, TResearch } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { describeForecast } from '../weather/index.ts';
import type { WeatherProvider } from '../weather/weather.types.ts';
import { unitFor } from '../weather/weather.types.ts';
import type { DailyRepo, DailyRow, DailyUser } from './daily.repo.ts';
import type { Parts } from './daily.template.ts';

/** Notes shown in place of a part that failed. */
export const PART_FAILED = {
  weather: 'The weather could not be fetched this morning.',
  calendar: 'Your calendar could not be read this morning.',
  research: 'The research for today could not be started.',
} as const;

export interface DailyResearchPort {
  /** Null when research can run; otherwise why not. */
  unavailable(): string | null;
  request(
    userId: number,
    query: string,
    options: { origin: 'daily'; dailyMessageId: number },
  ): Promise<{ research: { id: number } } | { refused: string }>;
  get(userId: number, id: number): Promise<TResearch | null>;
}

export function createDailyContext(deps: {
  repo: DailyRepo;
  log: FastifyBaseLogger;
  weather: WeatherProvider | null;
  calendar: { eventsForDay(userId: number, date: string, timeZone?: string): Promise<TCalendarDay> };
  research: DailyResearchPort;
}) {
  const { repo, log } = deps;

  async function weatherPart(user: DailyUser, date: string, tz: string, notes: Record<string, string>) {
    if (!deps.weather || user.latitude === null || user.longitude === null || !user.locationName) return null;
    try {
      const forecast = await deps.weather.forecast(
        { latitude: user.latitude, longitude: user.longitude },
        { date, timeZone: tz, unit: unitFor(user.temperatureUnit, user.locationCountry) },
        AbortSignal.timeout(20_000),
      );
      return {
        place: user.locationName,
        forecast,
        line: describeForecast(forecast),
        attribution: deps.weather.attribution,
      };
    } catch (err) {
      log.warn({ code: (err as { code?: string }).code }, 'daily message: weather failed');
      notes.weather = PART_FAILED.weather;
      return null;
    }
  }

  async function calendarPart(userId: number, date: string, tz: string, notes: Record<string, string>) {
    try {
      const day = await deps.calendar.eventsForDay(userId, date, tz);
      // No calendars connected: the part is left out rather than saying "nothing today".
      return day.events.length || day.problems.length || (await repo.hasCalendars(userId)) ? day : null;
    } catch (err) {
      log.warn({ err }, 'daily message: calendar failed');
      notes.calendar = PART_FAILED.calendar;
      return null;
    }
  }

  /** Everything the message of `row` is written from; what failed is added to `notes`. */
  async function gather(row: DailyRow, user: DailyUser, tz: string, notes: Record<string, string>): Promise<Parts> {
    const [weather, calendar, name, researchIds] = await Promise.all([
      weatherPart(user, row.localDate, tz, notes),
      calendarPart(user.id, row.localDate, tz, notes),
      repo.preferredName(user.id),
      repo.researchIds(row.id),
    ]);
    const reports = (await Promise.all(researchIds.map((r) => deps.research.get(user.id, r)))).filter(
      (r): r is TResearch => r !== null && r.status === 'done' && !!r.report,
    );
    if (researchIds.length && !reports.length) notes.research = "Today's research did not finish in time.";
    return {
      date: row.localDate,
      name,
      weather,
      calendar,
      research: reports,
      notes,
      twelveHour: (user.locationCountry ?? '').toUpperCase() === 'US',
    };
  }

  return { gather };
}

export type DailyContext = ReturnType<typeof createDailyContext>;
