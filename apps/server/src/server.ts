// Entry point: load config, build the app, listen, and shut down gracefully.
import { buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { restrictNewFiles } from './lib/private-files.ts';

async function main() {
  restrictNewFiles();
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }

  const app = await buildApp(config).catch((err: Error) => {
    console.error(`Daybook could not start: ${err.message}`);
    process.exit(1);
  });

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

  try {
    await app.listen({ host: config.host, port: config.port });
    app.log.info(`Daybook is ready at ${config.publicUrl}`);
    // A new installation has no users and no way in: hand the operator the first invite.
    const first = await app.accounts.bootstrapInvite();
    if (first) {
      app.log.warn(
        `No accounts yet. Create the first one with this invite link (one use, valid 7 days): ${first.signup_url}`,
      );
    }
  } catch (err) {
    app.log.error({ err }, 'could not listen');
    await app.close();
    process.exit(1);
  }
}

void main();
