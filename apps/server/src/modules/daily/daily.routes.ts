// GET /api/daily-messages/{id}/ (owner only), POST /api/daily-messages/send-now/, and the email's
// pause link /daily-messages/pause/?token=… (outside /api/: the signed token is its authority, and
// mail clients' one-click POST carries no CSRF token).
import { DAILY_MESSAGES, ZDailyMessage, ZRowParams, ZSendNowResponse } from '@daybook/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireUser } from '../../lib/auth.ts';
import { AppError } from '../../lib/errors.ts';
import { escapeHtml } from '../../lib/html.ts';
import type { DailyService } from './daily.service.ts';

/** The pause link's token; anything else (repeated, too long, not text) is a link that is not valid. */
const pauseToken = (q: unknown): string => {
  const token = (q as { token?: unknown } | null)?.token;
  return typeof token === 'string' && token.length <= 200 ? token : '';
};

export interface DailyRoutesOptions {
  daily: DailyService;
  /** False once the user used up today's "send now" requests. */
  allowSendNow: (userId: number) => Promise<boolean>;
}

const PAGE_CSS = `body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f7f6f3;color:#1f2330}main{max-width:28rem;margin:12vh auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.08)}h1{font-size:1.4rem;margin:0 0 .75rem}button{font:inherit;padding:.6rem 1.1rem;border:0;border-radius:8px;background:#2f5bd3;color:#fff;cursor:pointer}button:focus-visible,a:focus-visible{outline:3px solid #9db4f0;outline-offset:2px}a{color:#2f5bd3}`;

function page(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Daybook</title>
<link rel="stylesheet" href="/daily-messages/pause.css"></head>
<body><main>${body}</main></body></html>`,
    );
}

export default async function dailyRoutes(fastify: FastifyInstance, { daily, allowSendNow }: DailyRoutesOptions) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Mail clients' one-click POST (RFC 8058) is a form: "List-Unsubscribe=One-Click".
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 4096 },
    (_r, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.get('/daily-messages/pause.css', async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=86400').send(PAGE_CSS),
  );

  // Any id that is not a row id, and another user's, is simply not found.
  app.get(
    '/api/daily-messages/:id/',
    {
      config: {
        auth: 'user',
        notFound: DAILY_MESSAGES.notFound,
        docs: {
          tag: 'History',
          summary: 'One daily message',
          responses: { 200: { description: 'The daily message.' } },
        },
      },
      schema: { params: ZRowParams, response: { 200: ZDailyMessage } },
    },
    async (request) => {
      const found = await daily.get(requireUser(request).id, request.params.id);
      if (!found) throw new AppError('not_found', DAILY_MESSAGES.notFound);
      return found;
    },
  );

  app.post(
    '/api/daily-messages/send-now/',
    {
      config: {
        auth: 'user',
        docs: {
          tag: 'History',
          summary: "Send today's daily message now",
          description: 'At most 3 times a day. It arrives in the chat when written.',
          responses: {
            200: { description: "Today's message was already delivered." },
            202: { description: "Today's message is being written." },
          },
          errors: { 429: 'Asked too often today.' },
        },
      },
      schema: { response: { 200: ZSendNowResponse, 202: ZSendNowResponse } },
    },
    async (request, reply) => {
      const user = requireUser(request);
      if (!(await allowSendNow(user.id))) throw new AppError('rate_limited', DAILY_MESSAGES.sendNowLimit);
      const result = await daily.sendNow(user.id);
      return reply.status(result.status === 'queued' ? 202 : 200).send(result);
    },
  );

  // A GET only asks (mail scanners open links); the button, or the mail client's one-click POST, pauses.
  app.get('/daily-messages/pause/', async (request, reply) => {
    const token = pauseToken(request.query);
    if (!(await daily.pauseUser(token)))
      return page(
        reply,
        400,
        'Link not valid',
        '<h1>This link is not valid</h1><p>Pause daily messages from the menu in Daybook instead.</p>',
      );
    return page(
      reply,
      200,
      'Pause daily messages',
      `<h1>Pause daily messages?</h1><p>You will get no more daily messages, in the chat or by email, until you turn them back on in Daybook.</p>
<form method="post" action="/daily-messages/pause/?token=${escapeHtml(encodeURIComponent(token))}"><button type="submit">Pause daily messages</button></form>`,
    );
  });

  app.post('/daily-messages/pause/', async (request, reply) => {
    const token = pauseToken(request.query);
    const userId = await daily.pauseUser(token);
    if (!userId)
      return page(
        reply,
        400,
        'Link not valid',
        '<h1>This link is not valid</h1><p>Pause daily messages from the menu in Daybook instead.</p>',
      );
    await daily.pause(userId);
    // No session here, so the session plugin cannot: this process forgets its copies before answering.
    request.server.sessionOptions.sessions.forgetCached({ userId });
    return page(
      reply,
      200,
      'Daily messages paused',
      '<h1>Daily messages paused</h1><p>Turn them back on any time from the menu in Daybook.</p><p><a href="/profile">Open your settings</a></p>',
    );
  });
}
