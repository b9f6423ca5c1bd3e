// Each user's morning message: a schedule tick claims the users whose local delivery time has
// passed (one row per user and local date, so never twice), a job per message gathers the weather,
// the day's events and short researches, has the model write it (or fills a template), posts it to
// the chat and emails it. Every step is recorded on the row, so a retry repeats none of them.
//
// The parts: the schedule and its claims (daily.schedule.ts), the job (daily.generate.ts) over the
// message's facts (daily.context.ts, daily.research.ts), its text (daily.write.ts, daily.template.ts,
// daily.markdown.ts) and its delivery (daily.delivery.ts), the message's page (daily.present.ts) and
// the user's daily settings (daily.settings.ts). This file puts them together.
import { DAILY_MESSAGES, type TCalendarDay } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Signer } from '../../lib/signing.ts';
import type { UsersService } from '../accounts/users.service.ts';
import type { ChatPostsService } from '../chat/chat.posts.service.ts';
import type { Mailer } from '../mail/mail.service.ts';
import type { Llm } from '../model/model.types.ts';
import type { WeatherProvider } from '../weather/weather.types.ts';
import { createDailyContext, type DailyResearchPort } from './daily.context.ts';
import { createDailyDelivery } from './daily.delivery.ts';
import { createDailyGenerator } from './daily.generate.ts';
import { createDailyPresenter } from './daily.present.ts';
import type { DailyRepo } from './daily.repo.ts';
import { createDailyResearch } from './daily.research.ts';
import { createDailySchedule } from './daily.schedule.ts';
import { createDailySettings } from './daily.settings.ts';
import { createDailyWriter } from './daily.write.ts';

export { type DailyResearchPort, PART_FAILED } from './daily.context.ts';
export { PAUSE_PURPOSE } from './daily.delivery.ts';
export { withoutFactTags } from './daily.markdown.ts';
export { dayWords, templateMessage } from './daily.template.ts';
export { knownZone, zoneNow } from './daily.zones.ts';

export interface DailyDeps {
  repo: DailyRepo;
  /** The pause flag and the onboarding's settings are the user's row, which accounts owns. */
  users: Pick<UsersService, 'pauseDailyMessages' | 'applyFoundSettings'>;
  clock: Clock;
  log: FastifyBaseLogger;
  llm: Llm | null;
  weather: WeatherProvider | null;
  calendar: { eventsForDay(userId: number, date: string, timeZone?: string): Promise<TCalendarDay> };
  research: DailyResearchPort;
  /** Sends the generation job of message `id` (after `delaySec`). */
  enqueue(id: number, delaySec?: number): Promise<void>;
  /** Sends the generation jobs of many messages at once (a tick's batch). */
  enqueueMany(ids: number[]): Promise<void>;
  /** Posts the message to the user's chat. */
  chat: Pick<ChatPostsService, 'post'>;
  /** The message reached the chat (once): tell the user's tabs it is ready. */
  delivered(userId: number): void;
  mailer: Mailer;
  signer: Signer;
  publicUrl: string;
}

export function createDailyService(deps: DailyDeps) {
  const schedule = createDailySchedule(deps);
  const generator = createDailyGenerator(deps, {
    context: createDailyContext(deps),
    research: createDailyResearch(deps),
    writer: createDailyWriter(deps),
    delivery: createDailyDelivery(deps),
  });
  const { get } = createDailyPresenter(deps);
  const settings = createDailySettings(deps);

  return {
    generate: generator.generate,
    tick: schedule.tick,
    sweep: schedule.sweep,
    failed: generator.failed,
    sendNow: schedule.sendNow,
    get,
    pauseUser: settings.pauseUser,
    pause: settings.pause,
    geocode: settings.geocode,
    hasWeather: settings.hasWeather,
    settingsFromOnboarding: settings.settingsFromOnboarding,
  };
}

export type DailyService = ReturnType<typeof createDailyService>;
export { DAILY_MESSAGES };
