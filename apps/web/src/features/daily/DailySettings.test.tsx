import { DAILY_MESSAGES, type TUserMe } from '@daybook/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import {
  deferred,
  type Handler,
  mockFetch,
  type RecordedRequest,
  type Reply,
  reply,
  USER_ME,
} from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';
import { SEND_NOW_DELIVERED, SEND_NOW_FAILED, SEND_NOW_QUEUED, TIME_ZONE_UNKNOWN } from './DailySettings.tsx';

// The device's zone is fixed so the "Use this device's time zone" button can be asserted on.
// Web files share their worker's modules (isolate: false): the modules this file imports are loaded
// afresh so they see the mock, and dropped after it so later files get the real ones.
vi.hoisted(() => vi.resetModules());
afterAll(() => vi.resetModules());
vi.mock('../../lib/time-zones.ts', async (original) => ({
  ...(await original<typeof import('../../lib/time-zones.ts')>()),
  browserTimeZone: () => 'Europe/Berlin',
}));

const ME = '/api/users/me/';
const SEND = 'POST /api/daily-messages/send-now/';
const FAILED = 'Failed to update user settings.';
const LISBON = { name: 'Lisbon, Portugal', country_code: 'PT', latitude: 38.72, longitude: -9.14 };
const SERVER_ERROR = reply(500, { error: 'Internal server error', code: 'internal_error' });

/** The server's answer to a PATCH: the user with the changes applied. */
const echo = (request: RecordedRequest): Reply => reply(200, { ...USER_ME, ...(request.body as object) });

async function openProfile(routesByKey: Record<string, Handler> = {}, me: TUserMe = USER_ME as TUserMe) {
  const network = mockFetch({ [`GET ${ME}`]: reply(200, me), [`PATCH ${ME}`]: echo, ...routesByKey });
  renderRoutes(routes, { path: '/profile', auth: signedIn });
  const main = within(screen.getByRole('main'));
  await main.findByRole('heading', { level: 2, name: 'Daily message' });
  const patches = () => network.calls(`PATCH ${ME}`).map((call) => call.body);
  return { ...network, main, patches };
}

