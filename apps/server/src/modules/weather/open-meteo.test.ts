import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_PLACES,
  type FakeOpenMeteo,
  fakeDay,
  startFakeOpenMeteo,
} from '../../../../../tests/helpers/fake-weather.ts';
import { createOpenMeteo, describeForecast } from './open-meteo.ts';
import { type DayForecast, unitFor, WeatherError, type WeatherProvider } from './weather.types.ts';

let fake: FakeOpenMeteo;
let weather: WeatherProvider;

beforeEach(async () => {
  fake = await startFakeOpenMeteo();
  weather = createOpenMeteo({ forecastUrl: fake.forecastUrl, geocodingUrl: fake.geocodingUrl, timeoutMs: 2000 });
});
afterEach(async () => {
  await fake.close();
});

/** The rejection of `promise`, which must be a WeatherError. */
async function failure(promise: Promise<unknown>): Promise<WeatherError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WeatherError);
  return err as WeatherError;
}

const lisbon = { latitude: 38.71667, longitude: -9.13333 };
const lisbonDay = { date: '2026-11-24', timeZone: 'Europe/Lisbon', unit: 'celsius' as const };

describe('geocode', () => {
  it('finds a plain name and asks the way the real API is asked', async () => {
    const place = await weather.geocode('Lisbon');
    expect(place).toEqual({
      name: 'Lisbon, Portugal',
      countryCode: 'PT',
      latitude: 38.71667,
      longitude: -9.13333,
      timeZone: 'Europe/Lisbon',
    });
    expect(fake.requests).toHaveLength(1);
    const [req] = fake.requests;
    expect(req?.path).toBe('/v1/search');
    expect(Object.fromEntries(req?.query ?? [])).toEqual({
      name: 'Lisbon',
      count: '5',
      language: 'en',
      format: 'json',
    });
  });

  it('names the state when it differs from the place, and searches only the part before the comma', async () => {
    const place = await weather.geocode('  Austin ,  Texas ');
    expect(place?.name).toBe('Austin, Texas, United States');
    expect(place?.countryCode).toBe('US');
    expect(place?.timeZone).toBe('America/Chicago');
    expect(fake.requests[0]?.query.get('name')).toBe('Austin');
  });

  it('tells Paris, Texas from Paris by the state, country or country code after the comma', async () => {
    expect((await weather.geocode('Paris'))?.name).toBe('Paris, Île-de-France, France');
    expect((await weather.geocode('Paris, Texas'))?.name).toBe('Paris, Texas, United States');
    expect((await weather.geocode('paris, tx'))?.name).toBe('Paris, Texas, United States');
    expect((await weather.geocode('Paris, US'))?.name).toBe('Paris, Texas, United States');
    expect((await weather.geocode('Paris, France'))?.countryCode).toBe('FR');
    expect((await weather.geocode('Paris, Ile-de-France'))?.countryCode).toBe('FR');
    expect((await weather.geocode('Paris, Texas, USA'))?.latitude).toBe(33.66094);
    expect(fake.requests.map((r) => r.query.get('name')?.toLowerCase())).toEqual(Array(7).fill('paris'));
  });

  it('prefers the most populous match whatever the order of the answer', async () => {
    const [texas] = DEFAULT_PLACES.filter((p) => p.name === 'Paris' && p.country_code === 'US');
    const [france] = DEFAULT_PLACES.filter((p) => p.name === 'Paris' && p.country_code === 'FR');
    if (!texas || !france) throw new Error('fixture places missing');
    fake.places = [texas, france];
    expect((await weather.geocode('Paris'))?.countryCode).toBe('FR');
  });

  it('answers null for an unknown place, or when nothing found is where the query says', async () => {
    expect(await weather.geocode('Atlantis')).toBeNull();
    expect(await weather.geocode('Paris, Oregon')).toBeNull();
    expect(await weather.geocode(' , Texas')).toBeNull();
  });

  it('keeps places with only the required fields and names them by what is there', async () => {
    fake.places = [
      // "Empty fields are not returned": no admin1, no population, no time zone.
      {
        id: 1,
        name: 'Tinyville',
        latitude: 10,
        longitude: 20,
        elevation: 0,
        feature_code: 'PPL',
        country_code: 'xx',
        country_id: 2,
        country: 'Nowhere',
      },
    ];
    expect(await weather.geocode('Tinyville')).toEqual({
      name: 'Tinyville, Nowhere',
      countryCode: 'XX',
      latitude: 10,
      longitude: 20,
      timeZone: null,
    });
  });
});

