// npm run invite -- create [--uses N] [--expires 7d] [--email someone@example.com]
// npm run invite -- list
// npm run invite -- revoke <id>
import { parseArgs } from 'node:util';
import { openCli, runCli } from './lib/cli-context.ts';

const USAGE = `usage:
  npm run invite -- create [--uses N] [--expires 7d] [--email someone@example.com]
  npm run invite -- list
  npm run invite -- revoke <id>`;

function parseDays(value: string | undefined): number | null {
  if (value === undefined) return null;
  const match = /^(\d+)d?$/.exec(value.trim());
  if (!match || Number(match[1]) < 1) throw new Error(`--expires takes a number of days such as 7d (got "${value}")`);
  return Number(match[1]);
}

await runCli(async () => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { uses: { type: 'string' }, expires: { type: 'string' }, email: { type: 'string' } },
  });
  const [command, arg] = positionals;
  if (!command || !['create', 'list', 'revoke'].includes(command)) {
    console.error(USAGE);
    return 2;
  }
  const uses = values.uses === undefined ? 1 : Number(values.uses);
  if (!Number.isInteger(uses) || uses < 1)
    throw new Error(`--uses takes a whole number of at least 1 (got "${values.uses}")`);
  if (values.email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email))
    throw new Error(`--email is not an email address (got "${values.email}")`);
  const expiresInDays = parseDays(values.expires);

  const { db, invites } = await openCli();
  try {
    if (command === 'create') {
      const { invite, signup_url } = await invites.create({
        maxUses: uses,
        expiresInDays,
        email: values.email ?? null,
      });
      console.log(
        `Invite #${invite.id} created: ${uses} use${uses === 1 ? '' : 's'}${invite.expires_at ? `, expires ${invite.expires_at}` : ', no expiry'}${invite.email ? `, only for ${invite.email}` : ''}.`,
      );
      console.log(`Signup link (shown once): ${signup_url}`);
    } else if (command === 'list') {
      const list = await invites.list();
      if (!list.length) console.log('No invites yet. Create one with: npm run invite -- create');
      for (const i of list) {
        const used = i.used_by.map((u) => u.email).join(', ');
        console.log(
          `#${i.id}  ${i.status.padEnd(9)}  uses ${i.uses}/${i.max_uses ?? '∞'}  expires ${i.expires_at ?? 'never'}  ${i.email ?? 'any email'}${used ? `  used by ${used}` : ''}`,
        );
      }
    } else {
      const id = Number(arg);
      if (!Number.isInteger(id) || id < 1) throw new Error('revoke takes an invite id (see: npm run invite -- list)');
      const revoked = await invites.revoke(id);
      console.log(`Invite #${revoked.id} is revoked.`);
    }
  } finally {
    await db.close();
  }
  return 0;
});
