// allauth's password routes: resetting a forgotten password by a mailed key, and changing it signed in.
import type { FastifyInstance } from 'fastify';
import { type AllauthRouteDeps, body, ctx, envelope, requireUser } from './allauth.reply.ts';
import { endSession, startSession } from './session.plugin.ts';

export function passwordRoutes(app: FastifyInstance, { accounts, replies }: AllauthRouteDeps) {
  const { authenticated, unauthenticated } = replies;

  app.post('/auth/password/request', async (request, reply) => {
    await accounts.requestPasswordReset(body(request).email, ctx(request));
    return envelope(reply, 200);
  });

  app.get('/auth/password/reset', async (request, reply) => {
    const key = request.headers['x-password-reset-key'];
    const user = await accounts.checkResetKey(typeof key === 'string' ? key : undefined);
    return envelope(reply, 200, { data: { user: accounts.serializeUser(user) } });
  });

  app.post('/auth/password/reset', async (request, reply) => {
    const user = await accounts.resetPassword(body(request), ctx(request));
    // Every session of the account ends (each is told why); the person signs in with the new password.
    await request.server.sessionOptions.sessions.destroyAllFor(user.id, undefined, 'password_changed');
    if (request.session?.user?.id === user.id) await endSession(request, reply);
    return unauthenticated(reply, request.session?.data);
  });

  app.post('/account/password/change', async (request, reply) => {
    const user = requireUser(request);
    const updated = await accounts.changePassword(user, body(request));
    // This device stays signed in (fresh key); every other session of the account ends, told why.
    await request.server.sessionOptions.sessions.destroyAllFor(user.id, request.session?.id, 'password_changed');
    await startSession(request, reply, updated, request.session?.data ?? {});
    return authenticated(reply, updated, request.session?.data.methods ?? []);
  });
}
