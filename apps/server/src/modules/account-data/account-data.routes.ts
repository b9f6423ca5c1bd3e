// GET /api/users/me/export/ (the user's data as one JSON file) and POST /api/users/me/delete/
// (the account and everything in it, after the password).
import { Readable } from 'node:stream';
import { ZAccountExport, ZDeleteAccountRequest, ZDeleteAccountResponse } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import { requireUser } from '../../lib/auth.ts';
import type { Clock } from '../../lib/clock.ts';
import { SESSION_COOKIE } from '../accounts/index.ts';
import type { SessionsService } from '../accounts/sessions.service.ts';
import type { UsersService } from '../accounts/users.service.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import type { RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { createAccountDataRepo } from './account-data.repo.ts';
import { type AccountDataService, createAccountDataService } from './account-data.service.ts';

export interface AccountDataRoutesOptions {
  accountData: AccountDataService;
}

const USER = { auth: 'user' } as const;

export default async function accountDataRoutes(fastify: FastifyInstance, { accountData }: AccountDataRoutesOptions) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  // A stream of JSON text: no response schema to pass it through.
  app.get(
    '/api/users/me/export/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Accounts',
          summary: "Download all the user's data",
          description:
            'One JSON file: the account, memories (deleted ones too), both chat channels, daily messages, researches and calendar connections (never their secrets). At most 5 an hour.',
          responses: {
            200: {
              description: 'The export file.',
              schema: ZAccountExport,
              headers: { 'Content-Disposition': 'attachment; filename="daybook-export-….json"' },
            },
          },
          errors: { 429: 'Asked too often this hour.' },
        },
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const { filename, chunks } = await accountData.export(user.id);
      // Written as it is read: a long history never sits in memory whole. A failure half-way ends the
      // response early, so the browser reports a failed download instead of saving half a file.
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(chunks, { objectMode: false }));
    },
  );

  const deleteSchema = { body: ZDeleteAccountRequest, response: { 200: ZDeleteAccountResponse } };
  app.post(
    '/api/users/me/delete/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Accounts',
          summary: 'Delete the account',
          description:
            'After the password: revokes calendar grants, deletes everything the account holds and ends its sessions.',
          responses: { 200: { description: 'Deleted; the session cookie is cleared.' } },
          errors: {
            400: 'The password is wrong.',
            403: 'The account has no password to confirm with.',
            409: 'The last administrator cannot delete their account.',
            429: 'Too many wrong passwords.',
          },
        },
      },
      schema: deleteSchema,
    },
    async (request, reply) => {
      const user = requireUser(request);
      await accountData.deleteAccount(user, request.body.password);
      request.session = null;
      request.user = null;
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { deleted: true } as const;
    },
  );
}

/** The service and its repository from what app.ts has at hand. */
export function accountDataOptions(deps: {
  prisma: PrismaClient;
  calendar: CalendarService;
  sessions: SessionsService;
  users: UsersService;
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
