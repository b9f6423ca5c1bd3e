// Serves the built web app: hashed assets cached for a year, index.html for every client route,
// and a JSON 404 for unknown API paths so API clients never receive the HTML page.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../lib/errors.ts';
import { toApiError } from './errors.ts';

export interface WebAppOptions {
  distDir: string;
  serve: boolean;
}

// Paths that belong to the server; everything else is a client route of the single-page app.
const SERVER_PREFIXES = ['/api/', '/_allauth/', '/ws/', '/healthz', '/readyz', '/metrics', '/assets/'];

function isServerPath(url: string) {
  return SERVER_PREFIXES.some((p) => url === p.replace(/\/$/, '') || url.startsWith(p));
}

function sendNotFound(request: FastifyRequest, reply: FastifyReply) {
  const { status, body } = toApiError(
    new AppError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`),
  );
  return reply.status(status).send(body);
}

export default fp<WebAppOptions>(
  async (app: FastifyInstance, { distDir, serve }) => {
    if (!serve) {
      app.setNotFoundHandler(sendNotFound);
      return;
    }
    const indexPath = path.join(distDir, 'index.html');
    let indexHtml: string;
    try {
      indexHtml = await readFile(indexPath, 'utf8');
    } catch {
      throw new Error(`The web app is not built (${indexPath} is missing). Run "npm run build" first.`);
    }

    await app.register(fastifyStatic, {
      root: distDir,
      prefix: '/',
      wildcard: false,
      index: false,
      // The build writes .br and .gz beside each text file (apps/web/vite.config.ts).
      preCompressed: true,
      setHeaders(reply, filePath) {
        const immutable = filePath.startsWith(path.join(distDir, 'assets') + path.sep);
        reply.header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
      },
    });

    const sendIndex = (reply: FastifyReply) =>
      reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(indexHtml);

    app.get('/', (_request, reply) => sendIndex(reply));

    app.setNotFoundHandler((request, reply) => {
      const pathname = request.url.split('?')[0] ?? '/';
      const wantsPage = request.method === 'GET' || request.method === 'HEAD';
      if (!wantsPage || isServerPath(pathname)) return sendNotFound(request, reply);
      return sendIndex(reply);
    });
  },
  { name: 'web-app' },
);
