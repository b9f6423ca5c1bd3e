import { ZSiteInfo } from '@daybook/contracts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    CREATOR_NAME: 'Ana Lima',
    CREATOR_BIO: 'I build small tools.',
    CREATOR_EMAIL: 'ana@example.org',
    CREATOR_LINKS:
      'GitHub=https://github.com/ana,LinkedIn=https://linkedin.com/in/ana,Mastodon=https://m.example/@ana,Blog=https://ana.example.org',
  });
});
afterAll(() => t.close());

it('GET /api/site/ tells the web app who made this installation, from configuration', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/api/site/' });
  expect(res.statusCode).toBe(200);
  expect(ZSiteInfo.parse(res.json())).toEqual({
    creator: {
      name: 'Ana Lima',
      slug: 'ana-lima',
      bio: 'I build small tools.',
      email: 'ana@example.org',
      links: [
        { label: 'GitHub', url: 'https://github.com/ana' },
        { label: 'LinkedIn', url: 'https://linkedin.com/in/ana' },
        { label: 'Mastodon', url: 'https://m.example/@ana' },
        { label: 'Blog', url: 'https://ana.example.org' },
      ],
    },
  });
});
