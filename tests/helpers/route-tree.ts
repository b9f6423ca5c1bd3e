// The routes an app registered, read from Fastify's own route tree, for tests that hold a document
// (OpenAPI, allauth's) against what the server really answers.
import type { FastifyInstance } from 'fastify';

/** A Fastify path in a document's form: `{param}` for `:param`, no trailing slash. */
export const documentPath = (route: string) => route.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '');

/** Every route as "METHOD /path/{param}" (printRoutes nests each path under its parent's). */
export function registeredRoutes(app: FastifyInstance): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    const full = `${stack[depth - 1] ?? ''}${match[2]}`;
    stack[depth] = full;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (!method || method === 'HEAD') continue;
      routes.add(`${method} ${documentPath(full)}`);
    }
  }
  return routes;
}
