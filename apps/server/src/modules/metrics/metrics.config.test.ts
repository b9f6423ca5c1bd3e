// METRICS_ENABLED and METRICS_TOKEN: off by default; on only with a token Prometheus can send.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
  }
  throw new Error('expected a ConfigError');
}

const TOKEN = 'a1b2c3d4e5f6a7b8c9d0';

describe('metrics settings', () => {
  it('are off by default, even with a token', () => {
    expect(loadConfig({}).metrics).toBeNull();
    expect(loadConfig({ METRICS_TOKEN: TOKEN }).metrics).toBeNull();
    expect(loadConfig({ METRICS_ENABLED: 'false', METRICS_TOKEN: TOKEN }).metrics).toBeNull();
  });

  it('turn on with a token', () => {
    expect(loadConfig({ METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN }).metrics).toEqual({
      token: TOKEN,
      workerPort: 9464,
    });
    expect(loadConfig({ METRICS_ENABLED: 'on', METRICS_TOKEN: ` ${TOKEN} ` }).metrics).toEqual({
      token: TOKEN,
      workerPort: 9464,
    });
  });

  it('name what is wrong: no token, a short one, one a header cannot carry, a flag that is not one', () => {
    expect(problems({ METRICS_ENABLED: 'true' })).toEqual([
      'METRICS_TOKEN: must be set when METRICS_ENABLED is on (Prometheus sends it as a bearer token)',
    ]);
    // Empty means unset, as in .env files.
    expect(problems({ METRICS_ENABLED: 'yes', METRICS_TOKEN: '' })).toHaveLength(1);
    expect(problems({ METRICS_ENABLED: 'true', METRICS_TOKEN: 'short' })).toEqual([
      'METRICS_TOKEN: must be at least 16 characters (e.g. from `openssl rand -hex 32`) (got "short")',
    ]);
    expect(problems({ METRICS_ENABLED: 'true', METRICS_TOKEN: 'has spaces in the middle' })[0]).toMatch(
      /^METRICS_TOKEN: must be letters, digits and - \. _ ~ \+ \/ only/,
    );
    expect(problems({ METRICS_ENABLED: 'maybe', METRICS_TOKEN: TOKEN })).toEqual([
      'METRICS_ENABLED: must be true or false (got "maybe")',
    ]);
  });
});
