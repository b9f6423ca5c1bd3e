import { Readable } from 'node:stream';
import {
  MEMORY_IMPORT_BYTES_MAX,
  ZMemory,
  ZMemoryCategories,
  ZMemoryDelete,
  ZMemoryExport,
  ZMemoryImport,
  ZMemoryImportResult,
  ZMemoryInput,
  ZMemoryListQuery,
  ZMemoryPage,
  ZMemoryPatch,
  ZRowParams,
} from '@daybook/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import { pageLinks } from '../../lib/pagination.ts';
import { perKeyGate } from '../../lib/per-key-gate.ts';
import { ExportRefused, type MemoriesService } from './memories.service.ts';

/**
 * Searches and an export's batches run at most this many at a time per user; more wait their turn.
 * One user's flood of searches then competes with other users as a couple of requests, not dozens.
 * A plain page needs no turn: it reads 30 rows from an index and the count from memory_counts; nor
 * does a search answered from the ids kept from the same search (30 rows by id).
 */
export const READS_AT_ONCE_PER_USER = 2;

const USER = { auth: 'user' } as const;
/** Ids that are not row ids name no memory: 404, like any other unknown id. */
const ONE_MEMORY = { auth: 'user', notFound: 'Memory not found.' } as const;

export default async function memoriesRoutes(
  fastify: FastifyInstance,
  { memories, publicUrl }: { memories: MemoriesService; publicUrl: string },
) {
  const reads = perKeyGate(READS_AT_ONCE_PER_USER);
  listRoutes(fastify, memories, publicUrl, reads);
  fileRoutes(fastify, memories, reads);
  oneMemoryRoutes(fastify, memories);
}

type Reads = ReturnType<typeof perKeyGate>;

/** The Memories page's list and search, and the categories it filters by. */
function listRoutes(fastify: FastifyInstance, memories: MemoriesService, publicUrl: string, reads: Reads) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // The page is written as JSON text (below), so it has no response schema to pass through.
  app.get(
    '/api/memories/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Memories',
          summary: 'List or search memories',
          description: 'Paged with `limit` and `offset`; `next` and `previous` are full links.',
          responses: { 200: { description: 'One page of memories.', schema: ZMemoryPage } },
          queryNotes: {
            limit: 'A whole number from 1 to 100.',
            offset: 'A whole number, 0 or more.',
            show_deleted: 'true (or 1) lists deleted memories instead of active ones.',
            search: 'Words to look for in keys and data.',
          },
        },
      },
      schema: { querystring: ZMemoryListQuery },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const query = request.query;
      const options = {
        deleted: query.show_deleted,
        search: query.search || undefined,
        limit: query.limit,
        offset: query.offset,
      };
      const { results, count } = await memories.list(user.id, options, (work) => reads(user.id, work));
      const { next, previous } = pageLinks(`${publicUrl}/api/memories/`, query, count, {
        show_deleted: query.show_deleted,
        search: query.search,
      });
      // The rows arrive as JSON text; the page around them is written here (TMemoryPage's shape).
      return reply
        .type('application/json; charset=utf-8')
        .send(
          `{"results":${results},"count":${count},"next":${JSON.stringify(next)},"previous":${JSON.stringify(previous)}}`,
        );
    },
  );

  app.get(
    '/api/memories/categories/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Memories',
          summary: 'The memory types',
          responses: { 200: { description: 'Each type with its label and description.' } },
        },
      },
      schema: { response: { 200: ZMemoryCategories } },
    },
    async () => memories.categories(),
  );
}

