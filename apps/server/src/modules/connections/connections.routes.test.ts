import { afterAll, beforeAll, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it('sends signed-out visitors of /accounts/3rdparty/ to sign in, and back afterwards', async () => {
  for (const url of ['/accounts/3rdparty/', '/accounts/3rdparty']) {
    const res = await new Browser(t.app).get(url);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/auth/login?next=%2Faccounts%2F3rdparty%2F');
  }
});

it('shows a signed-in user their calendar connections page with plain links', async () => {
  const { browser, email } = await signedInUser(t);
  const res = await browser.get('/accounts/3rdparty/');
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.body).toContain('<h1>Calendar Connections</h1>');
  expect(res.body).toContain(`No calendars are connected to ${email}.`);
  expect(res.body).toContain('<a href="/memories">Memories</a>');
  const css = await browser.get('/accounts/3rdparty/style.css');
  expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
});
