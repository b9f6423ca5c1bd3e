// Weather for the daily message, behind one interface: Open-Meteo by default (no key), another
// provider later without touching the daily message.

export type TemperatureUnit = 'celsius' | 'fahrenheit';

/** A place as the geocoder found it. */
export interface Place {
  /** For people: "Lisbon, Portugal", "Austin, Texas, United States". */
  name: string;
  /** ISO 3166-1 alpha-2, when known. */
  countryCode: string | null;
  latitude: number;
  longitude: number;
  /** The place's IANA time zone, when the geocoder knows it. */
  timeZone: string | null;
}

/** One local day's forecast at a place, in the units asked for. */
export interface DayForecast {
  /** YYYY-MM-DD, the local date asked for. */
  date: string;
  /** The WMO weather code's words: "Partly cloudy", "Light rain". */
  summary: string;
  weatherCode: number;
  temperatureMax: number;
  temperatureMin: number;
  /** °C or °F, as asked. */
  temperatureUnit: TemperatureUnit;
  /** 0–100, or null when the provider has none. */
  precipitationProbability: number | null;
  /** Millimetres (celsius) or inches (fahrenheit). */
  precipitationSum: number | null;
  /** km/h (celsius) or mph (fahrenheit). */
  windSpeedMax: number | null;
  /** Local times, HH:MM. */
  sunrise: string | null;
  sunset: string | null;
}

export interface WeatherProvider {
  /** Shown with the weather, as the provider's terms ask: "Weather data by Open-Meteo.com". */
  attribution: { text: string; url: string };
  /** The best match for a place name, or null when there is none. Throws WeatherError when unreachable. */
  geocode(query: string, signal?: AbortSignal): Promise<Place | null>;
  /** Throws WeatherError when unreachable or the answer is unusable. */
  forecast(
    at: { latitude: number; longitude: number },
    day: { date: string; timeZone: string; unit: TemperatureUnit },
    signal?: AbortSignal,
  ): Promise<DayForecast>;
}

export class WeatherError extends Error {
  override name = 'WeatherError';
  constructor(
    message: string,
    readonly code: 'unavailable' | 'bad_response',
  ) {
    super(message);
  }
}

// Countries (and US territories) that use Fahrenheit.
const FAHRENHEIT = new Set(['US', 'LR', 'MM', 'BS', 'BZ', 'KY', 'PW', 'FM', 'MH', 'PR', 'GU', 'VI', 'AS', 'MP']);

/** The user's setting, or (auto) the unit of their location's country. */
export function unitFor(setting: string, countryCode: string | null): TemperatureUnit {
  if (setting === 'celsius' || setting === 'fahrenheit') return setting;
  return countryCode && FAHRENHEIT.has(countryCode.toUpperCase()) ? 'fahrenheit' : 'celsius';
}
