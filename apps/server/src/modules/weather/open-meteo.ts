// Open-Meteo (open-meteo.com): its geocoding API finds the user's place, its forecast API gives one
// local day. No key. These endpoints are chosen by whoever runs Daybook, not by users or models, so
// they use plain fetch rather than the SSRF-safe fetcher. Place names and coordinates are personal
// data: no message, log line or error here carries them.
import { z } from 'zod';
import {
  type DayForecast,
  type Place,
  type TemperatureUnit,
  WeatherError,
  type WeatherProvider,
} from './weather.types.ts';

export interface OpenMeteoOptions {
  /** e.g. https://api.open-meteo.com/v1/forecast */
  forecastUrl: string;
  /** e.g. https://geocoding-api.open-meteo.com/v1/search */
  geocodingUrl: string;
  /** For each request, answer included. */
  timeoutMs: number;
  fetch?: typeof globalThis.fetch;
  userAgent?: string;
}

export const OPEN_METEO_ATTRIBUTION = { text: 'Weather data by Open-Meteo.com', url: 'https://open-meteo.com/' };

const DAILY_VARIABLES = [
  'weather_code',
  'temperature_2m_max',
  'temperature_2m_min',
  'precipitation_probability_max',
  'precipitation_sum',
  'wind_speed_10m_max',
  'sunrise',
  'sunset',
] as const;

/** WMO weather interpretation codes (WW), as Open-Meteo's docs list them. */
const WMO_WORDS: Record<number, string> = {
  0: 'Clear sky',
  1: 'Mainly clear',
  2: 'Partly cloudy',
  3: 'Overcast',
  45: 'Fog',
  48: 'Fog',
  51: 'Light drizzle',
  53: 'Drizzle',
  55: 'Heavy drizzle',
  56: 'Light freezing drizzle',
  57: 'Freezing drizzle',
  61: 'Light rain',
  63: 'Rain',
  65: 'Heavy rain',
  66: 'Light freezing rain',
  67: 'Freezing rain',
  71: 'Light snow',
  73: 'Snow',
  75: 'Heavy snow',
  77: 'Snow grains',
  80: 'Light rain showers',
  81: 'Rain showers',
  82: 'Heavy rain showers',
  85: 'Snow showers',
  86: 'Heavy snow showers',
  95: 'Thunderstorm',
  96: 'Thunderstorm with hail',
  99: 'Thunderstorm with heavy hail',
};

const SNOW_CODES = new Set([71, 73, 75, 77, 85, 86]);

/** The words for a WMO weather code; codes outside the table get a neutral word rather than failing. */
export function weatherWords(code: number): string {
  return WMO_WORDS[code] ?? 'Weather unknown';
}

// Geocoding: "Empty fields are not returned", so everything but the name and the coordinates may be missing.
const ZGeocodingResult = z.object({
  name: z.string().min(1),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  country_code: z.string().optional(),
  country: z.string().optional(),
  admin1: z.string().optional(),
  admin2: z.string().optional(),
  timezone: z.string().optional(),
  population: z.number().optional(),
});
type GeocodingResult = z.infer<typeof ZGeocodingResult>;

const ZGeocodingResponse = z.object({
  // Left out when nothing matches.
  results: z.array(z.unknown()).optional(),
});

const series = <T extends z.ZodType>(item: T) => z.array(item.nullable());
const ZForecastResponse = z.object({
  daily_units: z.object({ temperature_2m_max: z.string() }),
  daily: z.object({
    time: z.array(z.string()),
    weather_code: series(z.number().int()),
    temperature_2m_max: series(z.number()),
    temperature_2m_min: series(z.number()),
    precipitation_probability_max: series(z.number()),
    precipitation_sum: series(z.number()),
    wind_speed_10m_max: series(z.number()),
    sunrise: series(z.string()),
    sunset: series(z.string()),
  }),
});

// Qualifiers people write after a comma that the geocoder spells otherwise.
const COUNTRY_ALIASES: Record<string, string> = { usa: 'US', 'u.s.': 'US', 'u.s.a.': 'US', uk: 'GB', 'u.k.': 'GB' };
const US_STATES: Record<string, string> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'Washington, D.C.',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
};

/** Case- and accent-insensitive form for comparing names ("São Paulo" = "sao paulo"). */
const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();

function matchesQualifier(result: GeocodingResult, qualifier: string): boolean {
  const q = fold(qualifier);
  const code = result.country_code?.toUpperCase();
  if (code && (q.toUpperCase() === code || COUNTRY_ALIASES[q] === code)) return true;
  if ([result.admin1, result.admin2, result.country].some((n) => n !== undefined && fold(n) === q)) return true;
  // "Austin, TX": a US state's postal code names its admin1.
  const state = code === 'US' ? US_STATES[q.toUpperCase()] : undefined;
  return state !== undefined && result.admin1 !== undefined && fold(result.admin1) === fold(state);
}

