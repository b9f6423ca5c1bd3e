// Serves the built web app: hashed assets cached for a year, index.html for every client route
// (carrying the answers to the app's first requests, see bootAnswers), and a JSON 404 for unknown
// API paths so API clients never receive the HTML page.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BOOT_ELEMENT_ID, type TBootAnswers } from '@daybook/contracts';
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

/**
 * The GETs the web app makes before it can show anything (apps/web/src/main.tsx): who is signed in,
 * their account (signed in only) and the site's details. The page carries their answers, so the app
 * starts without three round trips (apps/web/src/lib/boot.ts takes each once).
 */
export const BOOT_SESSION = '/_allauth/browser/v1/auth/session';
export const BOOT_ACCOUNT = '/api/users/me/';
export const BOOT_SITE = '/api/site/';
/** A page waits at most this long for the answers; those not ready by then the app asks for itself. */
const BOOT_BUDGET_MS = 1000;

/** A Cookie header for cookies as the server reads them (values decoded; it decodes them again). */
const cookieHeader = (cookies: Record<string, string | undefined>) =>
  Object.entries(cookies)
    .flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${encodeURIComponent(value)}`]))
    .join('; ');

const setCookieLines = (value: string | string[] | number | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [String(value)];

/**
 * Asks this server, in process, what the app would ask first, with the page request's cookies: the
 * very routes that answer the app answer here, so the answers cannot differ from the API's. Cookies
 * those answers set (the CSRF token) are passed on to the next request and returned for the page.
 */
async function bootAnswers(app: FastifyInstance, request: FastifyRequest) {
  const answers: TBootAnswers = {};
  // The page request's cookies as the server's own parser read them (of a name sent twice, the
  // first), with those the answers so far set winning.
  const jar = { ...request.cookies };
  let setCookies: string[] = [];
  // Never rejects: a failure is left for the app to meet (and show) as it would without the page's help.
  const ask = async (url: string) => {
    try {
      const res = await app.inject({
        method: 'GET',
        url,
        headers: {
          accept: 'application/json',
          'x-requested-with': 'XMLHttpRequest',
          cookie: cookieHeader(jar),
          ...(request.headers['user-agent'] ? { 'user-agent': request.headers['user-agent'] } : {}),
        },
        remoteAddress: request.ip,
      });
      setCookies = [...setCookies, ...setCookieLines(res.headers['set-cookie'])];
      for (const { name, value } of res.cookies as Array<{ name: string; value: string }>) jar[name] = value;
      if (res.statusCode < 500) answers[url] = { status: res.statusCode, body: res.json() };
    } catch (err) {
      request.log.warn({ err, url }, 'the page was sent without one of its first answers');
    }
  };
  const site = ask(BOOT_SITE);
  await ask(BOOT_SESSION);
  if (answers[BOOT_SESSION]?.status === 200) await ask(BOOT_ACCOUNT);
  await site;
  // One line per cookie name, the last set winning.
  const byName = new Map(setCookies.map((line) => [line.slice(0, line.indexOf('=')), line]));
  return { answers, setCookies: [...byName.values()] };
}

/** JSON that cannot end the script element it sits in, nor open a comment there. */
const scriptSafeJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

function sendNotFound(request: FastifyRequest, reply: FastifyReply) {
  const { status, body } = toApiError(
    new AppError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`),
  );
  return reply.status(status).send(body);
}

/** index.html cut where the answers go: just before </body> (or at the end, for a page without one). */
function splitAtBodyEnd(html: string): [string, string] {
  const at = html.lastIndexOf('</body>');
  return at < 0 ? [html, ''] : [html.slice(0, at), html.slice(at)];
}

/** The promise's value, or null once `ms` have passed (the work goes on, unawaited). */
function withinBudget<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
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

    const [beforeBody, afterBody] = splitAtBodyEnd(indexHtml);
    const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
      // The answers are this visitor's (the session's own answer is never stored either): no cache
      // may keep the page, so Back and a restored tab ask again instead of showing someone's old state.
      reply.type('text/html; charset=utf-8').header('Cache-Control', 'private, no-store').header('Vary', 'Cookie');
      if (request.method === 'HEAD') return reply.send(indexHtml);
      // A page is always sent, with its answers or without them.
      const boot = await withinBudget(bootAnswers(app, request), BOOT_BUDGET_MS).catch(() => null);
      if (!boot || Object.keys(boot.answers).length === 0) return reply.send(indexHtml);
      if (boot.setCookies.length) reply.header('set-cookie', boot.setCookies);
      const script = `<script type="application/json" id="${BOOT_ELEMENT_ID}">${scriptSafeJson(boot.answers)}</script>`;
      return reply.send(beforeBody + script + afterBody);
    };

    app.get('/', sendIndex);

    app.setNotFoundHandler((request, reply) => {
      const pathname = request.url.split('?')[0] ?? '/';
      const wantsPage = request.method === 'GET' || request.method === 'HEAD';
      if (!wantsPage || isServerPath(pathname)) return sendNotFound(request, reply);
      return sendIndex(request, reply);
    });
  },
  { name: 'web-app' },
);
