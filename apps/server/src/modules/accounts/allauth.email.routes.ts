// allauth's email routes: verifying an address by the key its link carries, and the signed-in
// user's addresses.
import type { FastifyInstance } from 'fastify';
import { type AllauthRouteDeps, body, envelope, requireUser } from './allauth.reply.ts';
import { saveSession } from './session.plugin.ts';

export function emailRoutes(app: FastifyInstance, { accounts, replies }: AllauthRouteDeps) {
  const { authenticated, unauthenticated } = replies;

  app.get('/auth/email/verify', async (request, reply) => {
    const key = request.headers['x-email-verification-key'];
    const { email, user } = await accounts.checkVerifyKey(typeof key === 'string' ? key : undefined);
    return envelope(reply, 200, {
      data: { email, user: accounts.serializeUser(user) },
      meta: { is_authenticating: Boolean(request.session?.data.pendingVerify) },
    });
  });

  app.post('/auth/email/verify', async (request, reply) => {
    await accounts.confirmVerifyKey(body(request).key);
    if (request.user) return authenticated(reply, request.user, request.session?.data.methods ?? []);
    // Verified, but not signed in: "a status code of 401 does not imply failure".
    if (request.session?.data.pendingVerify)
      await saveSession(request, reply, { ...request.session.data, pendingVerify: undefined });
    return unauthenticated(reply);
  });

  // Link mode: there is no code to resend.
  app.post('/auth/email/verify/resend', async (_request, reply) => envelope(reply, 409));

  // ---- email addresses ----
  app.get('/account/email', async (request, reply) =>
    envelope(reply, 200, { data: await accounts.listEmails(requireUser(request)) }),
  );

  app.post('/account/email', async (request, reply) => {
    if (!request.user) return envelope(reply, 409);
    return envelope(reply, 200, { data: await accounts.addEmail(request.user, body(request).email) });
  });

  app.put('/account/email', async (request, reply) => {
    const sent = await accounts.resendEmail(requireUser(request), body(request).email);
    return envelope(reply, sent ? 200 : 403);
  });

  app.patch('/account/email', async (request, reply) =>
    envelope(reply, 200, { data: await accounts.setPrimaryEmail(requireUser(request), body(request)) }),
  );

  app.delete('/account/email', async (request, reply) =>
    envelope(reply, 200, { data: await accounts.removeEmail(requireUser(request), body(request).email) }),
  );
}