describe('Daily message settings', () => {
  it('shows the saved settings, each control labelled', async () => {
    const { main } = await openProfile(
      {},
      { ...(USER_ME as TUserMe), location: LISBON, temperature_unit: 'celsius', daily_message_email: true },
    );
    expect(main.getByLabelText('Delivery time')).toHaveValue('07:00');
    expect(main.getByText('Delivered around 07:00 your time.')).toBeInTheDocument();
    expect(main.getByLabelText('Time zone')).toHaveValue('Europe/Lisbon');
    expect(main.getByLabelText('Location for the weather')).toHaveValue('Lisbon, Portugal');
    expect(main.getByLabelText('Location for the weather')).toHaveAccessibleDescription('Weather for Lisbon, Portugal');
    const units = main.getByRole('radiogroup', { name: 'Temperature units' });
    expect(within(units).getByRole('radio', { name: '°C' })).toBeChecked();
    expect(main.getByRole('switch', { name: 'Also email it to me' })).toHaveAttribute('aria-checked', 'true');
    expect(main.getByRole('switch', { name: 'Pause daily messages' })).toHaveAttribute('aria-checked', 'false');
    expect(main.getByRole('button', { name: "Use this device's time zone (Europe/Berlin)" })).toBeInTheDocument();
    expect(main.getByRole('button', { name: "Send today's message now" })).toBeInTheDocument();
  });

  it('says UTC is used until a time zone is chosen', async () => {
    const { main } = await openProfile({}, { ...(USER_ME as TUserMe), time_zone: null });
    expect(main.getByLabelText('Time zone')).toHaveValue('');
    expect(main.getByText('Delivered around 07:00 UTC, until you choose a time zone.')).toBeInTheDocument();
  });

  it('saves the delivery time when the field is left', async () => {
    const { main, patches } = await openProfile();
    const time = main.getByLabelText('Delivery time');
    fireEvent.change(time, { target: { value: '08:30' } });
    fireEvent.blur(time);
    expect(await main.findByText('Delivered around 08:30 your time.')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByText('Delivery time set to 08:30.')).toBeInTheDocument());
    expect(patches()).toEqual([{ daily_message_time: '08:30' }]);
    // Leaving it again unchanged sends nothing.
    fireEvent.blur(time);
    expect(patches()).toHaveLength(1);
  });

  it('puts the delivery time back and says so when saving fails', async () => {
    const saved = deferred<Reply>();
    const { main, patches } = await openProfile({ [`PATCH ${ME}`]: () => saved.promise });
    const time = main.getByLabelText('Delivery time');
    fireEvent.change(time, { target: { value: '21:15' } });
    fireEvent.keyDown(time, { key: 'Enter' });
    // Shown at once, before the server answers.
    expect(main.getByText('Delivered around 21:15 your time.')).toBeInTheDocument();
    await waitFor(() => expect(patches()).toEqual([{ daily_message_time: '21:15' }]));
    saved.resolve(SERVER_ERROR);
    expect(await main.findByRole('alert')).toHaveTextContent(FAILED);
    expect(time).toHaveValue('07:00');
    expect(main.getByText('Delivered around 07:00 your time.')).toBeInTheDocument();
  });

  it('saves a time zone typed in any case under its canonical name', async () => {
    const { main, patches } = await openProfile();
    const zone = main.getByLabelText('Time zone');
    await userEvent.clear(zone);
    await userEvent.type(zone, 'asia/tokyo{Enter}');
    await waitFor(() => expect(patches()).toEqual([{ time_zone: 'Asia/Tokyo' }]));
    expect(zone).toHaveValue('Asia/Tokyo');
    expect(await screen.findByText('Time zone set to Asia/Tokyo.')).toBeInTheDocument();
  });

  it('refuses a time zone that does not exist without asking the server', async () => {
    const { main, patches } = await openProfile();
    const zone = main.getByLabelText('Time zone');
    await userEvent.clear(zone);
    await userEvent.type(zone, 'Mars/Olympus_Mons');
    await userEvent.tab();
    expect(await main.findByRole('alert')).toHaveTextContent(TIME_ZONE_UNKNOWN);
    expect(zone).toHaveAttribute('aria-invalid', 'true');
    expect(zone).toHaveAccessibleDescription(expect.stringContaining(TIME_ZONE_UNKNOWN));
    expect(patches()).toEqual([]);
  });

  it("uses the device's time zone, and puts the old one back when saving fails", async () => {
    const { main, patches } = await openProfile({
      [`PATCH ${ME}`]: (request, previous) => (previous === 0 ? SERVER_ERROR : echo(request)),
    });
    const device = main.getByRole('button', { name: "Use this device's time zone (Europe/Berlin)" });
    await userEvent.click(device);
    expect(await main.findByRole('alert')).toHaveTextContent(FAILED);
    expect(main.getByLabelText('Time zone')).toHaveValue('Europe/Lisbon');
    expect(device).toBeInTheDocument();

    await userEvent.click(device);
    await waitFor(() => expect(main.getByLabelText('Time zone')).toHaveValue('Europe/Berlin'));
    expect(patches()).toEqual([{ time_zone: 'Europe/Berlin' }, { time_zone: 'Europe/Berlin' }]);
    // The device's zone is the saved one now: nothing left to offer, and focus goes to the field.
    await waitFor(() => expect(main.queryByRole('button', { name: /this device's time zone/ })).toBeNull());
    await waitFor(() => expect(main.getByLabelText('Time zone')).toHaveFocus());
    expect(main.queryByRole('alert')).toBeNull();
  });

  it('saves a place, shows the name the server found, and clears it', async () => {
    const found = deferred<Reply>();
    const { main, patches } = await openProfile({
      [`PATCH ${ME}`]: (_request, previous) =>
        previous === 0 ? found.promise : reply(200, { ...USER_ME, location: null }),
    });
    const place = main.getByLabelText('Location for the weather');
    expect(main.queryByRole('button', { name: 'Clear' })).toBeNull();
    await userEvent.type(place, '  lisbon ');
    await userEvent.click(main.getByRole('button', { name: 'Save' }));
    // Busy while the server looks the place up.
    const saving = main.getByRole('button', { name: 'Saving...' });
    expect(saving).toHaveAttribute('aria-disabled', 'true');
    expect(saving.closest('form')).toHaveAttribute('aria-busy', 'true');
    expect(patches()).toEqual([{ location: 'lisbon' }]);

    found.resolve(reply(200, { ...USER_ME, location: LISBON }));
    await waitFor(() => expect(place).toHaveValue('Lisbon, Portugal'));
    expect(place).toHaveAccessibleDescription('Weather for Lisbon, Portugal');
    expect(screen.getByText('Weather location set to Lisbon, Portugal.')).toBeInTheDocument();
    // Saving the same place again is not offered.
    expect(main.getByRole('button', { name: 'Save' })).toHaveAttribute('aria-disabled', 'true');

    await userEvent.click(main.getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(place).toHaveValue(''));
    expect(patches()).toEqual([{ location: 'lisbon' }, { location: null }]);
    expect(place).toHaveAccessibleDescription('No location yet: your message leaves the weather out.');
    expect(main.queryByRole('button', { name: 'Clear' })).toBeNull();
  });

  it("shows the server's message under the place it could not find, then the weather service's", async () => {
    const { main, patches } = await openProfile({
      [`PATCH ${ME}`]: (_request, previous) =>
        previous === 0
          ? reply(400, {
              error: DAILY_MESSAGES.locationNotFound,
              code: 'validation_error',
              field_errors: { location: [DAILY_MESSAGES.locationNotFound] },
            })
          : reply(503, {
              error: DAILY_MESSAGES.weatherUnavailable,
              code: 'unavailable',
              field_errors: { location: [DAILY_MESSAGES.weatherUnavailable] },
            }),
    });
    const place = main.getByLabelText('Location for the weather');
    await userEvent.type(place, 'Atlantis{Enter}');
    expect(await main.findByRole('alert')).toHaveTextContent(DAILY_MESSAGES.locationNotFound);
    expect(place).toHaveAttribute('aria-invalid', 'true');
    expect(place).toHaveAccessibleDescription(expect.stringContaining(DAILY_MESSAGES.locationNotFound));
    // What was typed stays to be corrected; nothing was saved.
    expect(place).toHaveValue('Atlantis');
    expect(place).toHaveAccessibleDescription(expect.stringContaining('No location yet'));

    await userEvent.click(main.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(main.getByRole('alert')).toHaveTextContent(DAILY_MESSAGES.weatherUnavailable));
    expect(patches()).toEqual([{ location: 'Atlantis' }, { location: 'Atlantis' }]);
  });

  it('keeps the place when clearing it fails', async () => {
    const { main } = await openProfile(
      { [`PATCH ${ME}`]: SERVER_ERROR },
      { ...(USER_ME as TUserMe), location: LISBON },
    );
    await userEvent.click(main.getByRole('button', { name: 'Clear' }));
    expect(await main.findByRole('alert')).toHaveTextContent(FAILED);
    expect(main.getByLabelText('Location for the weather')).toHaveValue('Lisbon, Portugal');
    expect(main.getByText('Lisbon, Portugal')).toBeInTheDocument();
  });

  it('saves the units from the keyboard, and puts them back when saving fails', async () => {
    const { main, patches } = await openProfile({
      [`PATCH ${ME}`]: (request, previous) => (previous === 0 ? echo(request) : SERVER_ERROR),
    });
    const units = main.getByRole('radiogroup', { name: 'Temperature units' });
    await userEvent.click(within(units).getByRole('radio', { name: '°F' }));
    await waitFor(() => expect(patches()).toEqual([{ temperature_unit: 'fahrenheit' }]));
    expect(within(units).getByRole('radio', { name: '°F' })).toBeChecked();

    // Arrow keys move through the group like any radio group; this save fails.
    await userEvent.keyboard('{ArrowLeft}');
    expect(await main.findByRole('alert')).toHaveTextContent(FAILED);
    expect(patches()).toEqual([{ temperature_unit: 'fahrenheit' }, { temperature_unit: 'celsius' }]);
    expect(within(units).getByRole('radio', { name: '°F' })).toBeChecked();
  });

  it('turns the email copy on, and off again when saving fails', async () => {
    const { main, patches } = await openProfile({
      [`PATCH ${ME}`]: (request, previous) => (previous === 0 ? echo(request) : SERVER_ERROR),
    });
    const email = main.getByRole('switch', { name: 'Also email it to me' });
    expect(email).toHaveAccessibleDescription(expect.stringContaining('sam@example.com'));
    await userEvent.click(email);
    await waitFor(() => expect(screen.getByText('Email copy turned on.')).toBeInTheDocument());
    expect(email).toHaveAttribute('aria-checked', 'true');

    await userEvent.click(email);
    expect(await main.findByRole('alert')).toHaveTextContent(FAILED);
    expect(email).toHaveAttribute('aria-checked', 'true');
    expect(patches()).toEqual([{ daily_message_email: true }, { daily_message_email: false }]);
  });
});

describe("Send today's message now", () => {
  const status = (main: ReturnType<typeof within>) =>
    main
      .getByRole('button', { name: "Send today's message now" })
      .closest('.daily-row')
      ?.querySelector('[role=status]');

  it('says the message is being written, sending the CSRF token', async () => {
    const queued = deferred<Reply>();
    const { main, calls } = await openProfile({ [SEND]: () => queued.promise });
    await userEvent.click(main.getByRole('button', { name: "Send today's message now" }));
    expect(main.getByRole('button', { name: 'Sending...' })).toHaveAttribute('aria-disabled', 'true');
    queued.resolve(reply(202, { status: 'queued', id: 42, delivery_date: '2025-06-02' }));
    expect(await main.findByText(SEND_NOW_QUEUED)).toBeInTheDocument();
    expect(status(main)).toHaveTextContent(SEND_NOW_QUEUED);
    expect(status(main)).toHaveAttribute('aria-live', 'polite');
    const [request] = calls(SEND);
    expect(request?.headers.get('X-CSRFToken')).toBe('config-token');
    expect(calls(SEND)).toHaveLength(1);
  });

  it('links to the message when today’s was already delivered', async () => {
    const { main } = await openProfile({
      [SEND]: reply(200, { status: 'delivered', id: 42, delivery_date: '2025-06-02' }),
    });
    await userEvent.click(main.getByRole('button', { name: "Send today's message now" }));
    expect(await main.findByText(SEND_NOW_DELIVERED)).toBeInTheDocument();
    expect(main.getByRole('link', { name: 'Open it in your chat' })).toHaveAttribute('href', '/chat?dmid=42');
  });

  it('says how many a day are allowed after the last one', async () => {
    const { main } = await openProfile({ [SEND]: reply(429, { error: 'Too many requests', code: 'rate_limited' }) });
    await userEvent.click(main.getByRole('button', { name: "Send today's message now" }));
    expect(await main.findByText(DAILY_MESSAGES.sendNowLimit)).toBeInTheDocument();
  });

  it('can be asked again after a failure', async () => {
    const { main, calls } = await openProfile({
      [SEND]: (_request, previous) =>
        previous === 0 ? SERVER_ERROR : reply(202, { status: 'queued', id: 7, delivery_date: '2025-06-02' }),
    });
    const button = main.getByRole('button', { name: "Send today's message now" });
    await userEvent.click(button);
    expect(await main.findByText(SEND_NOW_FAILED)).toBeInTheDocument();
    await userEvent.click(main.getByRole('button', { name: "Send today's message now" }));
    expect(await main.findByText(SEND_NOW_QUEUED)).toBeInTheDocument();
    expect(main.queryByText(SEND_NOW_FAILED)).toBeNull();
    expect(calls(SEND)).toHaveLength(2);
  });
});
