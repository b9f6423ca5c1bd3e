// The API reference: GET /api/openapi.json (the document), GET /api/docs (the same, as a page rendered
// here, with no script and nothing from other sites), and allauth's own document, which the account
// API follows. Public: they describe the API, never this site's configuration or anyone's data.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';
import { REPO_ROOT } from '../../config.ts';
import type { ResponseDocs } from '../../plugins/routes.ts';
import { buildPageView } from './docs.view.ts';
import { ACCOUNT_API_BASE, ALLAUTH_DOCUMENT_PATH, buildOpenApiDocument, operationsFromRoutes } from './openapi.ts';

export const DOCS_PAGE = '/api/docs';
export const DOCUMENT_URL = '/api/openapi.json';
/** The page's stylesheet: an asset of the page, not an API operation. */
export const DOCS_STYLESHEET = '/api/docs/style.css';
const VIEWS = path.join(import.meta.dirname, 'views');
const ALLAUTH_YAML = path.join(import.meta.dirname, 'allauth-openapi.yaml');
/** The web app's design tokens and page frame, so the reference looks like the rest of Daybook. */
const WEB_STYLE_FILES = ['tokens.css', 'base.css', 'layout.css'].map((f) =>
  path.join(REPO_ROOT, 'apps/web/src/styles', f),
);
const CACHE = 'public, max-age=300';

function stylesheet(): { css: Buffer; url: string } {
  const css = Buffer.concat(
    [...WEB_STYLE_FILES, path.join(VIEWS, 'docs.css')].flatMap((file) => [readFileSync(file), Buffer.from('\n')]),
  );
  return { css, url: `${DOCS_STYLESHEET}?v=${createHash('sha256').update(css).digest('hex').slice(0, 12)}` };
}

export default async function docsRoutes(app: FastifyInstance) {
  // Built once every route is declared: a route the reference cannot describe, or a missing file,
  // stops the start with its reason.
  let document: Record<string, unknown> = {};
  let json = '';
  app.addHook('onReady', async () => {
    document = buildOpenApiDocument(operationsFromRoutes(app.declaredRoutes));
    json = JSON.stringify(document);
  });
  const style = stylesheet();
  const allauthYaml = readFileSync(ALLAUTH_YAML);
  let html: string | undefined;

  await app.register(view, {
    engine: { eta: new Eta({ autoEscape: true }) },
    root: VIEWS,
    options: { autoEscape: true },
  });

  const docs = (summary: string, description: string | undefined, response: ResponseDocs) =>
    ({
      config: {
        auth: 'public',
        docs: { tag: 'Documentation', summary, ...(description ? { description } : {}), responses: { 200: response } },
      },
    }) as const;
  app.get(
    DOCUMENT_URL,
    docs('This document', 'OpenAPI 3.1, made from the same zod schemas the server validates with.', {
      description: 'The OpenAPI document.',
      contentType: 'application/json',
    }),
    async (_request, reply) => reply.type('application/json; charset=utf-8').header('Cache-Control', CACHE).send(json),
  );

  app.get(
    DOCS_PAGE,
    docs('This reference as a web page', undefined, { description: 'The reference page.', contentType: 'text/html' }),
    async (_request, reply) => {
      html ??= await reply.viewAsync('docs', {
        page: buildPageView(document),
        cssUrl: style.url,
        documentUrl: DOCUMENT_URL,
        allauthUrl: ALLAUTH_DOCUMENT_PATH,
        accountApi: ACCOUNT_API_BASE,
        year: new Date().getFullYear(),
      });
      return reply.type('text/html; charset=utf-8').header('Cache-Control', CACHE).send(html);
    },
  );

  app.get(DOCS_STYLESHEET, { config: { auth: 'public', docs: false } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600').send(style.css),
  );

  app.get(
    ALLAUTH_DOCUMENT_PATH,
    docs(
      'The account API’s document',
      `The account API at \`${ACCOUNT_API_BASE}\` (OpenAPI 3.0, YAML): the operations of django-allauth’s headless API that Daybook serves for the \`browser\` client, with allauth’s schemas, and the ones it does not serve listed under \`x-daybook-unsupported\`.`,
      { description: 'allauth’s OpenAPI document.', contentType: 'application/yaml' },
    ),
    async (_request, reply) =>
      reply.type('application/yaml; charset=utf-8').header('Cache-Control', CACHE).send(allauthYaml),
  );
}