/** The whole list as a file, and a file read back in. */
function fileRoutes(fastify: FastifyInstance, memories: MemoriesService, reads: Reads) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/api/memories/export/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Memories',
          summary: 'Export all memories',
          description:
            'A file download (`Content-Disposition: attachment`) that `POST /api/memories/import/` takes back.',
          responses: {
            200: {
              description: 'The export file.',
              schema: ZMemoryExport,
              io: 'input',
              headers: { 'Content-Disposition': 'attachment; filename="daybook-memories-YYYY-MM-DD.json"' },
            },
          },
          errors: {
            429: "Over 10 exports in an hour, or one of the user's exports is still being sent (`Retry-After` says when to try again).",
          },
        },
      },
    },
    async (request, reply) => {
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
    },
  );

  // The user's import slot is claimed before the upload is read, so a refused one is never buffered.
  const claims = new WeakMap<FastifyRequest, { release: () => void; started: boolean }>();
  app.post(
    '/api/memories/import/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Memories',
          summary: 'Import memories',
          description:
            'An export file, or just its `memories`. Memories with a key the user already has are updated. Uploads up to 20 MB; one import at a time per user.',
          responses: { 200: { description: 'What the import did.' } },
          errors: {
            409: 'An import is already running, or this one would go past the most memories an account keeps.',
            413: 'The upload is larger than 20 MB.',
          },
          body: { schema: ZMemoryImport },
        },
      },
      // The service reads the file itself, to say what a Daybook export looks like when it is not one.
      schema: { response: { 200: ZMemoryImportResult } },
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
}

/** One memory: created, read, replaced, changed and deleted. */
function oneMemoryRoutes(fastify: FastifyInstance, memories: MemoriesService) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/memories/',
    {
      config: {
        ...USER,
        docs: {
          tag: 'Memories',
          summary: 'Create a memory',
          responses: { 201: { description: 'The new memory.' } },
          errors: { 409: 'The account already keeps the most memories it may.' },
        },
      },
      schema: { body: ZMemoryInput, response: { 201: ZMemory } },
    },
    async (request, reply) => reply.status(201).send(await memories.create(requireUser(request).id, request.body)),
  );

  app.get(
    '/api/memories/:id/',
    {
      config: {
        ...ONE_MEMORY,
        docs: { tag: 'Memories', summary: 'One memory', responses: { 200: { description: 'The memory.' } } },
      },
      schema: { params: ZRowParams, response: { 200: ZMemory } },
    },
    async (request) => memories.get(requireUser(request).id, request.params.id),
  );

  app.put(
    '/api/memories/:id/',
    {
      config: {
        ...ONE_MEMORY,
        docs: {
          tag: 'Memories',
          summary: 'Replace a memory',
          responses: { 200: { description: 'The memory as saved.' } },
          errors: { 409: 'The memory is deleted; send restore_deleted to restore it.' },
        },
      },
      schema: { params: ZRowParams, body: ZMemoryInput, response: { 200: ZMemory } },
    },
    async (request) => memories.replace(requireUser(request).id, request.params.id, request.body),
  );

  app.patch(
    '/api/memories/:id/',
    {
      config: {
        ...ONE_MEMORY,
        docs: {
          tag: 'Memories',
          summary: 'Change some fields of a memory',
          responses: { 200: { description: 'The memory as saved.' } },
          errors: { 409: 'The memory is deleted; send restore_deleted to restore it.' },
        },
      },
      schema: { params: ZRowParams, body: ZMemoryPatch, response: { 200: ZMemory } },
    },
    async (request) => memories.update(requireUser(request).id, request.params.id, request.body),
  );

  app.delete(
    '/api/memories/:id/',
    {
      config: {
        ...ONE_MEMORY,
        docs: {
          tag: 'Memories',
          summary: 'Delete a memory',
          description: 'Deleted memories stay listed with `show_deleted=true` and can be restored.',
          responses: { 204: { description: 'Deleted.' } },
          body: { required: false, description: 'Optional: why, for the record.' },
        },
      },
      schema: { params: ZRowParams, body: ZMemoryDelete },
    },
    async (request, reply) => {
      await memories.remove(requireUser(request).id, request.params.id, request.body.reason);
      return reply.status(204).send();
    },
  );
}
