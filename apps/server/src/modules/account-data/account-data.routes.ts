// GET /api/users/me/export/ (the user's data as one JSON file) and POST /api/users/me/delete/
// (the account and everything in it, after the password).
import { Readable } from 'node:stream';
import { ZDeleteAccountRequest } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { requireUser } from '../../lib/auth.ts';
import type { Clock } from '../../lib/clock.ts';
import { SESSION_COOKIE } from '../../plugins/session.ts';
import type { RateLimiter } from '../accounts/rate-limit.ts';
import type { SessionsService } from '../accounts/sessions.service.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import { createAccountDataRepo } from './account-data.repo.ts';
import { type AccountDataService, createAccountDataService } from './account-data.service.ts';

export interface AccountDataRoutesOptions {
  accountData: AccountDataService;
}

export default async function accountDataRoutes(app: FastifyInstance, { accountData }: AccountDataRoutesOptions) {
  app.get('/api/users/me/export/', async (request, reply) => {
    const user = requireUser(request);
    const { filename, chunks } = await accountData.export(user.id);
    // Written as it is read: a long history never sits in memory whole. A failure half-way ends the
    // response early, so the browser reports a failed download instead of saving half a file.
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(chunks, { objectMode: false }));
  });

  app.post('/api/users/me/delete/', async (request, reply) => {
    const user = requireUser(request);
    const { password } = ZDeleteAccountRequest.parse(request.body ?? {});
    await accountData.deleteAccount(user, password);
    request.session = null;
    request.user = null;
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { deleted: true };
  });
}

/** The service and its repository from what app.ts has at hand. */
export function accountDataOptions(deps: {
  prisma: PrismaClient;
  calendar: CalendarService;
  sessions: SessionsService;
  limiter: RateLimiter;
  clock: Clock;
  log: FastifyInstance['log'];
}): AccountDataRoutesOptions {
  return {
    accountData: createAccountDataService({
      ...deps,
      repo: createAccountDataRepo(deps.prisma),
      log: deps.log.child({ module: 'account-data' }),
    }),
  };
}
