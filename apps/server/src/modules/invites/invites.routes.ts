// Admin-only invite management: GET/POST /api/admin/invites/, DELETE /api/admin/invites/{id}/.
import { ZCreateInviteRequest, ZCreateInviteResponse, ZInvite, ZInviteList, ZRowParams } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import type { InvitesService } from './invites.service.ts';

const ADMIN = { auth: 'admin', adminOnly: 'Only administrators can manage invites.' } as const;
/** An id no row could have names no invite: 404 like any unknown id. */
const ONE_INVITE = { ...ADMIN, notFound: 'Invite not found' } as const;

export default async function invitesRoutes(fastify: FastifyInstance, { invites }: { invites: InvitesService }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/admin/invites/',
    {
      config: {
        ...ADMIN,
        docs: {
          tag: 'Invites',
          summary: 'List invites',
          responses: { 200: { description: 'Every invite, newest first.' } },
        },
      },
      schema: { response: { 200: ZInviteList } },
    },
    async () => {
      const results = await invites.list();
      return { results, count: results.length };
    },
  );

  app.post(
    '/api/admin/invites/',
    {
      config: {
        ...ADMIN,
        docs: {
          tag: 'Invites',
          summary: 'Create an invite',
          description: 'The token and the signup link are in this answer only.',
          responses: { 201: { description: 'The new invite.' } },
          body: { required: false },
        },
      },
      schema: { body: ZCreateInviteRequest, response: { 201: ZCreateInviteResponse } },
    },
    async (request, reply) => {
      const admin = requireUser(request);
      const input = request.body;
      const created = await invites.create({
        maxUses: input.max_uses,
        expiresInDays: input.expires_in_days,
        email: input.email,
        createdById: admin.id,
      });
      return reply.status(201).send(created);
    },
  );

  app.delete(
    '/api/admin/invites/:id/',
    {
      config: {
        ...ONE_INVITE,
        docs: {
          tag: 'Invites',
          summary: 'Revoke an invite',
          description: 'Revoking twice is fine: the answer is the revoked invite.',
          responses: { 200: { description: 'The revoked invite.' } },
        },
      },
      schema: { params: ZRowParams, response: { 200: ZInvite } },
    },
    async (request) => invites.revoke(request.params.id),
  );
}
