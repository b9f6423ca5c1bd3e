// One HTTP server on 127.0.0.1 playing Open-Meteo: the geocoding API's GET /v1/search and the
// forecast API's GET /v1/forecast, answering in their real shapes (field names, daily_units labels
// such as "mp/h", results left out when nothing matches, and the {"error":true,"reason":...} 400
// of their Vapor server). The forecast is made up but deterministic: fakeDay(latitude, longitude,
// date) gives the metric values, converted as Open-Meteo converts them when other units are asked.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One result of the geocoding API, with its real field names; empty fields are left out, as there. */
export interface FakeGeocodingResult {
  id: number;
  name: string;
  latitude: number;
  longitude: number;
  elevation: number;
  feature_code: string;
  country_code: string;
  admin1_id?: number;
  admin2_id?: number;
  timezone?: string;
  population?: number;
  postcodes?: string[];
  country_id: number;
  country: string;
  admin1?: string;
  admin2?: string;
}

export type FakeWeatherApi = 'geocoding' | 'forecast';

/** A raw answer (status, body) instead of the real one, or the real one after a delay. */
export type FakeWeatherFailure = { status: number; body?: string } | { delayMs: number };

export interface FakeWeatherRequest {
  path: string;
  query: URLSearchParams;
}

export interface FakeOpenMeteo {
  /** OPEN_METEO_FORECAST_URL and OPEN_METEO_GEOCODING_URL for this server. */
  forecastUrl: string;
  geocodingUrl: string;
  /** Every request, in order of arrival. */
  requests: FakeWeatherRequest[];
  /** The places the geocoder knows, answered in this order (the real one ranks by relevance). */
  places: FakeGeocodingResult[];
  /** How one API answers from now on; null for the real behaviour again. */
  setFailure(api: FakeWeatherApi, answer: FakeWeatherFailure | null): void;
  close(): Promise<void>;
}

export interface FakeOpenMeteoOptions {
  /** Default: DEFAULT_PLACES. */
  places?: FakeGeocodingResult[];
}

// Modelled on the real geocoder's answers for language=en (GeoNames ids, English country names).
export const DEFAULT_PLACES: FakeGeocodingResult[] = [
  {
    id: 2267057,
    name: 'Lisbon',
    latitude: 38.71667,
    longitude: -9.13333,
    elevation: 45,
    feature_code: 'PPLC',
    country_code: 'PT',
    admin1_id: 2267056,
    admin2_id: 8010554,
    timezone: 'Europe/Lisbon',
    population: 517802,
    country_id: 2264397,
    country: 'Portugal',
    admin1: 'Lisbon',
    admin2: 'Lisbon',
  },
  {
    id: 2950159,
    name: 'Berlin',
    latitude: 52.52437,
    longitude: 13.41053,
    elevation: 74,
    feature_code: 'PPLC',
    country_code: 'DE',
    admin1_id: 2950157,
    timezone: 'Europe/Berlin',
    population: 3426354,
    postcodes: ['10967', '13347'],
    country_id: 2921044,
    country: 'Germany',
    admin1: 'Berlin',
  },
  {
    id: 4671654,
    name: 'Austin',
    latitude: 30.26715,
    longitude: -97.74306,
    elevation: 149,
    feature_code: 'PPLA',
    country_code: 'US',
    admin1_id: 4736286,
    admin2_id: 4736134,
    timezone: 'America/Chicago',
    population: 961855,
    country_id: 6252001,
    country: 'United States',
    admin1: 'Texas',
    admin2: 'Travis',
  },
  {
    id: 2988507,
    name: 'Paris',
    latitude: 48.85341,
    longitude: 2.3488,
    elevation: 42,
    feature_code: 'PPLC',
    country_code: 'FR',
    admin1_id: 3012874,
    admin2_id: 2968815,
    timezone: 'Europe/Paris',
    population: 2138551,
    country_id: 3017382,
    country: 'France',
    admin1: 'Île-de-France',
    admin2: 'Paris',
  },
  {
    id: 4717560,
    name: 'Paris',
    latitude: 33.66094,
    longitude: -95.55551,
    elevation: 183,
    feature_code: 'PPLA2',
    country_code: 'US',
    admin1_id: 4736286,
    admin2_id: 4705086,
    timezone: 'America/Chicago',
    population: 24782,
    country_id: 6252001,
    country: 'United States',
    admin1: 'Texas',
    admin2: 'Lamar',
  },
  {
    id: 2147714,
    name: 'Sydney',
    latitude: -33.86785,
    longitude: 151.20732,
    elevation: 58,
    feature_code: 'PPLA',
    country_code: 'AU',
    admin1_id: 2155400,
    timezone: 'Australia/Sydney',
    population: 4627345,
    country_id: 2077456,
    country: 'Australia',
    admin1: 'New South Wales',
  },
];