/** The result matching most of the qualifiers, then the most populous, then the geocoder's order. */
function pickBest(results: GeocodingResult[], qualifiers: string[]): GeocodingResult | null {
  let best: { result: GeocodingResult; matched: number; population: number } | null = null;
  for (const result of results) {
    const matched = qualifiers.filter((q) => matchesQualifier(result, q)).length;
    const population = result.population ?? 0;
    if (!best || matched > best.matched || (matched === best.matched && population > best.population)) {
      best = { result, matched, population };
    }
  }
  // "Springfield, Oregon" must not quietly become the biggest Springfield when none found is in Oregon.
  if (!best || (qualifiers.length > 0 && best.matched === 0)) return null;
  return best.result;
}

function placeOf(result: GeocodingResult): Place {
  const parts = [result.name];
  if (result.admin1 && fold(result.admin1) !== fold(result.name)) parts.push(result.admin1);
  const country = result.country ?? result.country_code?.toUpperCase();
  if (country && fold(country) !== fold(result.name)) parts.push(country);
  return {
    name: parts.join(', '),
    countryCode: result.country_code ? result.country_code.toUpperCase() : null,
    latitude: result.latitude,
    longitude: result.longitude,
    timeZone: result.timezone || null,
  };
}

/** HH:MM of Open-Meteo's local ISO 8601 time ("2026-11-24T07:12"). */
function clockOf(value: string | null | undefined): string | null {
  return value?.match(/T(\d{2}:\d{2})/)?.[1] ?? null;
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured address';
  }
};

type Api = 'geocoding' | 'forecast';
const LABEL: Record<Api, string> = { geocoding: 'Open-Meteo geocoding', forecast: 'Open-Meteo forecast' };

export function createOpenMeteo(options: OpenMeteoOptions): WeatherProvider {
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.userAgent) headers['user-agent'] = options.userAgent;

  /**
   * GET url and parse its JSON. The caller's abort is passed on as it is (nothing failed); a timeout,
   * a network failure, 429 or 5xx is 'unavailable'; anything else unusable is 'bad_response'.
   */
  async function getJson(api: Api, url: URL, signal: AbortSignal | undefined): Promise<unknown> {
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const label = LABEL[api];
    let status: number;
    let text: string;
    try {
      const res = await doFetch(url, { headers, signal: combined });
      status = res.status;
      // Under the same signal, so a body that trickles in is cut off by the timeout too.
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) {
        throw new WeatherError(`${label} did not answer within ${options.timeoutMs} ms.`, 'unavailable');
      }
      const code = (err as { cause?: { code?: unknown } }).cause?.code;
      throw new WeatherError(
        `Could not reach ${label} at ${hostOf(url.href)}${typeof code === 'string' ? ` (${code})` : ''}.`,
        'unavailable',
      );
    }
    if (status === 429) throw new WeatherError(`${label} refused: too many requests (429).`, 'unavailable');
    if (status >= 500) throw new WeatherError(`${label} is unavailable (${status}).`, 'unavailable');
    if (status === 404) {
      throw new WeatherError(`${label} answered 404: check the configured address.`, 'unavailable');
    }
    // A 400's reason can repeat the coordinates, so it stays out of the message.
    if (status < 200 || status >= 300)
      throw new WeatherError(`${label} refused the request (${status}).`, 'bad_response');
    try {
      return JSON.parse(text);
    } catch {
      throw new WeatherError(`${label} answered with something other than JSON.`, 'bad_response');
    }
  }

  return {
    attribution: OPEN_METEO_ATTRIBUTION,

    async geocode(query, signal) {
      const [first = '', ...rest] = query.split(',');
      const name = first.replace(/\s+/g, ' ').trim();
      const qualifiers = rest.map((q) => q.trim()).filter((q) => q.length > 0);
      // Open-Meteo answers nothing for fewer than two characters; no need to ask.
      if (name.length < 2) return null;
      const url = new URL(options.geocodingUrl);
      url.searchParams.set('name', name);
      url.searchParams.set('count', '5');
      url.searchParams.set('language', 'en');
      url.searchParams.set('format', 'json');
      const parsed = ZGeocodingResponse.safeParse(await getJson('geocoding', url, signal));
      if (!parsed.success) {
        throw new WeatherError(`${LABEL.geocoding} answered in an unexpected shape.`, 'bad_response');
      }
      const raw = parsed.data.results ?? [];
      const results = raw.flatMap((r) => {
        const one = ZGeocodingResult.safeParse(r);
        return one.success ? [one.data] : [];
      });
      if (raw.length > 0 && results.length === 0) {
        throw new WeatherError(`${LABEL.geocoding} answered places without names or coordinates.`, 'bad_response');
      }
      const best = pickBest(results, qualifiers);
      return best ? placeOf(best) : null;
    },

    async forecast(at, day, signal) {
      const url = new URL(options.forecastUrl);
      url.searchParams.set('latitude', String(at.latitude));
      url.searchParams.set('longitude', String(at.longitude));
      url.searchParams.set('daily', DAILY_VARIABLES.join(','));
      url.searchParams.set('timezone', day.timeZone);
      url.searchParams.set('start_date', day.date);
      url.searchParams.set('end_date', day.date);
      if (day.unit === 'fahrenheit') {
        url.searchParams.set('temperature_unit', 'fahrenheit');
        url.searchParams.set('wind_speed_unit', 'mph');
        url.searchParams.set('precipitation_unit', 'inch');
      }
      const parsed = ZForecastResponse.safeParse(await getJson('forecast', url, signal));
      if (!parsed.success) {
        throw new WeatherError(`${LABEL.forecast} answered in an unexpected shape.`, 'bad_response');
      }
      const { daily, daily_units: units } = parsed.data;
      // Asked in one unit, answered in another would put wrong numbers in front of people.
      if (units.temperature_2m_max !== (day.unit === 'fahrenheit' ? '°F' : '°C')) {
        throw new WeatherError(`${LABEL.forecast} answered in other units than asked.`, 'bad_response');
      }
      const i = daily.time.indexOf(day.date);
      const code = daily.weather_code[i];
      const max = daily.temperature_2m_max[i];
      const min = daily.temperature_2m_min[i];
      if (i < 0 || code == null || max == null || min == null) {
        throw new WeatherError(`${LABEL.forecast} has no forecast for the day asked.`, 'bad_response');
      }
      return {
        date: day.date,
        summary: weatherWords(code),
        weatherCode: code,
        temperatureMax: max,
        temperatureMin: min,
        temperatureUnit: day.unit,
        precipitationProbability: daily.precipitation_probability_max[i] ?? null,
        precipitationSum: daily.precipitation_sum[i] ?? null,
        windSpeedMax: daily.wind_speed_10m_max[i] ?? null,
        sunrise: clockOf(daily.sunrise[i]),
        sunset: clockOf(daily.sunset[i]),
      };
    },
  };
}

