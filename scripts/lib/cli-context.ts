// What the admin commands share: configuration, a migrated database, and the services they call.
import { loadConfig } from '../../apps/server/src/config.ts';
import { systemClock } from '../../apps/server/src/lib/clock.ts';
import { restrictNewFiles } from '../../apps/server/src/lib/private-files.ts';

export async function openCli() {
  // The embedded database and anything else written to DATA_DIR stay private to this user.
  restrictNewFiles();
  const config = loadConfig();
  // Imported here: the database module needs the generated Prisma client.
  const { openDatabase } = await import('../../apps/server/src/db/database.ts');
  const { createInvitesRepo } = await import('../../apps/server/src/modules/invites/invites.repo.ts');
  const { createInvitesService } = await import('../../apps/server/src/modules/invites/invites.service.ts');
  const { createAccountsRepo } = await import('../../apps/server/src/modules/accounts/accounts.repo.ts');
  const db = await openDatabase(config.db);
  await db.migrate();
  const invites = createInvitesService({
    repo: createInvitesRepo(db.prisma),
    clock: systemClock,
    signupPage: config.frontendUrls.signup,
  });
  return { config, db, invites, accounts: createAccountsRepo(db.prisma) };
}

/** Runs a command, printing errors without a stack trace, and exits with its status. */
export async function runCli(main: () => Promise<number | undefined>) {
  try {
    process.exitCode = (await main()) ?? 0;
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
  process.exit();
}
