// allauth's session: who is signed in, signing in and out, signing up, and confirming the password again.
import type { FastifyInstance } from 'fastify';
import { rotateCsrf } from '../../plugins/csrf.ts';
import { type AllauthRouteDeps, body, ctx, envelope, nowSec, requireUser } from './allauth.reply.ts';
import { endSession, saveSession, startSession } from './session.plugin.ts';
import type { AuthMethodRecord, SessionData } from './sessions.service.ts';

export function sessionRoutes(app: FastifyInstance, { accounts, replies }: AllauthRouteDeps) {
  const { authenticated, unauthenticated } = replies;

  app.get('/auth/session', async (request, reply) => {
    if (!request.user) return unauthenticated(reply, request.session?.data);
    return authenticated(reply, request.user, request.session?.data.methods ?? []);
  });

  app.delete('/auth/session', async (request, reply) => {
    await endSession(request, reply);
    return unauthenticated(reply);
  });

  app.post('/auth/login', async (request, reply) => {
    if (request.user) return envelope(reply, 409);
    const outcome = await accounts.login(body(request), ctx(request));
    if (outcome.kind === 'inactive') return unauthenticated(reply);
    if (outcome.kind === 'verify_email') {
      const data: SessionData = { pendingVerify: { userId: outcome.userId, email: outcome.email, at: nowSec() } };
      await saveSession(request, reply, data);
      return unauthenticated(reply, data);
    }
    const methods: AuthMethodRecord[] = [{ method: 'password', at: nowSec(), email: outcome.email }];
    await startSession(request, reply, outcome.user, { methods });
    rotateCsrf(request, reply);
    return authenticated(reply, outcome.user, methods);
  });

  app.post('/auth/signup', async (request, reply) => {
    if (request.user) return envelope(reply, 409);
    const { userId, email } = await accounts.signupAllauth(body(request), ctx(request));
    // Mandatory verification: the new account waits for its email to be confirmed.
    const data: SessionData = { pendingVerify: { userId, email, at: nowSec() } };
    await saveSession(request, reply, data);
    return unauthenticated(reply, data);
  });

  app.post('/auth/reauthenticate', async (request, reply) => {
    const user = requireUser(request);
    await accounts.reauthenticate(user, body(request).password);
    const methods: AuthMethodRecord[] = [
      ...(request.session?.data.methods ?? []),
      { method: 'password', at: nowSec(), reauthenticated: true },
    ];
    await saveSession(request, reply, { ...request.session?.data, methods });
    return authenticated(reply, user, methods);
  });
}
