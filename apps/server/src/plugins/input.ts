// PostgreSQL text cannot hold NUL characters: a "\u0000" anywhere in a request would fail deep in
// the database and answer 500. They carry no meaning in text, so they are dropped on the way in.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const NUL = '\u0000';

/** `value` (parsed JSON or form fields) with NUL characters removed from every string in it. */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes(NUL) ? value.replaceAll(NUL, '') : value) as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  // A Buffer or other raw body is left as it is.
  if (value && typeof value === 'object' && !ArrayBuffer.isView(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[withoutNul(key)] = withoutNul(item);
    return out as T;
  }
  return value;
}

export default fp(async function inputPlugin(app: FastifyInstance) {
  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined && request.body !== null) request.body = withoutNul(request.body);
    if (request.query && typeof request.query === 'object') request.query = withoutNul(request.query);
  });
});
