// Test-only entry point: apps/server/src/server.ts with a clock the daily message e2e test moves.
// POST /__e2e/clock/ {at} sets the time every service reads and runs one schedule tick at once (the
// real schedule, also on, ticks once a minute); GET /__e2e/daily-messages/ lists the claimed rows.
// The product has no such routes; only this file adds them, and only on a loopback address.
import { z } from 'zod';
import type { Clock } from '../../apps/server/src/lib/clock.ts';
import { serve } from '../../apps/server/src/process.ts';

const ZSetClock = z.object({ at: z.iso.datetime({ offset: true }) });

// The clock's offset from real time, so time still passes between two moves (timeouts, jobs' delays).
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

void serve({
  deps: { clock, dailySchedule: true },
  name: 'Daybook (daily e2e)',
  setUp(app, config) {
    if (config.host !== '127.0.0.1') {
      console.error('The daily e2e entry point moves the clock for anyone who asks: it listens on 127.0.0.1 only.');
      process.exit(1);
    }
    app.post('/__e2e/clock/', async (request) => {
      const { at } = ZSetClock.parse(request.body);
      offsetMs = Date.parse(at) - Date.now();
      const claimed = await app.daily.tick();
      return { now: clock.now().toISOString(), claimed };
    });
    app.get('/__e2e/daily-messages/', () =>
      app.db.query<{ id: number; user_id: number; local_date: string; status: string; delivered: boolean }>(
        `SELECT id, user_id, to_char(local_date, 'YYYY-MM-DD') AS local_date, status, delivered_at IS NOT NULL AS delivered
         FROM daily_messages ORDER BY id`,
      ),
    );
  },
});
