import { ZUpdateUserMeRequest } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../../lib/auth.ts';
import type { AccountsService } from '../accounts/accounts.service.ts';

export default async function usersRoutes(app: FastifyInstance, { accounts }: { accounts: AccountsService }) {
  app.get('/api/users/me/', async (request) => accounts.userMe(requireUser(request)));

  app.patch('/api/users/me/', async (request) => {
    const user = requireUser(request);
    return accounts.updateSettings(user, ZUpdateUserMeRequest.parse(request.body ?? {}));
  });
}
