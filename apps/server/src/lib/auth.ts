import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../modules/accounts/accounts.repo.ts';
import { AppError } from './errors.ts';

/** The signed-in user of a product API request, or a 401 in the API's error shape. */
export function requireUser(request: FastifyRequest): UserRow {
  if (!request.user) throw new AppError('unauthorized', 'Authentication credentials were not provided.');
  return request.user;
}
