import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getSession } from '../features/auth/allauth.ts';
import { getMe } from '../features/auth/api.ts';
import { ALLAUTH, mockFetch, SESSION_SIGNED_IN, TEST_USER, USER_ME } from '../test/fetch.ts';
import { BOOT_ELEMENT_ID, BOOT_FRESH_MS, hasBootAnswer, resetBootAnswers, takeBootAnswer } from './boot.ts';

/** Puts answers into the page as the server does (apps/server/src/plugins/web-app.ts). */
function carry(text: string) {
  const element = document.createElement('script');
  element.type = 'application/json';
  element.id = BOOT_ELEMENT_ID;
  element.textContent = text;
  document.body.append(element);
  resetBootAnswers();
}

const SESSION = `${ALLAUTH}/auth/session`;
const ANSWERS = {
  [SESSION]: { status: SESSION_SIGNED_IN.status, body: SESSION_SIGNED_IN.body },
  '/api/users/me/': { status: 200, body: USER_ME },
};

// The page loaded a second ago: answers count as fresh for BOOT_FRESH_MS after the page's start, and a
// worker's clock starts when the worker does, which on a busy machine is long before this file runs.
beforeEach(() => {
  vi.spyOn(performance, 'now').mockReturnValue(1000);
});

afterEach(() => {
  vi.restoreAllMocks();
  document.getElementById(BOOT_ELEMENT_ID)?.remove();
  resetBootAnswers();
});

describe("the page's answers to the app's first requests", () => {
  it('answer the first GET of their path once, with no request; the next one goes out', async () => {
    carry(JSON.stringify(ANSWERS));
    const { calls } = mockFetch({
      'GET /api/users/me/': { status: 200, body: { ...USER_ME, email: 'later@example.com' } },
    });
    expect(hasBootAnswer('/api/users/me/')).toBe(true);
    expect(await getMe()).toEqual(USER_ME);
    expect(calls('GET /api/users/me/')).toHaveLength(0);
    expect(hasBootAnswer('/api/users/me/')).toBe(false);
    expect((await getMe()).email).toBe('later@example.com');
    expect(calls('GET /api/users/me/')).toHaveLength(1);
  });

  it('give the account API client its session the same way', async () => {
    carry(JSON.stringify(ANSWERS));
    const { calls } = mockFetch({});
    expect(await getSession()).toEqual(TEST_USER);
    expect(calls(`GET ${SESSION}`)).toHaveLength(0);
  });

  it('leave the page once read, so nothing else finds them', () => {
    carry(JSON.stringify(ANSWERS));
    expect(takeBootAnswer('/api/site/')).toBeUndefined();
    expect(document.getElementById(BOOT_ELEMENT_ID)).toBeNull();
  });

  it('are not taken once the page is no longer new (they may be out of date)', () => {
    carry(JSON.stringify(ANSWERS));
    vi.spyOn(performance, 'now').mockReturnValue(BOOT_FRESH_MS + 1);
    expect(hasBootAnswer('/api/users/me/')).toBe(false);
    expect(takeBootAnswer('/api/users/me/')).toBeUndefined();
  });

  it.each([
    ['not JSON', '{"/api/users/me/": '],
    ['not answers', '{"/api/users/me/": {"status": "200"}}'],
    ['a status no response has', '{"/api/users/me/": {"status": 99, "body": {}}}'],
  ])('are ignored when they are %s: the app asks the server', async (_what, text) => {
    carry(text);
    const { calls } = mockFetch({ 'GET /api/users/me/': { status: 200, body: USER_ME } });
    expect(await getMe()).toEqual(USER_ME);
    expect(calls('GET /api/users/me/')).toHaveLength(1);
  });

  it('carry error answers as they are', async () => {
    carry(
      JSON.stringify({
        '/api/users/me/': { status: 401, body: { error: 'Sign in first.', code: 'not_authenticated' } },
      }),
    );
    mockFetch({});
    await expect(getMe()).rejects.toMatchObject({ status: 401, code: 'not_authenticated' });
  });
});
