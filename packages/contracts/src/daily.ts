// Daily messages: each user's morning briefing, its settings in /api/users/me/, and
// GET /api/daily-messages/{id}/ (owner only).
import { z } from 'zod';
import { ZResearch } from './research.ts';

/** When a user who has not chosen gets their message, in their time zone. */
export const DAILY_TIME_DEFAULT = '07:00';
/** "Send today's message now" at most this many times a day. */
export const DAILY_SEND_NOW_PER_DAY = 3;
/** Short researches one daily message carries at most. */
export const DAILY_RESEARCH_MAX = 3;
export const LOCATION_NAME_MAX = 120;

/** Texts the web app shows as they are. */
export const DAILY_MESSAGES = {
  notFound: 'Daily message not found',
  loadFailed: 'Failed to load the daily message. Please try again later.',
  ready: 'Your daily message is ready',
  locationNotFound: 'We could not find that place. Try a city name, e.g. "Lisbon" or "Austin, Texas".',
  weatherUnavailable: 'The weather service is not reachable right now. Try again in a moment.',
  weatherNotSetUp:
    'Weather is not set up on this Daybook, so a location cannot be used yet. Ask whoever runs it to turn the weather on.',
  sendNowLimit: `You can ask for today's message at most ${DAILY_SEND_NOW_PER_DAY} times a day.`,
  locationLimit: 'Too many place look-ups for now. Try again in an hour.',
} as const;

/** HH:MM, 24-hour, in the user's time zone. */
export const ZDailyTime = z
  .string({ error: 'Use a time like 07:00.' })
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'Use a time like 07:00.');

/** Units for the weather: `auto` follows the location's country (°F in the US, °C elsewhere). */
export const ZTemperatureUnit = z.enum(['auto', 'celsius', 'fahrenheit'], {
  error: 'Must be auto, celsius or fahrenheit.',
});
export type TTemperatureUnit = z.infer<typeof ZTemperatureUnit>;

/** Where the weather is for: the place as found by the geocoder, with its coordinates. */
export const ZUserLocation = z.object({
  name: z.string(),
  /** ISO 3166-1 alpha-2, when the geocoder knows it. */
  country_code: z.string().nullable(),
  latitude: z.number(),
  longitude: z.number(),
});
export type TUserLocation = z.infer<typeof ZUserLocation>;

/** The spec's daily message (id, delivery_date, message_text, research_reports) plus where it is in the chat. */
export const ZDailyMessage = z.object({
  id: z.number().int(),
  /** The user's local date it is for (YYYY-MM-DD). */
  delivery_date: z.string(),
  /** Markdown. */
  message_text: z.string(),
  research_reports: z.array(ZResearch),
  /** ISO 8601: when it was posted to the chat. */
  delivered: z.string().nullable(),
  /** The chat message that carries it (/chat?message=…), once posted. */
  chat_message_id: z.number().int().nullable(),
});
export type TDailyMessage = z.infer<typeof ZDailyMessage>;

/** POST /api/daily-messages/send-now/: today's message is on its way, or was already delivered. */
export const ZSendNowResponse = z.object({
  status: z.enum(['queued', 'delivered']),
  /** Today's message (being written while status is queued). */
  id: z.number().int(),
  delivery_date: z.string(),
});
export type TSendNowResponse = z.infer<typeof ZSendNowResponse>;
