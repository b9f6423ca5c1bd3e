// Administrators only: GET /api/admin/users/, PATCH /api/admin/users/{id}/, POST /api/admin/invites/send/,
// POST /api/admin/model-check/.
import {
  type TModelCheck,
  ZAdminUserListQuery,
  ZRowId,
  ZSendInviteRequest,
  ZUpdateAdminUserRequest,
} from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import { ADMIN_ERRORS, type AdminService } from './admin.service.ts';

const ZId = z.object({ id: z.string() });

/** An id no row could have names no user: 404 like any unknown id. */
function userId(request: FastifyRequest): number {
  const parsed = ZRowId.safeParse(ZId.parse(request.params).id);
  if (!parsed.success) throw new AppError('not_found', ADMIN_ERRORS.userNotFound);
  return parsed.data;
}

function requireAdmin(request: FastifyRequest, what: string) {
  const user = requireUser(request);
  if (!user.isAdmin) throw new AppError('forbidden', `Only administrators can manage ${what}.`);
  return user;
}

export default async function adminRoutes(
  app: FastifyInstance,
  { admin, publicUrl, checkModel }: { admin: AdminService; publicUrl: string; checkModel: () => Promise<TModelCheck> },
) {
  // A check makes model calls for seconds: one at a time, and a second request shares the first's answer.
  let checking: Promise<TModelCheck> | null = null;
  app.post('/api/admin/model-check/', async (request) => {
    requireAdmin(request, 'the model settings');
    checking ??= checkModel().finally(() => {
      checking = null;
    });
    return checking;
  });

  app.get('/api/admin/users/', async (request) => {
    requireAdmin(request, 'users');
    const query = ZAdminUserListQuery.parse(request.query ?? {});
    const { results, count } = await admin.listUsers(query);
    const pageUrl = (offset: number) => {
      const params = new URLSearchParams({ limit: String(query.limit), offset: String(offset) });
      if (query.search) params.set('search', query.search);
      return `${publicUrl}/api/admin/users/?${params}`;
    };
    return {
      results,
      count,
      next: query.offset + query.limit < count ? pageUrl(query.offset + query.limit) : null,
      previous: query.offset > 0 ? pageUrl(Math.max(0, query.offset - query.limit)) : null,
    };
  });

  app.patch('/api/admin/users/:id/', async (request) => {
    const actor = requireAdmin(request, 'users');
    const id = userId(request);
    return admin.updateUser(actor, id, ZUpdateAdminUserRequest.parse(request.body ?? {}));
  });

  app.post('/api/admin/invites/send/', async (request, reply) => {
    const actor = requireAdmin(request, 'invites');
    const sent = await admin.sendInvite(actor, ZSendInviteRequest.parse(request.body ?? {}));
    return reply.status(201).send(sent);
  });
}
