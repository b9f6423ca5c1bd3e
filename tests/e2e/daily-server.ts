// Test-only entry point: apps/server/src/server.ts with a clock the daily message e2e test moves.
// POST /__e2e/clock/ {at} sets the time every service reads and runs one schedule tick at once (the
// real schedule, also on, ticks once a minute); GET /__e2e/daily-messages/ lists the claimed rows.
// The product has no such routes; only this file adds them, and only on a loopback address.
import { z } from 'zod';
import { buildApp } from '../../apps/server/src/app.ts';
import type { Clock } from '../../apps/server/src/lib/clock.ts';
import { restrictNewFiles } from '../../apps/server/src/lib/private-files.ts';
import { closeOnSignals, configOrExit } from '../../apps/server/src/lib/process.ts';

const ZSetClock = z.object({ at: z.iso.datetime({ offset: true }) });

async function main() {
  restrictNewFiles();
  const config = configOrExit();
  if (config.host !== '127.0.0.1') {
    console.error('The daily e2e entry point moves the clock for anyone who asks: it listens on 127.0.0.1 only.');
    process.exit(1);
  }

  // Real time plus an offset, so time still passes between two moves (timeouts, jobs' delays).
  let offsetMs = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

  const app = await buildApp(config, { clock, dailySchedule: true }).catch((err: Error) => {
    console.error(`Daybook could not start: ${err.message}`);
    process.exit(1);
  });

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

  closeOnSignals(app);

  try {
    await app.listen({ host: config.host, port: config.port });
    app.log.info(`Daybook (daily e2e) is ready at ${config.publicUrl}`);
    const first = await app.accounts.bootstrapInvite();
    if (first) app.log.warn(`No accounts yet. First invite link: ${first.signup_url}`);
  } catch (err) {
    app.log.error({ err }, 'could not listen');
    await app.close();
    process.exit(1);
  }
}

void main();
