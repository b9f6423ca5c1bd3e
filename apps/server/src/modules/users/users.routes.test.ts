import { DAILY_MESSAGES, ZUserMe } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('/api/users/me/', () => {
  it('GET returns the signed-in user with settings', async () => {
    const { browser, email, userId } = await signedInUser(t);
    const res = await browser.get('/api/users/me/');
    expect(res.statusCode).toBe(200);
    expect(ZUserMe.parse(res.json())).toMatchObject({
      id: userId,
      email,
      email_verified: true,
      is_admin: false,
      is_daily_message_paused: false,
      has_usable_password: true,
    });
  });

  it('PATCH stores a time zone with its proper case, and keeps current names browsers report', async () => {
    const { browser } = await signedInUser(t);
    const lower = await browser.patch('/api/users/me/', { time_zone: 'europe/berlin' });
    expect(lower.statusCode).toBe(200);
    expect(lower.json().time_zone).toBe('Europe/Berlin');
    // ICU prefers the legacy Asia/Calcutta; the browser says Asia/Kolkata, and so must the setting.
    expect((await browser.patch('/api/users/me/', { time_zone: 'Asia/Kolkata' })).json().time_zone).toBe(
      'Asia/Kolkata',
    );
    expect((await browser.patch('/api/users/me/', { time_zone: 'Mars/Olympus' })).statusCode).toBe(400);
  });

  it('PATCH changes is_daily_message_paused and returns the user', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.patch('/api/users/me/', { is_daily_message_paused: true });
    expect(res.statusCode).toBe(200);
    expect(res.json().is_daily_message_paused).toBe(true);
    expect((await browser.get('/api/users/me/')).json().is_daily_message_paused).toBe(true);
    expect(
      (await browser.patch('/api/users/me/', { is_daily_message_paused: false })).json().is_daily_message_paused,
    ).toBe(false);
  });

  it('PATCH rejects wrong types and unknown fields with 400, changing nothing', async () => {
    const { browser } = await signedInUser(t);
    const wrongType = await browser.patch('/api/users/me/', { is_daily_message_paused: 'yes' });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json()).toEqual({
      error: 'Some fields are invalid.',
      code: 'validation_error',
      field_errors: { is_daily_message_paused: ['Must be true or false.'] },
    });
    const unknown = await browser.patch('/api/users/me/', { is_admin: true });
    expect(unknown.statusCode).toBe(400);
    expect((await browser.get('/api/users/me/')).json().is_admin).toBe(false);
  });

  it("PATCH with a location where no weather is set up: a field error in the user's words, nothing stored", async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.patch('/api/users/me/', { location: 'Lisbon', time_zone: 'Europe/Lisbon' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: DAILY_MESSAGES.weatherNotSetUp,
      code: 'validation_error',
      field_errors: { location: [DAILY_MESSAGES.weatherNotSetUp] },
    });
    expect(JSON.stringify(res.json())).not.toMatch(/WEATHER_PROVIDER|[A-Z]{3,}_[A-Z]{3,}/);
    expect((await browser.get('/api/users/me/')).json()).toMatchObject({ location: null, time_zone: null });
  });

  it('answers 401 without a session', async () => {
    const browser = new Browser(t.app);
    expect((await browser.get('/api/users/me/')).json()).toEqual({
      error: 'Authentication credentials were not provided.',
      code: 'unauthorized',
    });
    expect((await browser.patch('/api/users/me/', { is_daily_message_paused: true })).statusCode).toBe(401);
  });
});
