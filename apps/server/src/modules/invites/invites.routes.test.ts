import { ZCreateInviteResponse, ZInviteList } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function admin() {
  const user = await signedInUser(t);
  await t.app.db.prisma.user.update({ where: { id: user.userId }, data: { isAdmin: true } });
  return user;
}

describe('/api/admin/invites/', () => {
  it('lets an admin create, list and revoke invites', async () => {
    const { browser } = await admin();
    const created = await browser.post('/api/admin/invites/', {
      max_uses: 3,
      expires_in_days: 7,
      email: 'Friend@Example.com',
    });
    expect(created.statusCode).toBe(201);
    const body = ZCreateInviteResponse.parse(created.json());
    expect(body.signup_url).toBe(`http://daybook.test/auth/signup?itoken=${body.token}`);
    expect(body.invite).toMatchObject({
      email: 'friend@example.com',
      max_uses: 3,
      uses: 0,
      status: 'active',
      revoked_at: null,
    });
    expect(new Date(body.invite.expires_at ?? 0).getTime()).toBeGreaterThan(Date.now() + 6.9 * 86_400_000);

    const list = ZInviteList.parse((await browser.get('/api/admin/invites/')).json());
    expect(list.results.map((i) => i.id)).toContain(body.invite.id);
    // The token is shown once; the list never has it.
    expect(JSON.stringify(list)).not.toContain(body.token);

    const revoked = await browser.delete(`/api/admin/invites/${body.invite.id}/`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: body.invite.id, status: 'revoked' });
  });

  it('validates the request', async () => {
    const { browser } = await admin();
    const res = await browser.post('/api/admin/invites/', { max_uses: 0, email: 'nope', extra: 1 });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_error');
    expect(Object.keys(res.json().field_errors).sort()).toEqual(['email', 'max_uses', 'non_field_errors']);
  });

  it('answers 404 for an unknown invite', async () => {
    const { browser } = await admin();
    expect((await browser.delete('/api/admin/invites/999999/')).statusCode).toBe(404);
  });

  it('is for admins only: 403 for users, 401 without a session', async () => {
    const { browser } = await signedInUser(t);
    expect((await browser.get('/api/admin/invites/')).statusCode).toBe(403);
    expect((await browser.post('/api/admin/invites/', {})).json()).toEqual({
      error: 'Only administrators can manage invites.',
      code: 'forbidden',
    });
    expect((await new Browser(t.app).get('/api/admin/invites/')).statusCode).toBe(401);
  });
});

describe('invite links', () => {
  it('open FRONTEND_URL_SIGNUP when another front end receives them', async () => {
    const front = await createTestApp({ FRONTEND_URL_SIGNUP: 'https://front.example/join?ref=mail' });
    try {
      const { token, signup_url } = await front.app.invites.create({ maxUses: 1, expiresInDays: null, email: null });
      const link = new URL(signup_url);
      expect(link.origin + link.pathname).toBe('https://front.example/join');
      expect(link.searchParams.get('ref')).toBe('mail');
      expect(link.searchParams.get('itoken')).toBe(token);
    } finally {
      await front.close();
    }
  });
});
