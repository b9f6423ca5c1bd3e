import { Readable } from 'node:stream';
import {
  MEMORY_IMPORT_BYTES_MAX,
  ZMemoryDelete,
  ZMemoryInput,
  ZMemoryListQuery,
  ZMemoryPatch,
} from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import { perKeyGate } from './memories.gate.ts';
import { ExportRefused, type MemoriesService } from './memories.service.ts';

const ZId = z.object({ id: z.string() });

/**
 * Searches and an export's batches run at most this many at a time per user; more wait their turn.
 * One user's flood of searches then competes with other users as a couple of requests, not dozens.
 * A plain page needs no turn: it reads 30 rows from an index and the count from memory_counts; nor
 * does a search answered from the ids kept from the same search (30 rows by id).
 */
export const READS_AT_ONCE_PER_USER = 2;

/** Ids that are not positive integers name no memory: 404, like any other unknown id. */
function memoryId(request: FastifyRequest): number {
  const { id } = ZId.parse(request.params);
  const n = /^\d{1,9}$/.test(id) ? Number(id) : 0;
  if (n < 1) throw new AppError('not_found', 'Memory not found.');
  return n;
}

export default async function memoriesRoutes(
  app: FastifyInstance,
  { memories, publicUrl }: { memories: MemoriesService; publicUrl: string },
) {
  const reads = perKeyGate(READS_AT_ONCE_PER_USER);

  app.get('/api/memories/', async (request, reply) => {
    const user = requireUser(request);
    const query = ZMemoryListQuery.parse(request.query);
    const options = {
      deleted: query.show_deleted,
      search: query.search || undefined,
      limit: query.limit,
      offset: query.offset,
    };
    const { results, count } = await memories.list(user.id, options, (work) => reads(user.id, work));
    const pageUrl = (offset: number) => {
      const params = new URLSearchParams({ limit: String(query.limit), offset: String(offset) });
      if (query.show_deleted) params.set('show_deleted', 'true');
      if (query.search) params.set('search', query.search);
      return `${publicUrl}/api/memories/?${params}`;
    };
    const next = query.offset + query.limit < count ? pageUrl(query.offset + query.limit) : null;
    const previous = query.offset > 0 ? pageUrl(Math.max(0, query.offset - query.limit)) : null;
    // The rows arrive as JSON text; the page around them is written here (TMemoryPage's shape).
    return reply
      .type('application/json; charset=utf-8')
      .send(
        `{"results":${results},"count":${count},"next":${JSON.stringify(next)},"previous":${JSON.stringify(previous)}}`,
      );
  });

  app.get('/api/memories/categories/', async (request) => {
    requireUser(request);
    return memories.categories();
  });

  app.get('/api/memories/export/', async (request, reply) => {
    const user = requireUser(request);
    let file: Awaited<ReturnType<MemoriesService['exportAll']>>;
    try {
      file = await memories.exportAll(user.id, (work) => reads(user.id, work));
    } catch (err) {
      if (err instanceof ExportRefused) reply.header('retry-after', String(err.retryAfterSec));
      throw err;
    }
    // A download given up half-way frees the user's export slot.
    reply.raw.once('close', file.done);
    // Written as it is read: a failure half-way ends the response early, so the browser reports a
    // failed download instead of saving half a file.
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="daybook-memories-${file.exportedAt.slice(0, 10)}.json"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(file.chunks, { objectMode: false }));
  });

  // The user's import slot is claimed before the upload is read, so a refused one is never buffered.
  const claims = new WeakMap<FastifyRequest, { release: () => void; started: boolean }>();
  app.post(
    '/api/memories/import/',
    {
      bodyLimit: MEMORY_IMPORT_BYTES_MAX,
      preParsing: async (request, reply, payload) => {
        if (!request.user) return payload;
        const claim = { release: memories.claimImport(request.user.id), started: false };
        claims.set(request, claim);
        // An upload that never reaches the handler (cut off, too large, refused) frees the slot as it closes.
        reply.raw.once('close', () => {
          if (!claim.started) claim.release();
        });
        return payload;
      },
    },
    async (request) => {
      const user = requireUser(request);
      const claim = claims.get(request);
      if (claim) claim.started = true;
      try {
        return await memories.importAll(user.id, request.body ?? {});
      } finally {
        claim?.release();
      }
    },
  );

  app.post('/api/memories/', async (request, reply) => {
    const user = requireUser(request);
    return reply.status(201).send(await memories.create(user.id, ZMemoryInput.parse(request.body ?? {})));
  });

  app.get('/api/memories/:id/', async (request) => memories.get(requireUser(request).id, memoryId(request)));

  app.put('/api/memories/:id/', async (request) => {
    const user = requireUser(request);
    const id = memoryId(request);
    return memories.replace(user.id, id, ZMemoryInput.parse(request.body ?? {}));
  });

  app.patch('/api/memories/:id/', async (request) => {
    const user = requireUser(request);
    const id = memoryId(request);
    return memories.update(user.id, id, ZMemoryPatch.parse(request.body ?? {}));
  });

  app.delete('/api/memories/:id/', async (request, reply) => {
    const user = requireUser(request);
    const id = memoryId(request);
    const { reason } = ZMemoryDelete.parse(request.body ?? {});
    await memories.remove(user.id, id, reason);
    return reply.status(204).send();
  });
}
