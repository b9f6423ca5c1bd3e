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
  const { db } = await openCli();
  try {
    if (command === 'list') {
      const users = await db.prisma.user.findMany({ orderBy: { id: 'asc' }, include: { emailAddresses: true } });
      if (!users.length) console.log('No users yet.');
      for (const u of users) {
        const verified = u.emailAddresses.find((e) => e.email === u.email)?.verified ? 'verified' : 'unverified';
        console.log(`#${u.id}  ${u.email}  ${verified}${u.isAdmin ? '  admin' : ''}${u.isActive ? '' : '  inactive'}`);
      }
      return 0;
    }
    const user = await db.prisma.user.findUnique({ where: { email: (email ?? '').trim().toLowerCase() } });
    if (!user) throw new Error(`no user with the email ${email}`);
    await db.prisma.user.update({ where: { id: user.id }, data: { isAdmin: command === 'promote' } });
    console.log(
      command === 'promote' ? `${user.email} is now an administrator.` : `${user.email} is no longer an administrator.`,
    );
  } finally {
    await db.close();
  }
  return 0;
});
