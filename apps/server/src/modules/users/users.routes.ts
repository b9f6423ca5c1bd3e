import { ZUpdateUserMeRequest } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../../lib/auth.ts';
import type { AccountsService } from '../accounts/accounts.service.ts';

export interface UsersRoutesOptions {
  accounts: AccountsService;
  /** Tells the rest of the server (open chat sockets) about changed settings. */
  onSettingsChanged?: (userId: number, settings: { learnFromChats: boolean }) => void;
}

export default async function usersRoutes(app: FastifyInstance, { accounts, onSettingsChanged }: UsersRoutesOptions) {
  app.get('/api/users/me/', async (request) => accounts.userMe(requireUser(request)));

  app.patch('/api/users/me/', async (request) => {
    const user = requireUser(request);
    const me = await accounts.updateSettings(user, ZUpdateUserMeRequest.parse(request.body ?? {}));
    onSettingsChanged?.(user.id, { learnFromChats: me.learn_from_chats });
    return me;
  });
}
