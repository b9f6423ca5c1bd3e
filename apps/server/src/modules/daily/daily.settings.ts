// The user's daily settings as the daily module sees them: pausing (from a signed link too), places
// for the location field, and the settings the onboarding interview learned.
import { canonicalZone, type TUserLocation } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { Signer } from '../../lib/signing.ts';
import type { UsersService } from '../accounts/users.service.ts';
import { modelFailure } from '../model/model.errors.ts';
import type { Llm } from '../model/model.types.ts';
import type { Place, WeatherProvider } from '../weather/weather.types.ts';
import { PAUSE_PURPOSE } from './daily.delivery.ts';
import type { DailyRepo } from './daily.repo.ts';
import { knownZone } from './daily.zones.ts';

/** The onboarding's settings as the model gives them; anything but text counts as not said. */
const said = z.string().optional().catch(undefined);
const ZSettingsAnswer = z.object({ city: said, time_zone: said, delivery_time: said });

export function createDailySettings(deps: {
  repo: DailyRepo;
  /** The pause flag and the onboarding's settings are the user's row, which accounts owns. */
  users: Pick<UsersService, 'pauseDailyMessages' | 'applyFoundSettings'>;
  log: FastifyBaseLogger;
  llm: Llm | null;
  weather: WeatherProvider | null;
  signer: Signer;
}) {
  const { repo, log } = deps;

  return {
    /** The user behind a pause link, or null for a link that is not ours. */
    async pauseUser(token: string): Promise<number | null> {
      const parts = await deps.signer.unsign(PAUSE_PURPOSE, token, 1);
      const userId = Number(parts?.[0]);
      return Number.isSafeInteger(userId) && userId > 0 ? userId : null;
    },

    async pause(userId: number): Promise<void> {
      await deps.users.pauseDailyMessages(userId);
    },

    /** Places for the settings' location field, as the weather provider finds them. */
    async geocode(name: string): Promise<TUserLocation | null> {
      if (!deps.weather) return null;
      const place: Place | null = await deps.weather.geocode(name, AbortSignal.timeout(10_000));
      return place
        ? { name: place.name, country_code: place.countryCode, latitude: place.latitude, longitude: place.longitude }
        : null;
    },

    hasWeather: () => deps.weather !== null,

    /**
     * After the onboarding interview: where the user lives (geocoded for the weather, and its time
     * zone), their time zone and when they want the message, from what Daybook learned there.
     * The model reads the memories when there is one; otherwise a location memory is taken as is.
     */
    async settingsFromOnboarding(userId: number): Promise<void> {
      const facts = await repo.settingFacts(userId);
      if (!facts.length) return;
      let found: { city?: string; time_zone?: string; delivery_time?: string } = {};
      if (deps.llm) {
        try {
          const answer = await deps.llm.structured({
            messages: [
              {
                role: 'system',
                content:
                  'From these facts about a user, give the city (or town) they live in, their IANA time zone if they said one, and the time of day (24-hour HH:MM) they want their daily message. Leave out what the facts do not say.',
              },
              { role: 'user', content: facts.map((f) => `- ${f.key}: ${f.data}`).join('\n') },
            ],
            name: 'daily_settings',
            userId,
            description: "The user's settings for their daily message.",
            parameters: {
              type: 'object',
              properties: {
                city: { type: 'string', description: 'City and country or region, e.g. "Austin, Texas"' },
                time_zone: { type: 'string', description: 'IANA name, e.g. Europe/Berlin' },
                delivery_time: { type: 'string', description: 'HH:MM, 24-hour' },
              },
            },
            schema: ZSettingsAnswer,
            signal: AbortSignal.timeout(60_000),
          });
          for (const k of ['city', 'time_zone', 'delivery_time'] as const) {
            const value = answer[k]?.trim();
            if (value) found[k] = value;
          }
        } catch (err) {
          log.warn(modelFailure(err), 'settings from the onboarding: the model failed');
          found = {};
        }
      }
      if (!found.city) found.city = facts.find((f) => f.memoryType === 'location')?.data;
      const timeZone =
        found.time_zone && knownZone(found.time_zone) === found.time_zone ? canonicalZone(found.time_zone) : undefined;
      const time = found.delivery_time?.match(/^(\d{1,2}):([0-5]\d)$/);
      const dailyMessageTime =
        time && Number(time[1]) < 24 ? `${String(Number(time[1])).padStart(2, '0')}:${time[2]}` : undefined;
      let place: Place | null = null;
      if (found.city && found.city.length <= 120 && deps.weather)
        place = await deps.weather.geocode(found.city, AbortSignal.timeout(10_000)).catch(() => null);
      await deps.users.applyFoundSettings(userId, {
        timeZone: timeZone ?? place?.timeZone ?? undefined,
        dailyMessageTime,
        location: place ?? undefined,
      });
    },
  };
}
