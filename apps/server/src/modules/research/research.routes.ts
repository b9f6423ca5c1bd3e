import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import type { ResearchService } from './research.service.ts';

const ZParams = z.object({ id: z.string() });
const NOT_FOUND = 'Research report not found.';

export default async function researchRoutes(app: FastifyInstance, { research }: { research: ResearchService }) {
  app.get('/api/web-research/:id/', async (request) => {
    const user = requireUser(request);
    const { id } = ZParams.parse(request.params);
    // Any id that is not a row id, and another user's, is simply not found.
    const n = /^\d{1,9}$/.test(id) ? Number(id) : 0;
    const found = n > 0 ? await research.get(user.id, n) : null;
    if (!found) throw new AppError('not_found', NOT_FOUND);
    return found;
  });
}