const UNITS: Record<TemperatureUnit, { temperature: string; precipitation: string; wind: string }> = {
  celsius: { temperature: '°C', precipitation: 'mm', wind: 'km/h' },
  fahrenheit: { temperature: '°F', precipitation: 'in', wind: 'mph' },
};

/** Rounded for reading; `|| 0` keeps "-0" out. */
const whole = (n: number) => Math.round(n) || 0;

/**
 * One plain line for the daily message, e.g. "Partly cloudy, 18–24 °C, 40% chance of rain (1.2 mm),
 * wind up to 20 km/h. Sunrise 07:12, sunset 17:03." Parts the provider left out are left out.
 */
export function describeForecast(f: DayForecast): string {
  const unit = UNITS[f.temperatureUnit];
  const lo = whole(Math.min(f.temperatureMin, f.temperatureMax));
  const hi = whole(Math.max(f.temperatureMin, f.temperatureMax));
  // "-3–2 °C" reads badly; below zero a range is spelled out.
  const range = lo === hi ? `${hi}` : lo < 0 || hi < 0 ? `${lo} to ${hi}` : `${lo}–${hi}`;
  const parts = [f.summary, `${range} ${unit.temperature}`];

  const kind = SNOW_CODES.has(f.weatherCode) ? 'snow' : 'rain';
  const amount =
    f.precipitationSum != null && f.precipitationSum > 0
      ? f.temperatureUnit === 'fahrenheit'
        ? `${Number(f.precipitationSum.toFixed(2))} ${unit.precipitation}`
        : `${Number(f.precipitationSum.toFixed(1))} ${unit.precipitation}`
      : null;
  if (f.precipitationProbability != null) {
    parts.push(`${whole(f.precipitationProbability)}% chance of ${kind}${amount ? ` (${amount})` : ''}`);
  } else if (amount) {
    parts.push(`${amount} of ${kind}`);
  }
  if (f.windSpeedMax != null) parts.push(`wind up to ${whole(f.windSpeedMax)} ${unit.wind}`);

  let line = `${parts.join(', ')}.`;
  if (f.sunrise && f.sunset) line += ` Sunrise ${f.sunrise}, sunset ${f.sunset}.`;
  else if (f.sunrise) line += ` Sunrise ${f.sunrise}.`;
  else if (f.sunset) line += ` Sunset ${f.sunset}.`;
  return line;
}