describe('forecast', () => {
  it('gives the day asked in °C, km/h and mm by default', async () => {
    const day = await weather.forecast(lisbon, lisbonDay);
    const want = fakeDay(lisbon.latitude, lisbon.longitude, '2026-11-24');
    expect(day).toMatchObject({
      date: '2026-11-24',
      weatherCode: want.weather_code,
      temperatureMax: want.temperature_2m_max,
      temperatureMin: want.temperature_2m_min,
      temperatureUnit: 'celsius',
      precipitationProbability: want.precipitation_probability_max,
      precipitationSum: want.precipitation_sum,
      windSpeedMax: want.wind_speed_10m_max,
      sunrise: want.sunrise.slice(11),
      sunset: want.sunset.slice(11),
    });
    expect(day.sunrise).toMatch(/^\d{2}:\d{2}$/);
    expect(day.summary.length).toBeGreaterThan(0);

    const q = fake.requests[0]?.query;
    expect(fake.requests[0]?.path).toBe('/v1/forecast');
    expect(q?.get('daily')).toBe(
      'weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max,precipitation_sum,wind_speed_10m_max,sunrise,sunset',
    );
    expect(q?.get('timezone')).toBe('Europe/Lisbon');
    expect(q?.get('start_date')).toBe('2026-11-24');
    expect(q?.get('end_date')).toBe('2026-11-24');
    expect(q?.has('temperature_unit')).toBe(false);
    expect(q?.has('wind_speed_unit')).toBe(false);
    expect(q?.has('precipitation_unit')).toBe(false);
  });

  it('asks for °F, mph and inches when the unit is fahrenheit', async () => {
    // A day the fake makes wet, so the precipitation conversion is seen.
    const at = { latitude: 30.26715, longitude: -97.74306 };
    const date = ['2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28'].find(
      (d) => fakeDay(at.latitude, at.longitude, d).precipitation_sum > 0,
    );
    if (!date) throw new Error('no wet day in the fixture dates');
    const celsius = await weather.forecast(at, { date, timeZone: 'America/Chicago', unit: 'celsius' });
    const fahrenheit = await weather.forecast(at, { date, timeZone: 'America/Chicago', unit: 'fahrenheit' });

    const q = fake.requests[1]?.query;
    expect(q?.get('temperature_unit')).toBe('fahrenheit');
    expect(q?.get('wind_speed_unit')).toBe('mph');
    expect(q?.get('precipitation_unit')).toBe('inch');

    expect(fahrenheit.temperatureUnit).toBe('fahrenheit');
    expect(fahrenheit.temperatureMax).toBeCloseTo((celsius.temperatureMax * 9) / 5 + 32, 1);
    expect(fahrenheit.temperatureMin).toBeCloseTo((celsius.temperatureMin * 9) / 5 + 32, 1);
    expect(fahrenheit.windSpeedMax).toBeCloseTo((celsius.windSpeedMax ?? Number.NaN) / 1.609344, 1);
    expect(fahrenheit.precipitationSum).toBeCloseTo((celsius.precipitationSum ?? Number.NaN) / 25.4, 2);
    expect(fahrenheit.weatherCode).toBe(celsius.weatherCode);
    expect(fahrenheit.sunrise).toBe(celsius.sunrise);
  });

  it('refuses an answer in other units than asked', async () => {
    const answer = await fetch(
      `${fake.forecastUrl}?latitude=1&longitude=2&daily=weather_code,temperature_2m_max&timezone=UTC&start_date=2026-01-01&end_date=2026-01-01`,
    );
    const body = (await answer.json()) as { daily_units: Record<string, string> };
    body.daily_units.temperature_2m_max = '°F';
    fake.setFailure('forecast', { status: 200, body: JSON.stringify(body) });
    const err = await failure(weather.forecast(lisbon, lisbonDay));
    expect(err.code).toBe('bad_response');
  });
});

