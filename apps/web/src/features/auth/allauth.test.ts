import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ALLAUTH,
  configReply,
  mockFetch,
  reply,
  SESSION_ANONYMOUS,
  SESSION_SIGNED_IN,
  setCookie,
} from '../../test/fetch.ts';
import { changePassword, getSession, invalidateSession, login, logout } from './allauth.ts';

const LOGIN = `POST ${ALLAUTH}/auth/login`;
const CONFIG = `GET ${ALLAUTH}/config`;
const SESSION = `GET ${ALLAUTH}/auth/session`;
const CSRF_FAILED = {
  status: 403,
  errors: [{ code: 'csrf_failed', message: 'CSRF Failed: CSRF token missing or incorrect.' }],
};

describe('account API client', () => {
  it('retries a CSRF refusal once, with a fresh token from /config', async () => {
    const { calls } = mockFetch({
      [CONFIG]: (_req, n) => configReply(n === 0 ? 'stale-token' : 'fresh-token'),
      [LOGIN]: (req) =>
        req.headers.get('X-CSRFToken') === 'fresh-token' ? SESSION_SIGNED_IN : reply(403, CSRF_FAILED),
    });
    const res = await login({ email: 'sam@example.com', password: 'correct horse' });
    expect(res.status).toBe(200);
    expect(calls(LOGIN).map((r) => r.headers.get('X-CSRFToken'))).toEqual(['stale-token', 'fresh-token']);
    expect(calls(CONFIG)).toHaveLength(2);
  });

  it('retries only once, and only for CSRF', async () => {
    const { calls } = mockFetch({ [LOGIN]: reply(403, CSRF_FAILED) });
    expect((await login({ email: 'a@example.com', password: 'x' })).status).toBe(403);
    expect(calls(LOGIN)).toHaveLength(2);

    const other = mockFetch({ [LOGIN]: reply(403) });
    expect((await login({ email: 'a@example.com', password: 'x' })).status).toBe(403);
    expect(other.calls(LOGIN)).toHaveLength(1);
  });

  it('takes the token from the csrftoken cookie when there is one', async () => {
    setCookie('csrftoken=cookie-token');
    const { calls } = mockFetch({ [`POST ${ALLAUTH}/account/password/change`]: SESSION_SIGNED_IN });
    await changePassword({ current_password: 'old password', new_password: 'new password' });
    expect(calls(`POST ${ALLAUTH}/account/password/change`)[0]?.headers.get('X-CSRFToken')).toBe('cookie-token');
    expect(calls(CONFIG)).toHaveLength(0);
  });

  describe('with a fake clock', () => {
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('keeps the /config token for 30 s', async () => {
      const { calls } = mockFetch({ [`POST ${ALLAUTH}/account/password/change`]: SESSION_SIGNED_IN });
      const change = () => changePassword({ current_password: 'old password', new_password: 'new password' });
      await change();
      await change();
      expect(calls(CONFIG)).toHaveLength(1);
      vi.advanceTimersByTime(30_001);
      await change();
      expect(calls(CONFIG)).toHaveLength(2);
    });

    it('keeps the session for 5 s unless invalidated', async () => {
      const { calls } = mockFetch({ [SESSION]: SESSION_SIGNED_IN });
      expect((await getSession())?.email).toBe('sam@example.com');
      await getSession();
      expect(calls(SESSION)).toHaveLength(1);
      vi.advanceTimersByTime(5_001);
      await getSession();
      expect(calls(SESSION)).toHaveLength(2);
      invalidateSession();
      await getSession();
      expect(calls(SESSION)).toHaveLength(3);
    });
  });

  it('reads a 401 as nobody signed in, and forgets the session on logout', async () => {
    let signedIn = true;
    const { calls } = mockFetch({
      [SESSION]: () => (signedIn ? SESSION_SIGNED_IN : SESSION_ANONYMOUS),
      [`DELETE ${ALLAUTH}/auth/session`]: () => {
        signedIn = false;
        return SESSION_ANONYMOUS;
      },
    });
    expect(await getSession()).not.toBeNull();
    expect((await logout()).status).toBe(401);
    expect(calls(`DELETE ${ALLAUTH}/auth/session`)[0]?.headers.get('X-CSRFToken')).toBe('config-token');
    expect(await getSession()).toBeNull();
  });

  it('survives answers that are not JSON', async () => {
    mockFetch({ [LOGIN]: { status: 502, text: '<html>Bad gateway</html>' } });
    expect(await login({ email: 'a@example.com', password: 'x' })).toEqual({ status: 502 });
  });
});
