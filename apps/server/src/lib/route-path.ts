import type { FastifyRequest } from 'fastify';

/**
 * The path a request was routed by. The router decodes the URL, so `/%5Fallauth/...` reaches the
 * `/_allauth/...` handlers: security checks must judge the matched route, never the raw URL.
 * Requests that matched no route fall back to the decoded path.
 */
export function routedPath(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  if (route) return route;
  const raw = request.url.split('?')[0] ?? '/';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
