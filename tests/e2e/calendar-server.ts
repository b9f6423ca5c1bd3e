// Test-only entry point: apps/server/src/server.ts with the calendar providers' endpoints pointed at
// the local fakes. The product reads no endpoints from the environment; only this file does, for e2e.

import type { OAuthEndpoints, OAuthProviderId } from '../../apps/server/src/modules/calendar/calendar.types.ts';
import { serve } from '../../apps/server/src/process.ts';

type Endpoints = Partial<Record<OAuthProviderId, OAuthEndpoints>>;

/** E2E_CALENDAR_ENDPOINTS as JSON, or the process ends saying what is wrong with it. */
function endpointsOrExit(): Endpoints {
  const raw = process.env.E2E_CALENDAR_ENDPOINTS;
  if (!raw) {
    console.error('E2E_CALENDAR_ENDPOINTS is not set: this entry point needs the fake providers’ endpoints.');
    process.exit(1);
  }
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Endpoints;
  } catch (err) {
    console.error(`E2E_CALENDAR_ENDPOINTS is not a JSON object of endpoints: ${(err as Error).message}`);
    process.exit(1);
  }
}

void serve({ deps: { calendar: { endpoints: endpointsOrExit() } }, name: 'Daybook (calendar e2e)' });
