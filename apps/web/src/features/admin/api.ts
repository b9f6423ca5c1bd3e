// The admin area's calls: users (/api/admin/users/...) and invites (/api/admin/invites/...). Every
// one answers 403 to a signed-in user who is not an administrator.
import {
  ADMIN_USERS_PAGE_SIZE,
  type TCreateInviteRequest,
  type TSendInviteRequest,
  type TUpdateAdminUserRequest,
  ZAdminUser,
  ZAdminUserPage,
  ZCreateInviteResponse,
  ZInvite,
  ZInviteList,
  ZModelCheck,
  ZModelUsage,
  ZSendInviteResponse,
} from '@daybook/contracts';
import { ApiError, apiRequest } from '../../lib/api.ts';

export function listUsers({ page, search }: { page: number; search: string }, signal?: AbortSignal) {
  const params = new URLSearchParams({
    limit: String(ADMIN_USERS_PAGE_SIZE),
    offset: String((page - 1) * ADMIN_USERS_PAGE_SIZE),
  });
  if (search) params.set('search', search);
  return apiRequest(`/api/admin/users/?${params}`, ZAdminUserPage, { signal });
}

export const updateUser = (id: number, body: TUpdateAdminUserRequest) =>
  apiRequest(`/api/admin/users/${id}/`, ZAdminUser, { method: 'PATCH', body });

export const listInvites = (signal?: AbortSignal) => apiRequest('/api/admin/invites/', ZInviteList, { signal });

export const createInvite = (body: TCreateInviteRequest) =>
  apiRequest('/api/admin/invites/', ZCreateInviteResponse, { method: 'POST', body });

/** Makes an invite bound to `body.email` and mails its link there. */
export const sendInvite = (body: TSendInviteRequest) =>
  apiRequest('/api/admin/invites/send/', ZSendInviteResponse, { method: 'POST', body });

export const revokeInvite = (id: number) => apiRequest(`/api/admin/invites/${id}/`, ZInvite, { method: 'DELETE' });

export const isForbidden = (err: unknown) => err instanceof ApiError && err.status === 403;

/** Probes the configured model (a few model calls; up to minutes on slow hardware). */
export const checkModel = () => apiRequest('/api/admin/model-check/', ZModelCheck, { method: 'POST', body: {} });

/** What the model spent over the last `days` days (tokens as its endpoint reported them). */
export const modelUsage = (days: number, signal?: AbortSignal) =>
  apiRequest(`/api/admin/usage/?days=${days}`, ZModelUsage, { signal });
