// Loads the session named by the `sessionid` cookie for account, API and socket requests, and
// gives routes the few operations they need: start (rotating the key), save, end.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { routedPath } from '../../lib/route-path.ts';
import type { UserRow } from './accounts.repo.ts';
import { type LoadedSession, SESSION_TTL_SEC, type SessionData, type SessionsService } from './sessions.service.ts';

export const SESSION_COOKIE = 'sessionid';
const SESSION_PATHS = ['/api/', '/_allauth/', '/ws/', '/accounts/'];

declare module 'fastify' {
  interface FastifyInstance {
    sessionOptions: SessionPluginOptions;
  }
  interface FastifyRequest {
    session: LoadedSession | null;
    /** The signed-in user, or null. */
    user: UserRow | null;
  }
}

export interface SessionPluginOptions {
  sessions: SessionsService;
  secureCookies: boolean;
}

function setCookie(reply: FastifyReply, key: string) {
  reply.setCookie(SESSION_COOKIE, key, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: reply.server.sessionOptions.secureCookies,
    maxAge: SESSION_TTL_SEC,
  });
}

/** Starts a fresh session (new key) for `userId`, replacing the current one. */
export async function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow | null,
  data: SessionData,
) {
  const { key, id } = await request.server.sessionOptions.sessions.start(user?.id ?? null, data, request.session?.id);
  request.session = { id, data, user };
  request.user = user;
  setCookie(reply, key);
}

/** Saves `data` in the current session, creating an anonymous one when there is none. */
export async function saveSession(request: FastifyRequest, reply: FastifyReply, data: SessionData) {
  if (request.session) {
    request.session.data = data;
    await request.server.sessionOptions.sessions.save(request.session.id, data);
  } else {
    await startSession(request, reply, null, data);
  }
}

export async function endSession(request: FastifyRequest, reply: FastifyReply) {
  if (request.session) await request.server.sessionOptions.sessions.destroy(request.session.id);
  request.session = null;
  request.user = null;
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

export default fp<SessionPluginOptions>(
  async (app: FastifyInstance, opts) => {
    app.decorate('sessionOptions', opts);
    app.decorateRequest('session', null);
    app.decorateRequest('user', null);
    app.addHook('onRequest', async (request) => {
      const path = routedPath(request);
      if (!SESSION_PATHS.some((p) => path.startsWith(p))) return;
      // Reads may use this process's copy of the session; changes always check the database.
      const fresh = request.method !== 'GET' && request.method !== 'HEAD';
      request.session = await opts.sessions.load(request.cookies[SESSION_COOKIE], { fresh });
      request.user = request.session?.user ?? null;
    });
    // A change answers only after this process has forgotten what it changed, so the next read
    // (from the same tab, at once) sees it: the user's own settings, or anyone's after an admin's change.
    app.addHook('onSend', async (request, _reply, payload) => {
      if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return payload;
      const path = routedPath(request);
      if (path.startsWith('/api/admin/')) opts.sessions.forgetCached('all');
      else if (request.user) opts.sessions.forgetCached({ userId: request.user.id });
      return payload;
    });
  },
  { name: 'session', dependencies: ['@fastify/cookie', 'db'] },
);
