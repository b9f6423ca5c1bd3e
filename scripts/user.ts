// npm run user -- promote <email>   (make an administrator)
// npm run user -- demote <email>
// npm run user -- list
import { openCli, runCli } from './lib/cli-context.ts';

const USAGE = 'usage: npm run user -- promote <email> | demote <email> | list';

await runCli(async () => {
  const [command, email] = process.argv.slice(2);
  if (!command || !['promote', 'demote', 'list'].includes(command) || (command !== 'list' && !email)) {
    console.error(USAGE);
    return 2;
  }
  const { db, accounts } = await openCli();
  try {
    if (command === 'list') {
      const users = await accounts.listUsers();
      if (!users.length) console.log('No users yet.');
      for (const u of users) {
        const verified = u.emailAddresses.find((e) => e.email === u.email)?.verified ? 'verified' : 'unverified';
        console.log(`#${u.id}  ${u.email}  ${verified}${u.isAdmin ? '  admin' : ''}${u.isActive ? '' : '  inactive'}`);
      }
      return 0;
    }
    const user = await accounts.findUserByEmail((email ?? '').trim().toLowerCase());
    if (!user) throw new Error(`no user with the email ${email}`);
    await accounts.setAdmin(user.id, command === 'promote');
    console.log(
      command === 'promote' ? `${user.email} is now an administrator.` : `${user.email} is no longer an administrator.`,
    );
  } finally {
    await db.close();
  }
  return 0;
});