describe('failures', () => {
  const noPersonalData = (err: WeatherError) => {
    for (const secret of ['Lisbon', 'Paris', '38.7', '-9.13', '9.13']) expect(err.message).not.toContain(secret);
  };

  it('an unreachable server is unavailable', async () => {
    await fake.close();
    const err = await failure(weather.forecast(lisbon, lisbonDay));
    expect(err.code).toBe('unavailable');
    noPersonalData(err);
    const geo = await failure(weather.geocode('Lisbon'));
    expect(geo.code).toBe('unavailable');
    noPersonalData(geo);
    // So afterEach can close it again.
    fake = await startFakeOpenMeteo();
  });

  it('5xx and 429 are unavailable', async () => {
    fake.setFailure('forecast', { status: 500 });
    expect((await failure(weather.forecast(lisbon, lisbonDay))).code).toBe('unavailable');
    fake.setFailure('forecast', { status: 503, body: '<html>busy</html>' });
    expect((await failure(weather.forecast(lisbon, lisbonDay))).code).toBe('unavailable');
    fake.setFailure('geocoding', { status: 429, body: '{"error":true,"reason":"Too many requests"}' });
    const err = await failure(weather.geocode('Lisbon'));
    expect(err.code).toBe('unavailable');
    noPersonalData(err);
  });

  it('garbage or a wrong shape is bad_response', async () => {
    fake.setFailure('forecast', { status: 200, body: '{"daily": [1, 2' });
    expect((await failure(weather.forecast(lisbon, lisbonDay))).code).toBe('bad_response');
    fake.setFailure('forecast', { status: 200, body: '{"daily":{"time":["2026-11-24"]}}' });
    expect((await failure(weather.forecast(lisbon, lisbonDay))).code).toBe('bad_response');
    fake.setFailure('geocoding', { status: 200, body: 'not json' });
    expect((await failure(weather.geocode('Lisbon'))).code).toBe('bad_response');
    fake.setFailure('geocoding', { status: 200, body: '{"results":[{"name":"Lisbon"}]}' });
    const err = await failure(weather.geocode('Lisbon'));
    expect(err.code).toBe('bad_response');
    noPersonalData(err);
  });

  it('a day missing from the answer is bad_response', async () => {
    fake.setFailure('forecast', {
      status: 200,
      body: JSON.stringify({
        daily_units: { temperature_2m_max: '°C' },
        daily: {
          time: ['2026-11-23'],
          weather_code: [1],
          temperature_2m_max: [20],
          temperature_2m_min: [10],
          precipitation_probability_max: [null],
          precipitation_sum: [null],
          wind_speed_10m_max: [null],
          sunrise: [null],
          sunset: [null],
        },
      }),
    });
    expect((await failure(weather.forecast(lisbon, lisbonDay))).code).toBe('bad_response');
  });

  it("Open-Meteo's 400 is bad_response, without its reason (which repeats the coordinates)", async () => {
    const err = await failure(weather.forecast({ latitude: 100, longitude: -9.13 }, lisbonDay));
    expect(err.code).toBe('bad_response');
    expect(err.message).toContain('400');
    expect(err.message).not.toContain('100');
    noPersonalData(err);
    const zone = await failure(weather.forecast(lisbon, { ...lisbonDay, timeZone: 'Mars/Olympus' }));
    expect(zone.code).toBe('bad_response');
  });

  it('an answer slower than timeoutMs is unavailable', async () => {
    const quick = createOpenMeteo({ forecastUrl: fake.forecastUrl, geocodingUrl: fake.geocodingUrl, timeoutMs: 150 });
    fake.setFailure('forecast', { delayMs: 5000 });
    const err = await failure(quick.forecast(lisbon, lisbonDay));
    expect(err.code).toBe('unavailable');
    expect(err.message).toContain('150 ms');
  });

  it("the caller's abort is passed on as it is", async () => {
    fake.setFailure('geocoding', { delayMs: 5000 });
    const controller = new AbortController();
    const reason = new Error('daily run cancelled');
    const pending = weather.geocode('Lisbon', controller.signal);
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });
});