/** One day's made-up weather at a place, in Open-Meteo's default units (°C, mm, km/h). */
export interface FakeDay {
  weather_code: number;
  temperature_2m_max: number;
  temperature_2m_min: number;
  precipitation_probability_max: number;
  precipitation_sum: number;
  wind_speed_10m_max: number;
  /** Local ISO 8601 without seconds, as Open-Meteo writes them: 2026-11-24T07:12. */
  sunrise: string;
  sunset: string;
}

const CODES = [0, 1, 2, 3, 45, 51, 61, 63, 71, 80, 95];

// FNV-1a, so the same place and day always get the same weather.
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const round = (n: number, digits: number) => Number(n.toFixed(digits));
const pad = (n: number) => String(n).padStart(2, '0');
const clock = (minutes: number) => `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;

export function fakeDay(latitude: number, longitude: number, date: string): FakeDay {
  const h = hash(`${latitude.toFixed(2)},${longitude.toFixed(2)},${date}`);
  const code = CODES[h % CODES.length] ?? 0;
  const wet = code >= 51;
  const max = round(28 - Math.abs(latitude) * 0.3 + ((h >>> 4) % 80) / 10, 1);
  const min = round(max - 4 - ((h >>> 11) % 60) / 10, 1);
  const probability = wet ? 40 + ((h >>> 7) % 7) * 10 : ((h >>> 7) % 3) * 10;
  return {
    weather_code: code,
    temperature_2m_max: max,
    temperature_2m_min: min,
    precipitation_probability_max: probability,
    precipitation_sum: wet ? round(0.2 + ((h >>> 14) % 150) / 10, 1) : 0,
    wind_speed_10m_max: round(4 + ((h >>> 19) % 400) / 10, 1),
    sunrise: `${date}T${clock(5 * 60 + 30 + ((h >>> 23) % 120))}`,
    sunset: `${date}T${clock(16 * 60 + 30 + ((h >>> 25) % 180))}`,
  };
}

const DAILY = [
  'weather_code',
  'temperature_2m_max',
  'temperature_2m_min',
  'precipitation_probability_max',
  'precipitation_sum',
  'wind_speed_10m_max',
  'sunrise',
  'sunset',
] as const;
type Daily = (typeof DAILY)[number];
const isDaily = (v: string): v is Daily => (DAILY as readonly string[]).includes(v);

const TEMPERATURE_UNITS: Record<string, { label: string; convert: (c: number) => number }> = {
  celsius: { label: '°C', convert: (c) => round(c, 1) },
  fahrenheit: { label: '°F', convert: (c) => round((c * 9) / 5 + 32, 1) },
};
const WIND_UNITS: Record<string, { label: string; convert: (kmh: number) => number }> = {
  kmh: { label: 'km/h', convert: (v) => round(v, 1) },
  ms: { label: 'm/s', convert: (v) => round(v / 3.6, 1) },
  mph: { label: 'mp/h', convert: (v) => round(v / 1.609344, 1) },
  kn: { label: 'kn', convert: (v) => round(v / 1.852, 1) },
};
const PRECIPITATION_UNITS: Record<string, { label: string; convert: (mm: number) => number }> = {
  mm: { label: 'mm', convert: (v) => round(v, 1) },
  inch: { label: 'inch', convert: (v) => round(v / 25.4, 3) },
};

class BadRequest extends Error {}

// Vapor's decoding error for an enum value it does not know, which is what Open-Meteo answers.
const invalidValue = (type: string, value: string, key: string) =>
  new BadRequest(`Cannot initialize ${type} from invalid String value ${value} for key ${key}`);

function zoneOffset(timeZone: string, date: string): { seconds: number; abbreviation: string } {
  const at = new Date(`${date}T12:00:00Z`);
  const part = (style: 'longOffset' | 'short') =>
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: style })
      .formatToParts(at)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = part('longOffset').match(/GMT([+-])(\d{2}):(\d{2})/);
  const seconds = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
  return { seconds, abbreviation: part('short') };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const validDate = (s: string) => DATE.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));

function datesBetween(start: string, end: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${start}T00:00:00Z`); t <= Date.parse(`${end}T00:00:00Z`); t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

