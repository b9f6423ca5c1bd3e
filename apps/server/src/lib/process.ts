// What the server and the worker entry points share: reading the settings, and closing the app
// gracefully on SIGTERM or SIGINT.
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError, loadConfig } from '../config.ts';

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

/** On SIGTERM or SIGINT, closes the app (at most 10 s) and exits. */
export function closeOnSignals(app: FastifyInstance) {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal} received, closing`);
    // A stuck close must not keep the process alive forever.
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out, exiting');
      process.exit(1);
    }, 10_000);
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
}
