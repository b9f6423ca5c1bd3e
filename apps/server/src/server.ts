// Entry point: load config, build the app, listen, and shut down gracefully.
import { buildApp } from './app.ts';
import { restrictNewFiles } from './lib/private-files.ts';
import { closeOnSignals, configOrExit } from './lib/process.ts';

async function main() {
  restrictNewFiles();
  const config = configOrExit();

  const app = await buildApp(config).catch((err: Error) => {
    console.error(`Daybook could not start: ${err.message}`);
    process.exit(1);
  });

  closeOnSignals(app);

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
