// What the server and the worker entry points share: reading the settings, closing the app
// gracefully on SIGTERM or SIGINT, and serving it.
import type { FastifyInstance } from 'fastify';
import { type AppDeps, buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { restrictNewFiles } from './lib/private-files.ts';

/** The settings, or the process ends with a message naming each bad variable. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

/** How long a shutdown may take before the process exits anyway (Docker allows 15 s, see docker-compose.yml). */
export const SHUTDOWN_LIMIT_MS = 10_000;

/** On SIGTERM or SIGINT, closes the app (at most SHUTDOWN_LIMIT_MS) and exits. Says whether it has begun. */
export function closeOnSignals(app: FastifyInstance): () => boolean {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal} received, closing`);
    // A stuck close must not keep the process alive forever.
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out, exiting');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    timer.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error while closing');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  return () => closing;
}

/**
 * Builds the app, listens, and hands the operator the first invite of a new installation; the
 * process ends if it cannot. `setUp` adds to the app before it listens (test-only entry points).
 */
export async function serve(
  options: { deps?: AppDeps; name?: string; setUp?: (app: FastifyInstance, config: Config) => void } = {},
): Promise<FastifyInstance> {
  restrictNewFiles();
  const config = configOrExit();
  const app = await buildApp(config, options.deps).catch((err: Error) => {
    console.error(`Daybook could not start: ${err.message}`);
    process.exit(1);
  });
  options.setUp?.(app, config);
  const closing = closeOnSignals(app);
  try {
    // A new installation has no users and no way in: the operator gets the first invite, made
    // before the server answers so that the link works as soon as it is printed.
    const first = await app.accounts.bootstrapInvite();
    await app.listen({ host: config.host, port: config.port });
    const { database, realtime, jobs } = app.setup;
    app.log.info(
      { database, realtime, jobs },
      `${options.name ?? 'Daybook'} is ready at ${config.publicUrl} (database: ${database}; realtime bus: ${realtime}; background jobs: ${jobs})`,
    );
    if (first) {
      app.log.warn(
        `No accounts yet. Create the first one with this invite link (one use, valid 7 days): ${first.signup_url}`,
      );
    }
  } catch (err) {
    // A signal during start-up closes the app under these steps: their failure is the shutdown's.
    if (closing()) return app;
    app.log.error({ err }, 'could not start');
    await app.close();
    process.exit(1);
  }
  return app;
}