function forecastBody(q: URLSearchParams) {
  const latitude = Number(q.get('latitude'));
  const longitude = Number(q.get('longitude'));
  if (!q.has('latitude') || !q.has('longitude') || Number.isNaN(latitude) || Number.isNaN(longitude)) {
    throw new BadRequest("Parameter 'latitude' and 'longitude' must be set");
  }
  if (latitude < -90 || latitude > 90) {
    throw new BadRequest(`Latitude must be in range of -90 to 90°. Given: ${latitude}.`);
  }
  if (longitude < -180 || longitude > 180) {
    throw new BadRequest(`Longitude must be in range of -180 to 180°. Given: ${longitude}.`);
  }
  const daily = (q.get('daily') ?? '').split(',').filter(Boolean);
  for (const v of daily) if (!isDaily(v)) throw invalidValue('ForecastVariableDaily', v, 'daily');
  const timezone = q.get('timezone') ?? 'GMT';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new BadRequest('Invalid timezone');
  }
  const temperature = TEMPERATURE_UNITS[q.get('temperature_unit') ?? 'celsius'];
  if (!temperature) throw invalidValue('TemperatureUnit', q.get('temperature_unit') ?? '', 'temperature_unit');
  const wind = WIND_UNITS[q.get('wind_speed_unit') ?? 'kmh'];
  if (!wind) throw invalidValue('WindspeedUnit', q.get('wind_speed_unit') ?? '', 'wind_speed_unit');
  const precipitation = PRECIPITATION_UNITS[q.get('precipitation_unit') ?? 'mm'];
  if (!precipitation) {
    throw invalidValue('PrecipitationUnit', q.get('precipitation_unit') ?? '', 'precipitation_unit');
  }
  const start = q.get('start_date');
  const end = q.get('end_date');
  if ((start === null) !== (end === null))
    throw new BadRequest("Parameter 'start_date' and 'end_date' must be set both");
  if (start === null || end === null) throw new BadRequest("This fake needs 'start_date' and 'end_date'");
  if (!validDate(start) || !validDate(end)) throw new BadRequest('Invalid date format. Make sure to use YYYY-MM-DD');
  if (end < start) throw new BadRequest('End-date must be larger or equals than start-date');
  const dates = datesBetween(start, end);
  if (dates.length > 31) throw new BadRequest('This fake answers at most 31 days');

  const days = dates.map((d) => fakeDay(latitude, longitude, d));
  const units: Record<string, string> = { time: 'iso8601' };
  const values: Record<string, unknown[]> = { time: dates };
  for (const v of daily) {
    switch (v) {
      case 'weather_code':
        units[v] = 'wmo code';
        values[v] = days.map((d) => d.weather_code);
        break;
      case 'temperature_2m_max':
      case 'temperature_2m_min':
        units[v] = temperature.label;
        values[v] = days.map((d) => temperature.convert(d[v]));
        break;
      case 'precipitation_probability_max':
        units[v] = '%';
        values[v] = days.map((d) => d[v]);
        break;
      case 'precipitation_sum':
        units[v] = precipitation.label;
        values[v] = days.map((d) => precipitation.convert(d[v]));
        break;
      case 'wind_speed_10m_max':
        units[v] = wind.label;
        values[v] = days.map((d) => wind.convert(d[v]));
        break;
      case 'sunrise':
      case 'sunset':
        units[v] = 'iso8601';
        values[v] = days.map((d) => d[v]);
        break;
    }
  }
  const offset = zoneOffset(timezone, start);
  return {
    // The real API snaps to its grid; a fixed nudge is enough to show the answer is not the question.
    latitude: round(latitude + 0.004, 6),
    longitude: round(longitude - 0.003, 6),
    generationtime_ms: 0.0629425048828125,
    utc_offset_seconds: offset.seconds,
    timezone,
    timezone_abbreviation: offset.abbreviation,
    elevation: 42,
    daily_units: units,
    daily: values,
  };
}

