// `npm run worker`: runs the background jobs only. It builds the same app with the workers on and
// the web app off, and never listens; web processes beside it run with RUN_WORKERS=false, all on one
// PostgreSQL. The embedded database belongs to one process, so there `npm start` runs the jobs itself.
import { setPriority } from 'node:os';
import { buildApp } from './app.ts';
import { DatabaseInUseError } from './db/database.ts';
import { restrictNewFiles } from './lib/private-files.ts';
import { serveMetrics } from './modules/metrics/metrics.server.ts';
import { closeOnSignals, configOrExit } from './process.ts';

async function main() {
  restrictNewFiles();
  // Background work yields the CPU to web processes on the same machine: the daily fan-out at 07:00
  // raised the chat's p99 1.6x at normal priority, under 1.5x at 10 (npm run bench).
  try {
    setPriority(0, 10);
  } catch {
    // Not allowed here (some containers): run at normal priority.
  }
  const settings = configOrExit();
  // A worker runs jobs whatever RUN_WORKERS says; it serves nothing.
  const config = { ...settings, jobs: { runWorkers: true }, web: { ...settings.web, serve: false } };

  const app = await buildApp(config).catch((err: Error) => {
    const hint =
      err instanceof DatabaseInUseError
        ? '\nOn the embedded database `npm start` runs the background jobs itself; a separate worker needs DATABASE_URL (PostgreSQL).'
        : '';
    console.error(`Daybook worker could not start: ${err.message}${hint}`);
    process.exit(1);
  });

  closeOnSignals(app);
  let served: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  app.addHook('onClose', async () => served?.close());

  try {
    await app.ready();
    // The web app carries on without jobs; a worker without them has nothing to do.
    if (app.jobs.state !== 'started') throw new Error('background jobs could not start (see the error above)');
    if (app.metrics && config.metrics) {
      served = await serveMetrics(app.metrics, {
        host: config.host,
        port: config.metrics.workerPort,
        token: config.metrics.token,
      });
      app.log.info(`worker metrics at ${served.url}`);
    }
    // The message stays as it is (scripts wait for it); what the worker runs on is in its fields.
    app.log.info({ database: app.setup.database, realtime: app.setup.realtime }, 'Daybook worker is running');
  } catch (err) {
    app.log.error({ err }, 'could not start the worker');
    await app.close();
    process.exit(1);
  }
}

void main();
