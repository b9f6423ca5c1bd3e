// Signed-in users for the benches: a real signup through inject, each from its own client address
// (signups are rate-limited per address).
import type { FastifyInstance } from 'fastify';

const PASSWORD = 'bench password 123';

export interface BenchUser {
  /** The Cookie header of the signed-in session. */
  cookie: string;
  csrf: string;
}

export async function signUpBenchUser(
  app: FastifyInstance,
  options: { token: string; email: string; remoteAddress: string; origin: string },
): Promise<BenchUser> {
  const { remoteAddress } = options;
  const jar = new Map<string, string>();
  const keep = (res: { cookies: Array<{ name: string; value: string }> }) => {
    for (const c of res.cookies) jar.set(c.name, c.value);
  };
  keep(await app.inject({ method: 'GET', url: '/_allauth/browser/v1/config', remoteAddress }));
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/signup/',
    remoteAddress,
    headers: { 'x-csrftoken': jar.get('csrftoken') ?? '', origin: options.origin },
    cookies: Object.fromEntries(jar),
    payload: { email: options.email, password1: PASSWORD, password2: PASSWORD, inviteToken: options.token },
  });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.body}`);
  keep(res);
  return { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), csrf: jar.get('csrftoken') ?? '' };
}