const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().trim();

function searchBody(q: URLSearchParams, places: FakeGeocodingResult[]) {
  const name = q.get('name');
  if (name === null) throw new BadRequest('Parameter name is required');
  const count = Number(q.get('count') ?? '10');
  if (!Number.isInteger(count) || count < 1 || count > 100)
    throw new BadRequest('Parameter count must be between 1 and 100');
  const format = q.get('format') ?? 'json';
  if (format !== 'json') throw invalidValue('ApiFormat', format, 'format');
  const wanted = fold(name);
  // Like the real one: under two characters nothing, two characters exact, more a prefix (its fuzzy match is wider).
  const results =
    wanted.length < 2
      ? []
      : places.filter((p) => (wanted.length === 2 ? fold(p.name) === wanted : fold(p.name).startsWith(wanted)));
  const found = results.slice(0, count);
  return { ...(found.length ? { results: found } : {}), generationtime_ms: 0.5390835 };
}

const send = (res: ServerResponse, status: number, body: string) =>
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(body);

export async function startFakeOpenMeteo(options: FakeOpenMeteoOptions = {}): Promise<FakeOpenMeteo> {
  const requests: FakeWeatherRequest[] = [];
  const failures = new Map<FakeWeatherApi, FakeWeatherFailure>();
  const timers = new Set<NodeJS.Timeout>();
  const state = { places: (options.places ?? DEFAULT_PLACES).map((p) => ({ ...p })) };

  const answer = (api: FakeWeatherApi, query: URLSearchParams, res: ServerResponse) => {
    try {
      const body = api === 'geocoding' ? searchBody(query, state.places) : forecastBody(query);
      send(res, 200, JSON.stringify(body));
    } catch (err) {
      if (!(err instanceof BadRequest)) throw err;
      send(res, 400, JSON.stringify({ error: true, reason: err.message }));
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ path: url.pathname, query: url.searchParams });
    const api: FakeWeatherApi | null =
      url.pathname === '/v1/search' ? 'geocoding' : url.pathname === '/v1/forecast' ? 'forecast' : null;
    if (!api) return send(res, 404, JSON.stringify({ error: true, reason: 'Not Found' }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, 405, JSON.stringify({ error: true, reason: 'Method Not Allowed' }));
    }
    const failure = failures.get(api);
    if (failure && 'status' in failure) {
      return send(
        res,
        failure.status,
        failure.body ?? JSON.stringify({ error: true, reason: 'Internal Server Error' }),
      );
    }
    if (failure) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) answer(api, url.searchParams, res);
      }, failure.delayMs);
      timers.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      return;
    }
    answer(api, url.searchParams, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    forecastUrl: `${origin}/v1/forecast`,
    geocodingUrl: `${origin}/v1/search`,
    requests,
    get places() {
      return state.places;
    },
    set places(list) {
      state.places = list;
    },
    setFailure(api, failure) {
      if (failure) failures.set(api, failure);
      else failures.delete(api);
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
