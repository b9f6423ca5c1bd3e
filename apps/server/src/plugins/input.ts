// Request bodies as the handlers can safely take them.
// - JSON nested deeper than any of our payloads is refused with 400: walking it (the NUL filter
//   below, zod, Prisma) would otherwise overflow the stack and answer 500.
// - PostgreSQL text cannot hold NUL characters: a "\u0000" anywhere in a request would fail deep in
//   the database and answer 500. They carry no meaning in text, so they are dropped on the way in.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/errors.ts';
import { withoutNul } from '../lib/text.ts';

/** Far deeper than any request Daybook accepts (memory imports are the deepest, at 3 levels). */
export const MAX_JSON_DEPTH = 32;
export const TOO_DEEP_MESSAGE = 'The request body is nested too deeply.';

/** True when `value` nests objects or arrays more than `max` levels deep. Iterative: no recursion. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (!item || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) if (child && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

export default fp(async function inputPlugin(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body as string, (err, value) => {
      if (err) return done(err, undefined);
      if (nestedDeeperThan(value, MAX_JSON_DEPTH))
        return done(new AppError('bad_request', TOO_DEEP_MESSAGE), undefined);
      done(null, value);
    });
  });

  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined && request.body !== null) request.body = withoutNul(request.body);
    if (request.query && typeof request.query === 'object') request.query = withoutNul(request.query);
  });
});