it('sends the user agent it is given', async () => {
  const seen: Array<string | null> = [];
  const provider = createOpenMeteo({
    forecastUrl: fake.forecastUrl,
    geocodingUrl: fake.geocodingUrl,
    timeoutMs: 2000,
    userAgent: 'Daybook/test',
    fetch: (input, init) => {
      seen.push(new Headers(init?.headers).get('user-agent'));
      return fetch(input, init);
    },
  });
  expect(await provider.geocode('Berlin')).toMatchObject({ name: 'Berlin, Germany', countryCode: 'DE' });
  expect(seen).toEqual(['Daybook/test']);
  expect(provider.attribution).toEqual({ text: 'Weather data by Open-Meteo.com', url: 'https://open-meteo.com/' });
});

describe('describeForecast', () => {
  const base: DayForecast = {
    date: '2026-11-24',
    summary: 'Partly cloudy',
    weatherCode: 2,
    temperatureMax: 23.6,
    temperatureMin: 17.8,
    temperatureUnit: 'celsius',
    precipitationProbability: 40,
    precipitationSum: 1.24,
    windSpeedMax: 19.7,
    sunrise: '07:12',
    sunset: '17:03',
  };

  it('writes one plain line in metric', () => {
    expect(describeForecast(base)).toBe(
      'Partly cloudy, 18–24 °C, 40% chance of rain (1.2 mm), wind up to 20 km/h. Sunrise 07:12, sunset 17:03.',
    );
  });

  it('writes °F, inches and mph for fahrenheit', () => {
    expect(
      describeForecast({
        ...base,
        summary: 'Light snow',
        weatherCode: 71,
        temperatureMax: 34.2,
        temperatureMin: 21.5,
        temperatureUnit: 'fahrenheit',
        precipitationProbability: 70,
        precipitationSum: 0.126,
        windSpeedMax: 12.3,
      }),
    ).toBe('Light snow, 22–34 °F, 70% chance of snow (0.13 in), wind up to 12 mph. Sunrise 07:12, sunset 17:03.');
  });

  it('leaves out what the provider did not give, and spells out ranges below zero', () => {
    expect(
      describeForecast({
        ...base,
        summary: 'Overcast',
        weatherCode: 3,
        temperatureMax: 2.4,
        temperatureMin: -3.4,
        precipitationProbability: null,
        precipitationSum: null,
        windSpeedMax: null,
        sunrise: null,
        sunset: '16:40',
      }),
    ).toBe('Overcast, -3 to 2 °C. Sunset 16:40.');
    expect(
      describeForecast({ ...base, precipitationProbability: 0, precipitationSum: 0, sunrise: null, sunset: null }),
    ).toBe('Partly cloudy, 18–24 °C, 0% chance of rain, wind up to 20 km/h.');
  });
});

describe('unitFor', () => {
  it('picks fahrenheit for the US when the setting is auto, and the setting otherwise', () => {
    expect(unitFor('auto', 'US')).toBe('fahrenheit');
    expect(unitFor('auto', 'us')).toBe('fahrenheit');
    expect(unitFor('auto', 'PT')).toBe('celsius');
    expect(unitFor('auto', null)).toBe('celsius');
    expect(unitFor('celsius', 'US')).toBe('celsius');
    expect(unitFor('fahrenheit', 'DE')).toBe('fahrenheit');
  });
});
