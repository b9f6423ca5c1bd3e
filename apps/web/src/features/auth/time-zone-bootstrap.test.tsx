// A new account gets the browser's time zone: after signing up or in, one PATCH when it has none.
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Handler, mockFetch, reply, USER_ME } from '../../test/fetch.ts';
import { anonymous, renderRoutes, signedIn } from '../../test/render.tsx';
import { type AuthState, useAuth } from './auth-context.tsx';
import { adoptBrowserTimeZone, clearAdoptedTimeZones } from './time-zone.ts';

// Web files share their worker's modules (isolate: false): the modules this file imports are loaded
// afresh so they see the mock, and dropped after it so later files get the real ones.
const browserTimeZone = vi.hoisted(() => {
  vi.resetModules();
  return vi.fn(() => 'Europe/Berlin');
});
vi.mock('../../lib/time-zones.ts', async (original) => ({
  ...(await original<typeof import('../../lib/time-zones.ts')>()),
  browserTimeZone,
}));

const GET_ME = 'GET /api/users/me/';
const PATCH_ME = 'PATCH /api/users/me/';
const NO_ZONE = { ...USER_ME, time_zone: null };

afterAll(() => {
  vi.resetModules();
});

beforeEach(() => {
  clearAdoptedTimeZones();
  browserTimeZone.mockClear();
});

function SignIn() {
  const { state, refresh } = useAuth();
  return (
    <>
      <p>{state.status}</p>
      <button type="button" onClick={() => void refresh()}>
        Sign in
      </button>
    </>
  );
}

/** The app as a visitor who then signs in (or up): the session is anonymous, then signed in. */
async function signInWith(routes: Record<string, Handler>) {
  const network = mockFetch(routes);
  const sessions: AuthState[] = [anonymous, signedIn];
  renderRoutes([{ path: '/', element: <SignIn /> }], {
    loadSession: () => Promise.resolve(sessions.shift() ?? signedIn),
  });
  expect(await screen.findByText('anonymous')).toBeInTheDocument();
  await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
  expect(await screen.findByText('authenticated')).toBeInTheDocument();
  return network;
}

describe('time zone from the browser', () => {
  it("gives an account without one this browser's, once, after signing in", async () => {
    const { calls } = await signInWith({
      [GET_ME]: reply(200, NO_ZONE),
      [PATCH_ME]: reply(200, { ...USER_ME, time_zone: 'Europe/Berlin' }),
    });
    await waitFor(() => expect(calls(PATCH_ME).map((c) => c.body)).toEqual([{ time_zone: 'Europe/Berlin' }]));
    expect(calls(GET_ME)).toHaveLength(1);
    // Signing in again in the same page does not ask again.
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(calls(PATCH_ME)).toHaveLength(1);
  });

  it('leaves a chosen time zone alone', async () => {
    const { requests, calls } = mockFetch({ [PATCH_ME]: reply(200, USER_ME) });
    await adoptBrowserTimeZone({ id: USER_ME.id, time_zone: 'Asia/Tokyo' });
    expect(requests).toEqual([]);
    // Nor is the browser asked: its first date format loads the engine's time zone data, which costs.
    expect(browserTimeZone).not.toHaveBeenCalled();
    // The same account without one is given the browser's.
    await adoptBrowserTimeZone({ id: USER_ME.id, time_zone: null });
    expect(calls(PATCH_ME).map((c) => c.body)).toEqual([{ time_zone: 'Europe/Berlin' }]);
  });

  it('ignores a failed save', async () => {
    const { calls } = await signInWith({
      [GET_ME]: reply(200, NO_ZONE),
      [PATCH_ME]: reply(500, { error: 'Internal server error', code: 'internal_error' }),
    });
    await waitFor(() => expect(calls(PATCH_ME)).toHaveLength(1));
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getByText('authenticated')).toBeInTheDocument();
  });

  it('does not ask when the page opens already signed in (the layout reads the account then)', async () => {
    const { requests } = mockFetch({ [GET_ME]: reply(200, NO_ZONE) });
    renderRoutes([{ path: '/', element: <SignIn /> }], { auth: signedIn });
    expect(await screen.findByText('authenticated')).toBeInTheDocument();
    expect(requests.filter((r) => r.path === '/api/users/me/')).toEqual([]);
  });
});
