// Administrators only: GET /api/admin/users/, PATCH /api/admin/users/{id}/, POST /api/admin/invites/send/,
// POST /api/admin/model-check/, GET /api/admin/usage/.
import {
  type TModelCheck,
  type TModelUsage,
  ZAdminUser,
  ZAdminUserListQuery,
  ZAdminUserPage,
  ZModelCheck,
  ZModelUsage,
  ZModelUsageQuery,
  ZRowParams,
  ZSendInviteRequest,
  ZSendInviteResponse,
  ZUpdateAdminUserRequest,
} from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import { pageLinks } from '../../lib/pagination.ts';
import { ADMIN_ERRORS, type AdminService } from './admin.service.ts';

const adminOf = (what: string) => ({ auth: 'admin', adminOnly: `Only administrators can manage ${what}.` }) as const;
const MODEL = adminOf('the model settings');
const USERS = adminOf('users');
/** An id no row could have names no user: 404 like any unknown id. */
const ONE_USER = { ...USERS, notFound: ADMIN_ERRORS.userNotFound } as const;
const INVITES = adminOf('invites');

export default async function adminRoutes(
  fastify: FastifyInstance,
  {
    admin,
    publicUrl,
    checkModel,
    modelUsage,
  }: {
    admin: AdminService;
    publicUrl: string;
    checkModel: () => Promise<TModelCheck>;
    /** The model module's report of tokens spent (model.usage.ts). */
    modelUsage: (days: number) => Promise<TModelUsage>;
  },
) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  // A check makes model calls for seconds: one at a time, and a second request shares the first's answer.
  let checking: Promise<TModelCheck> | null = null;
  app.post(
    '/api/admin/model-check/',
    {
      config: {
        ...MODEL,
        docs: {
          tag: 'Model',
          summary: 'Check the configured model',
          description:
            'One probe of each capability Daybook uses (streaming, token usage, reasoning, tools, forced tool calls, JSON schema output, embeddings) against the configured endpoint, what Daybook will use, and what the operator could change. Makes a few model calls; one check runs at a time (a second request gets the same answer). The same report as `npm run check-model`.',
          responses: { 200: { description: 'The check.' } },
        },
      },
      schema: { response: { 200: ZModelCheck } },
    },
    async () => {
      checking ??= checkModel().finally(() => {
        checking = null;
      });
      return checking;
    },
  );

  app.get(
    '/api/admin/usage/',
    {
      config: {
        ...MODEL,
        docs: {
          tag: 'Model',
          summary: 'What the model spent',
          description:
            'Prompt, cached and completion tokens as the model endpoint reported them, over the last `days` days (UTC, today included; at most 30): in all, by purpose (chat, learning, research, daily), by day, and the 10 users who spent most. Calls whose endpoint reported no usage are not in it.',
          responses: { 200: { description: 'The report.' } },
        },
      },
      schema: { querystring: ZModelUsageQuery, response: { 200: ZModelUsage } },
    },
    async (request) => modelUsage(request.query.days),
  );

  app.get(
    '/api/admin/users/',
    {
      config: {
        ...USERS,
        docs: {
          tag: 'Users',
          summary: 'List accounts',
          description: 'Newest first, paged; `search` matches the email address.',
          responses: { 200: { description: 'One page of accounts.' } },
        },
      },
      schema: { querystring: ZAdminUserListQuery, response: { 200: ZAdminUserPage } },
    },
    async (request) => {
      const query = request.query;
      const { results, count } = await admin.listUsers(query);
      return {
        results,
        count,
        ...pageLinks(`${publicUrl}/api/admin/users/`, query, count, { search: query.search }),
      };
    },
  );

  app.patch(
    '/api/admin/users/:id/',
    {
      config: {
        ...ONE_USER,
        docs: {
          tag: 'Users',
          summary: 'Deactivate, reactivate, or make or remove an administrator',
          description:
            'Deactivating signs the account out everywhere at once. Nobody can deactivate or demote themselves, and one active administrator always remains (400).',
          responses: { 200: { description: 'The account as it is now.' } },
        },
      },
      schema: { params: ZRowParams, body: ZUpdateAdminUserRequest, response: { 200: ZAdminUser } },
    },
    async (request) => admin.updateUser(requireUser(request), request.params.id, request.body),
  );

  app.post(
    '/api/admin/invites/send/',
    {
      config: {
        ...INVITES,
        docs: {
          tag: 'Invites',
          summary: 'Create an invite and email it',
          description:
            'The invite is bound to the address it is mailed to. Limited per administrator and per address (429 beyond).',
          responses: { 201: { description: 'The new invite, and where it was sent.' } },
        },
      },
      schema: { body: ZSendInviteRequest, response: { 201: ZSendInviteResponse } },
    },
    async (request, reply) => {
      const sent = await admin.sendInvite(requireUser(request), request.body);
      return reply.status(201).send(sent);
    },
  );
}
