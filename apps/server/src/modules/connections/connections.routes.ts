// /accounts/3rdparty/: the server-rendered Calendar Connections page (plain links, no app bundle).
import type { FastifyInstance } from 'fastify';
import { escapeHtml } from '../../lib/html.ts';

const CSS = `
:root{--bg:#f7f6f3;--surface:#fff;--border:#e4e2dc;--text:#1c2130;--muted:#5b6172;--primary:#4338ca}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--text);font:16px/1.55 ui-sans-serif,system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}
header{border-bottom:1px solid var(--border);background:rgb(247 246 243 / .9)}
.bar,main{max-width:1120px;margin:0 auto;padding:0 24px}.bar{display:flex;align-items:center;gap:16px;height:60px}
.brand{font-weight:700;font-size:1.125rem;color:var(--text);text-decoration:none;margin-right:auto}
nav a{color:var(--muted);text-decoration:none;font-size:.875rem;font-weight:500;padding:8px 10px;border-radius:10px}
nav a:hover{background:#f1f0ec;color:var(--text)}a:focus-visible{outline:3px solid #6366f1;outline-offset:2px}
main{padding-top:48px;padding-bottom:72px}h1{font-size:1.75rem;margin:0 0 8px}.sub{color:var(--muted);margin:0 0 32px}
.card{background:var(--surface);border:1px solid var(--border);border-radius:16px;padding:28px;max-width:640px;box-shadow:0 1px 2px rgb(28 33 48 / .06)}
.card h2{font-size:1.125rem;margin:0 0 8px}.card p{margin:0 0 12px;color:var(--muted)}.empty{padding:16px;border-radius:10px;background:#f1f0ec;color:var(--text)!important}
@media (max-width:480px){.bar,main{padding:0 16px}main{padding-top:32px}.card{padding:20px}}
`;

const page = (email: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Calendar Connections · Daybook</title><link rel="stylesheet" href="/accounts/3rdparty/style.css"><link rel="icon" href="/favicon.svg"></head>
<body><header><div class="bar"><a class="brand" href="/">Daybook</a><nav aria-label="Main"><a href="/">Home</a><a href="/chat">Chat</a><a href="/memories">Memories</a></nav></div></header>
<main><h1>Calendar Connections</h1><p class="sub">Connect a calendar so your daily message can include today's events.</p>
<section class="card" aria-labelledby="connected"><h2 id="connected">Connected calendars</h2>
<p class="empty">No calendars are connected to ${escapeHtml(email)}.</p>
<p>Calendar providers are not enabled on this Daybook installation yet. When the person who runs it enables one, you can connect it here.</p></section></main></body></html>`;

export default async function connectionsRoutes(app: FastifyInstance) {
  // With trailing slashes ignored, this serves /accounts/3rdparty as well.
  app.get('/accounts/3rdparty/', async (request, reply) => {
    if (!request.user) return reply.redirect(`/auth/login?next=${encodeURIComponent('/accounts/3rdparty/')}`, 302);
    return reply
      .header('Cache-Control', 'private, no-store')
      .type('text/html; charset=utf-8')
      .send(page(request.user.email));
  });

  app.get('/accounts/3rdparty/style.css', async (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(CSS),
  );
}
