import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, slugify } from './config.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has working defaults for a newcomer: embedded database in ./data, port 3000', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.db.url).toBeUndefined();
    expect(config.db.dataDir).toMatch(/\/data$/);
    expect(config.publicUrl).toBe('http://localhost:3000');
    expect(config.web.serve).toBe(false);
    // No placeholder profiles: the footer and about page show links only once CREATOR_LINKS is set.
    expect(config.creator.links).toEqual([]);
  });

  it('reads every variable it documents', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      PORT: '8080',
      PUBLIC_URL: 'https://daybook.example.org/',
      DATABASE_URL: 'postgres://u@db:5432/daybook',
      DATA_DIR: '/var/lib/daybook',
      CREATOR_NAME: 'Ana Lima',
      CREATOR_EMAIL: 'ana@example.org',
      CREATOR_LINKS: 'GitHub=https://github.com/ana, Blog=https://ana.example.org',
    });
    expect(config.port).toBe(8080);
    expect(config.publicUrl).toBe('https://daybook.example.org');
    expect(config.db.url).toBe('postgres://u@db:5432/daybook');
    expect(config.db.dataDir).toBe('/var/lib/daybook');
    expect(config.web.serve).toBe(true);
    expect(config.creator).toMatchObject({
      name: 'Ana Lima',
      slug: 'ana-lima',
      email: 'ana@example.org',
      links: [
        { label: 'GitHub', url: 'https://github.com/ana' },
        { label: 'Blog', url: 'https://ana.example.org' },
      ],
    });
  });

  it("FRONTEND_URL_*: mailed links default to the app's pages and may point elsewhere, with a {key}", () => {
    expect(loadConfig({ PUBLIC_URL: 'https://d.example.org' }).frontendUrls).toEqual({
      verifyEmail: 'https://d.example.org/auth/verify-email/{key}',
      resetPassword: 'https://d.example.org/auth/reset-password/{key}',
      signup: 'https://d.example.org/auth/signup',
    });
    const spa = loadConfig({
      FRONTEND_URL_VERIFY_EMAIL: 'https://app.example.org/account/verify-email/{key}',
      FRONTEND_URL_RESET_PASSWORD: 'https://app.example.org/account/password/reset/key/{key}',
      FRONTEND_URL_SIGNUP: 'https://app.example.org/account/signup',
    });
    expect(spa.frontendUrls.resetPassword).toBe('https://app.example.org/account/password/reset/key/{key}');
    expect(problemsOf({ FRONTEND_URL_VERIFY_EMAIL: 'https://app.example.org/verify' })[0]).toMatch(
      /^FRONTEND_URL_VERIFY_EMAIL: must contain \{key\}/,
    );
    expect(problemsOf({ FRONTEND_URL_RESET_PASSWORD: 'javascript:alert(1)//{key}' })[0]).toMatch(
      /^FRONTEND_URL_RESET_PASSWORD: must be an http\(s\) URL/,
    );
    expect(problemsOf({ FRONTEND_URL_SIGNUP: '/auth/signup' })[0]).toMatch(/^FRONTEND_URL_SIGNUP: must be an http/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).port).toBe(3000);
  });

  it('reads the weather and daily message settings, and refuses an unknown weather provider', () => {
    expect(loadConfig({}).weather).toEqual({
      provider: 'open-meteo',
      forecastUrl: 'https://api.open-meteo.com/v1/forecast',
      geocodingUrl: 'https://geocoding-api.open-meteo.com/v1/search',
      timeoutMs: 8000,
    });
    const config = loadConfig({
      WEATHER_PROVIDER: 'none',
      OPEN_METEO_FORECAST_URL: 'http://meteo.lan/v1/forecast',
      DAILY_CONCURRENCY: '20',
    });
    expect(config.weather.provider).toBe('none');
    expect(config.weather.forecastUrl).toBe('http://meteo.lan/v1/forecast');
    expect(config.daily.concurrency).toBe(20);
    expect(problemsOf({ WEATHER_PROVIDER: 'accuweather' })).toEqual([
      'WEATHER_PROVIDER: must be open-meteo or none (got "accuweather")',
    ]);
  });

  it('names the bad variable and the value it got', () => {
    expect(problemsOf({ PORT: 'eighty' })).toEqual(['PORT: must be a port number from 1 to 65535 (got "eighty")']);
    expect(problemsOf({ PORT: '70000' })[0]).toMatch(/^PORT:/);
    expect(problemsOf({ DATABASE_URL: 'mysql://x' })[0]).toMatch(/^DATABASE_URL: must be a postgres/);
    expect(problemsOf({ PUBLIC_URL: 'ftp://x' })[0]).toMatch(/^PUBLIC_URL: must be an http\(s\) URL/);
    expect(problemsOf({ CREATOR_LINKS: 'GitHub' })[0]).toMatch(/^CREATOR_LINKS: must be comma-separated/);
    expect(problemsOf({ LOG_LEVEL: 'loud' })[0]).toMatch(/^LOG_LEVEL:/);
  });

  it('reports every problem at once, in a readable message', () => {
    try {
      loadConfig({ PORT: 'x', NODE_ENV: 'staging' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/^Invalid configuration:\n {2}- NODE_ENV: .*\n {2}- PORT: /);
    }
  });

  it('TRUST_PROXY takes a hop count or proxy addresses, never "trust everything"', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    // "true" from older setups means the usual single reverse proxy.
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,loopback,fd00::/8' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'loopback',
      'fd00::/8',
    ]);
    for (const bad of ['everything', '10.0.0.0/33', '300.1.1.1', '0.0.0.0/0/1', '99']) {
      expect(problemsOf({ TRUST_PROXY: bad })[0]).toMatch(/^TRUST_PROXY: must be false, a number of proxy hops/);
    }
  });

  it('FETCH_ALLOW lists host names, addresses and CIDR ranges, and names the bad entry', () => {
    expect(loadConfig({}).fetch.allow).toEqual([]);
    expect(loadConfig({ FETCH_ALLOW: 'searxng.lan, 192.168.1.0/24,fd00::/8,10.0.0.5' }).fetch.allow).toEqual([
      'searxng.lan',
      '192.168.1.0/24',
      'fd00::/8',
      '10.0.0.5',
    ]);
    expect(problemsOf({ FETCH_ALLOW: 'searxng.lan,10.0.0.0/33' })[0]).toMatch(
      /^FETCH_ALLOW: "10.0.0.0\/33" is not a valid CIDR range/,
    );
    expect(problemsOf({ FETCH_ALLOW: 'http://nas.lan:8080' })[0]).toMatch(
      /^FETCH_ALLOW: "http:\/\/nas.lan:8080" is not a host name, an IP address or a CIDR range/,
    );
  });

  it('enables a calendar provider by its client id and secret, and refuses half a client', () => {
    expect(loadConfig({}).calendar).toEqual({ google: undefined, microsoft: undefined });
    const both = loadConfig({
      GOOGLE_CLIENT_ID: 'g-id',
      GOOGLE_CLIENT_SECRET: 'g-secret',
      MICROSOFT_CLIENT_ID: 'm-id',
      MICROSOFT_CLIENT_SECRET: 'm-secret',
    }).calendar;
    expect(both).toEqual({
      google: { clientId: 'g-id', clientSecret: 'g-secret' },
      microsoft: { clientId: 'm-id', clientSecret: 'm-secret', tenant: 'common' },
    });
    expect(problemsOf({ GOOGLE_CLIENT_ID: 'g-id', MICROSOFT_CLIENT_SECRET: 'm-secret' })).toEqual([
      'GOOGLE_CLIENT_SECRET: must be set together with GOOGLE_CLIENT_ID',
      'MICROSOFT_CLIENT_ID: must be set together with MICROSOFT_CLIENT_SECRET',
    ]);
    expect(problemsOf({ MICROSOFT_TENANT: 'a/b' })[0]).toMatch(/^MICROSOFT_TENANT: must be common/);
  });

  it('refuses a creator slug that would hide an app route', () => {
    expect(problemsOf({ CREATOR_SLUG: 'memories' })[0]).toBe(
      'CREATOR_SLUG: is a reserved path of the app (got "memories")',
    );
    expect(problemsOf({ CREATOR_SLUG: 'Not A Slug' })[0]).toMatch(/^CREATOR_SLUG: must be lowercase/);
  });
});

describe('slugify', () => {
  it('turns a name into a path segment', () => {
    expect(slugify('José María O’Neil')).toBe('jose-maria-o-neil');
    // A name that collides with an app route falls back to /about.
    expect(slugify('Chat')).toBe('about');
    expect(slugify('!!!')).toBe('about');
  });
});
