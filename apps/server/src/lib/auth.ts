import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.ts';

/** The user the session plugin (modules/accounts) put on the request. */
export type SignedInUser = NonNullable<FastifyRequest['user']>;

/** The signed-in user of a product API request, or a 401 in the API's error shape. */
export function requireUser(request: FastifyRequest): SignedInUser {
  if (!request.user) throw new AppError('unauthorized', 'Authentication credentials were not provided.');
  return request.user;
}
