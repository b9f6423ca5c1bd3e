// Admin-only invite management: GET/POST /api/admin/invites/, DELETE /api/admin/invites/{id}/.
import { ZCreateInviteRequest, ZRowId } from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import type { InvitesService } from './invites.service.ts';

const ZId = z.object({ id: z.string() });

/** An id no row could have (not a positive int4) names no invite: 404 like any unknown id. */
function inviteId(request: FastifyRequest): number {
  const parsed = ZRowId.safeParse(ZId.parse(request.params).id);
  if (!parsed.success) throw new AppError('not_found', 'Invite not found');
  return parsed.data;
}

function requireAdmin(request: FastifyRequest) {
  const user = requireUser(request);
  if (!user.isAdmin) throw new AppError('forbidden', 'Only administrators can manage invites.');
  return user;
}

export default async function invitesRoutes(app: FastifyInstance, { invites }: { invites: InvitesService }) {
  app.get('/api/admin/invites/', async (request) => {
    requireAdmin(request);
    const results = await invites.list();
    return { results, count: results.length };
  });

  app.post('/api/admin/invites/', async (request, reply) => {
    const admin = requireAdmin(request);
    const input = ZCreateInviteRequest.parse(request.body ?? {});
    const created = await invites.create({
      maxUses: input.max_uses,
      expiresInDays: input.expires_in_days,
      email: input.email,
      createdById: admin.id,
    });
    return reply.status(201).send(created);
  });

  app.delete('/api/admin/invites/:id/', async (request) => {
    requireAdmin(request);
    return invites.revoke(inviteId(request));
  });
}
