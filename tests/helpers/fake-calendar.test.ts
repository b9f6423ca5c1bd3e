import {
  CodeChallengeMethod,
  generateCodeVerifier,
  generateState,
  OAuth2Client,
  OAuth2RequestError,
  type OAuth2Tokens,
  UnexpectedResponseError,
} from 'arctic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeCalendarProviders, type FakeProviderId, startFakeCalendarProviders } from './fake-calendar.ts';

let fake: FakeCalendarProviders;
let seq = 0;

beforeAll(async () => {
  fake = await startFakeCalendarProviders();
});
afterAll(async () => {
  await fake.close();
});

const SCOPES: Record<FakeProviderId, string[]> = {
  google: ['openid', 'email', 'https://www.googleapis.com/auth/calendar.readonly'],
  microsoft: ['openid', 'email', 'profile', 'offline_access', 'Calendars.ReadBasic'],
};

/** A registered client of its own, a fresh signed-in account, and arctic's client for both. */
function setup(provider: FakeProviderId) {
  const n = ++seq;
  const clientId = `daybook-${provider}-${n}`;
  const clientSecret = `secret-${n}`;
  const redirectUri = `http://127.0.0.1:5173/accounts/${provider}/login/callback/`;
  fake.registerClient(provider, { clientId, clientSecret, redirectUris: [redirectUri] });
  const account = { sub: `${provider}-sub-${n}`, email: `user${n}@example.com`, name: `User ${n}` };
  fake.setAccount(provider, account);
  const client = new OAuth2Client(clientId, clientSecret, redirectUri);
  const endpoints = fake.endpoints[provider];

  /** The consent address Daybook would send the browser to. */
  function authorizeUrl(extra: Record<string, string> = {}, scopes = SCOPES[provider]) {
    const state = generateState();
    const verifier = generateCodeVerifier();
    const url = client.createAuthorizationURLWithPKCE(
      endpoints.authorizeUrl,
      state,
      CodeChallengeMethod.S256,
      verifier,
      scopes,
    );
    const defaults: Record<string, string> = provider === 'google' ? { access_type: 'offline', prompt: 'consent' } : {};
    for (const [key, value] of Object.entries({ ...defaults, ...extra })) url.searchParams.set(key, value);
    return { url: url.href, state, verifier };
  }

  /** Consent, then the code from the redirect back. */
  async function code(extra: Record<string, string> = {}, scopes = SCOPES[provider]) {
    const request = authorizeUrl(extra, scopes);
    const back = new URL(await fake.approve(request.url));
    expect(back.origin + back.pathname).toBe(redirectUri);
    expect(back.searchParams.get('state')).toBe(request.state);
    const value = back.searchParams.get('code');
    if (!value) throw new Error(`no code in ${back.href}`);
    return { ...request, code: value };
  }

  async function connect(extra: Record<string, string> = {}, scopes = SCOPES[provider]) {
    const c = await code(extra, scopes);
    return client.validateAuthorizationCode(endpoints.tokenUrl, c.code, c.verifier);
  }

  return { clientId, clientSecret, redirectUri, account, client, endpoints, authorizeUrl, code, connect };
}

async function oauthError(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => {
      throw new Error('expected an OAuth error');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OAuth2RequestError);
  return (err as OAuth2RequestError).code;
}

function claims(tokens: OAuth2Tokens): Record<string, unknown> {
  const parts = tokens.idToken().split('.');
  expect(parts).toHaveLength(3);
  return JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** An API call with `accessToken`, for the status. */
async function apiStatus(provider: FakeProviderId, accessToken: string): Promise<number> {
  const path = provider === 'google' ? '/calendars/primary' : '/me/calendar';
  const res = await fetch(`${fake.endpoints[provider].apiUrl}${path}`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  await res.body?.cancel();
  return res.status;
}

describe('authorization endpoint', () => {
  it('shows a consent page with the account, the scopes, and Allow and Deny in a form', async () => {
    const s = setup('google');
    const res = await fetch(s.authorizeUrl().url);
    const page = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page).toContain('Daybook wants to read your calendars');
    expect(page).toContain(s.account.email);
    expect(page).toContain('See and download any calendar you can access using your Google Calendar');
    expect(page).toMatch(/<form method="post"/);
    expect(page).toMatch(/<button type="submit" name="decision" value="allow">Allow<\/button>/);
    expect(page).toMatch(/<button type="submit" name="decision" value="deny">Deny<\/button>/);
  });

  it('sends the browser back with access_denied and the state when the user denies', async () => {
    const s = setup('microsoft');
    const request = s.authorizeUrl();
    const back = new URL(await fake.deny(request.url));
    expect(back.origin + back.pathname).toBe(s.redirectUri);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(request.state);
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('shows an error page, never a redirect, for an unknown client or redirect address', async () => {
    const s = setup('google');
    const wrongRedirect = new URL(s.authorizeUrl().url);
    wrongRedirect.searchParams.set('redirect_uri', 'https://attacker.example/callback');
    await expect(fake.approve(wrongRedirect.href)).rejects.toThrow(/redirect_uri_mismatch/);
    const wrongClient = new URL(s.authorizeUrl().url);
    wrongClient.searchParams.set('client_id', 'nobody');
    const res = await fetch(wrongClient, { redirect: 'manual' });
    expect(res.status).toBe(401);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_client');
  });

  it('redirects back with an error for a missing PKCE challenge, a plain one, no state or an unknown scope', async () => {
    const s = setup('microsoft');
    const cases: [(u: URL) => void, string][] = [
      [(u) => u.searchParams.delete('code_challenge'), 'invalid_request'],
      [(u) => u.searchParams.set('code_challenge_method', 'plain'), 'invalid_request'],
      [(u) => u.searchParams.set('scope', 'Calendars.ReadBasic Mail.Send'), 'invalid_scope'],
      [(u) => u.searchParams.set('response_type', 'token'), 'unsupported_response_type'],
      [(u) => u.searchParams.delete('state'), 'invalid_request'],
    ];
    for (const [change, error] of cases) {
      const request = s.authorizeUrl();
      const url = new URL(request.url);
      change(url);
      const back = new URL(await fake.approve(url.href));
      expect(back.searchParams.get('error')).toBe(error);
      expect(back.searchParams.get('code')).toBeNull();
      if (url.searchParams.has('state')) expect(back.searchParams.get('state')).toBe(request.state);
    }
  });

  it('does not accept the consent form twice', async () => {
    const s = setup('google');
    const page = await (await fetch(s.authorizeUrl().url)).text();
    const request = /name="request" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const post = () =>
      fetch(s.endpoints.authorizeUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ request, decision: 'allow' }),
      });
    expect((await post()).status).toBe(303);
    expect((await post()).status).toBe(400);
  });
});

describe('token endpoint', () => {
  it('runs the code flow with arctic: tokens, an id token for the account, and an access token the API takes', async () => {
    const s = setup('google');
    const tokens = await s.connect();
    expect(tokens.tokenType()).toBe('Bearer');
    expect(tokens.accessTokenExpiresInSeconds()).toBe(3599);
    expect(tokens.hasRefreshToken()).toBe(true);
    expect(tokens.scopes()).toContain('https://www.googleapis.com/auth/calendar.readonly');
    expect(claims(tokens)).toMatchObject({
      iss: 'https://accounts.google.com',
      aud: s.clientId,
      sub: s.account.sub,
      email: s.account.email,
    });
    expect(await apiStatus('google', tokens.accessToken())).toBe(200);
    expect(fake.tokenRequests.at(-1)).toMatchObject({
      provider: 'google',
      grantType: 'authorization_code',
      clientId: s.clientId,
      status: 200,
    });
  });

  it('gives Microsoft id tokens the object id and a refresh token only for offline_access', async () => {
    const s = setup('microsoft');
    const tokens = await s.connect();
    expect(claims(tokens)).toMatchObject({ sub: s.account.sub, aud: s.clientId, email: s.account.email });
    expect(claims(tokens).oid).toMatch(/^[0-9a-f-]{36}$/);
    expect(tokens.hasRefreshToken()).toBe(true);
    const online = await s.connect({}, ['openid', 'Calendars.ReadBasic']);
    expect(online.hasRefreshToken()).toBe(false);
  });

  it('refuses a wrong PKCE verifier, a reused code, another redirect address and a wrong secret', async () => {
    const s = setup('google');
    const wrongVerifier = await s.code();
    expect(
      await oauthError(
        s.client.validateAuthorizationCode(s.endpoints.tokenUrl, wrongVerifier.code, generateCodeVerifier()),
      ),
    ).toBe('invalid_grant');

    const used = await s.code();
    await s.client.validateAuthorizationCode(s.endpoints.tokenUrl, used.code, used.verifier);
    expect(await oauthError(s.client.validateAuthorizationCode(s.endpoints.tokenUrl, used.code, used.verifier))).toBe(
      'invalid_grant',
    );

    const elsewhere = await s.code();
    const other = new OAuth2Client(s.clientId, s.clientSecret, 'http://127.0.0.1:5173/elsewhere');
    expect(
      await oauthError(other.validateAuthorizationCode(s.endpoints.tokenUrl, elsewhere.code, elsewhere.verifier)),
    ).toBe('invalid_grant');

    const badSecret = await s.code();
    const impostor = new OAuth2Client(s.clientId, 'not-the-secret', s.redirectUri);
    expect(
      await oauthError(impostor.validateAuthorizationCode(s.endpoints.tokenUrl, badSecret.code, badSecret.verifier)),
    ).toBe('invalid_client');
  });

  it('lets codes expire after ten minutes and access tokens after their lifetime', async () => {
    const s = setup('microsoft');
    const late = await s.code();
    fake.advanceClock(601);
    expect(await oauthError(s.client.validateAuthorizationCode(s.endpoints.tokenUrl, late.code, late.verifier))).toBe(
      'invalid_grant',
    );

    fake.setAccessTokenTtl(60, 'microsoft');
    try {
      const tokens = await s.connect();
      expect(tokens.accessTokenExpiresInSeconds()).toBe(60);
      expect(await apiStatus('microsoft', tokens.accessToken())).toBe(200);
      fake.advanceClock(61);
      expect(await apiStatus('microsoft', tokens.accessToken())).toBe(401);
    } finally {
      fake.setAccessTokenTtl(3599, 'microsoft');
    }
  });

  it('rotates Microsoft refresh tokens: the old one stops working', async () => {
    const s = setup('microsoft');
    const first = await s.connect();
    const second = await s.client.refreshAccessToken(s.endpoints.tokenUrl, first.refreshToken(), []);
    expect(second.refreshToken()).not.toBe(first.refreshToken());
    expect(second.accessToken()).not.toBe(first.accessToken());
    expect(await apiStatus('microsoft', second.accessToken())).toBe(200);
    expect(await oauthError(s.client.refreshAccessToken(s.endpoints.tokenUrl, first.refreshToken(), []))).toBe(
      'invalid_grant',
    );
    const third = await s.client.refreshAccessToken(s.endpoints.tokenUrl, second.refreshToken(), []);
    expect(third.hasRefreshToken()).toBe(true);
  });

  it('keeps the Google refresh token: refreshes return none and the same one works again', async () => {
    const s = setup('google');
    const first = await s.connect();
    const second = await s.client.refreshAccessToken(s.endpoints.tokenUrl, first.refreshToken(), []);
    expect(second.hasRefreshToken()).toBe(false);
    expect(await apiStatus('google', second.accessToken())).toBe(200);
    const third = await s.client.refreshAccessToken(s.endpoints.tokenUrl, first.refreshToken(), []);
    expect(third.accessToken()).not.toBe(second.accessToken());
    // A wider scope than was granted is refused.
    expect(
      await oauthError(
        s.client.refreshAccessToken(s.endpoints.tokenUrl, first.refreshToken(), [
          'https://www.googleapis.com/auth/calendar',
        ]),
      ),
    ).toBe('invalid_scope');
  });

  it('gives Google refresh tokens only offline, and again only with prompt=consent', async () => {
    const s = setup('google');
    expect((await s.connect({ access_type: 'online', prompt: '' })).hasRefreshToken()).toBe(false);
    expect((await s.connect({ prompt: '' })).hasRefreshToken()).toBe(true);
    expect((await s.connect({ prompt: '' })).hasRefreshToken()).toBe(false);
    expect((await s.connect({ prompt: 'consent' })).hasRefreshToken()).toBe(true);
  });

  it('answers invalid_grant to refreshes and 401 to API calls once the user removed access', async () => {
    const s = setup('microsoft');
    const tokens = await s.connect();
    fake.revokeAllGrants('microsoft');
    expect(await oauthError(s.client.refreshAccessToken(s.endpoints.tokenUrl, tokens.refreshToken(), []))).toBe(
      'invalid_grant',
    );
    expect(await apiStatus('microsoft', tokens.accessToken())).toBe(401);
  });

  it('fails the next token requests on demand, then answers again', async () => {
    const s = setup('google');
    const tokens = await s.connect();
    fake.failNextTokenRequests(1, 503, 'google');
    const err = await s.client.refreshAccessToken(s.endpoints.tokenUrl, tokens.refreshToken(), []).catch((e) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as UnexpectedResponseError).status).toBe(503);
    expect(fake.tokenRequests.at(-1)).toMatchObject({ grantType: 'refresh_token', status: 503 });
    await s.client.refreshAccessToken(s.endpoints.tokenUrl, tokens.refreshToken(), []);
    expect(fake.tokenRequests.at(-1)).toMatchObject({ grantType: 'refresh_token', status: 200 });
  });

  it('holds token requests so a test can see how many run at once', async () => {
    const s = setup('google');
    const tokens = await s.connect();
    const arrived = fake.tokenRequests.length;
    const release = fake.holdTokenRequests();
    const refreshes = [1, 2].map(() => s.client.refreshAccessToken(s.endpoints.tokenUrl, tokens.refreshToken(), []));
    await expect.poll(() => fake.tokenRequests.length - arrived).toBe(2);
    expect(fake.tokenRequests.slice(arrived).every((r) => r.status === null)).toBe(true);
    release();
    await Promise.all(refreshes);
    expect(fake.peakConcurrentTokenRequests).toBeGreaterThanOrEqual(2);
  });
});

describe('Google revocation endpoint', () => {
  it('revokes the grant behind a refresh token, and refuses it once revoked', async () => {
    const s = setup('google');
    const tokens = await s.connect();
    await s.client.revokeToken(fake.endpoints.google.revokeUrl, tokens.refreshToken());
    expect(fake.revoked.at(-1)).toEqual({
      provider: 'google',
      token: tokens.refreshToken(),
      tokenType: 'refresh_token',
      clientId: s.clientId,
      sub: s.account.sub,
    });
    expect(await oauthError(s.client.refreshAccessToken(s.endpoints.tokenUrl, tokens.refreshToken(), []))).toBe(
      'invalid_grant',
    );
    expect(await apiStatus('google', tokens.accessToken())).toBe(401);
    expect(await oauthError(s.client.revokeToken(fake.endpoints.google.revokeUrl, tokens.refreshToken()))).toBe(
      'invalid_token',
    );
  });
});

describe('Google Calendar API', () => {
  const get = async (accessToken: string, path: string) => {
    const res = await fetch(`${fake.endpoints.google.apiUrl}${path}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('lists events overlapping timeMin and timeMax, page by page, without cancelled ones unless asked', async () => {
    setup('google');
    const { accessToken } = fake.createGrant('google');
    fake.addGoogleEvents('primary', [
      {
        id: 'a',
        summary: 'Ends at timeMin',
        start: { dateTime: '2026-11-24T08:00:00Z' },
        end: { dateTime: '2026-11-24T09:00:00Z' },
      },
      {
        id: 'b',
        summary: 'Straddles',
        start: { dateTime: '2026-11-24T08:30:00Z' },
        end: { dateTime: '2026-11-24T09:30:00Z' },
      },
      {
        id: 'c',
        summary: 'Inside',
        start: { dateTime: '2026-11-24T10:00:00Z' },
        end: { dateTime: '2026-11-24T11:00:00Z' },
      },
      {
        id: 'd',
        summary: 'Cancelled',
        status: 'cancelled',
        start: { dateTime: '2026-11-24T10:00:00Z' },
        end: { dateTime: '2026-11-24T11:00:00Z' },
      },
      {
        id: 'e',
        summary: 'Starts at timeMax',
        start: { dateTime: '2026-11-24T12:00:00Z' },
        end: { dateTime: '2026-11-24T13:00:00Z' },
      },
    ]);
    const query = 'timeMin=2026-11-24T09:00:00Z&timeMax=2026-11-24T12:00:00Z&singleEvents=true&orderBy=startTime';
    const first = await get(accessToken, `/calendars/primary/events?${query}&maxResults=1&timeZone=Europe/Berlin`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ kind: 'calendar#events', timeZone: 'UTC' });
    expect(first.body.items).toMatchObject([
      { id: 'b', status: 'confirmed', start: { dateTime: '2026-11-24T09:30:00+01:00' } },
    ]);
    const next = first.body.nextPageToken as string;
    const second = await get(accessToken, `/calendars/primary/events?${query}&maxResults=1&pageToken=${next}`);
    expect(second.body.items).toMatchObject([{ id: 'c', start: { dateTime: '2026-11-24T10:00:00Z' } }]);
    expect(second.body.nextPageToken).toBeUndefined();

    const deleted = await get(accessToken, `/calendars/primary/events?${query}&showDeleted=true`);
    expect((deleted.body.items as { id: string }[]).map((e) => e.id)).toEqual(['b', 'c', 'd']);

    expect((await get(accessToken, '/calendars/primary/events?orderBy=startTime')).status).toBe(400);
    expect((await get(accessToken, '/calendars/primary/events?timeMin=2026-11-24')).status).toBe(400);
  });

  it('lists calendars, hides hidden ones, and answers 401 in Google’s shape', async () => {
    const s = setup('google');
    const { accessToken } = fake.createGrant('google');
    fake.addGoogleCalendar({ id: 'shown@group.calendar.google.com', summary: 'Shown', selected: true });
    fake.addGoogleCalendar({ id: 'unticked@group.calendar.google.com', summary: 'Unticked' });
    fake.addGoogleCalendar({ id: 'hidden@group.calendar.google.com', summary: 'Hidden', hidden: true });
    const list = await get(accessToken, '/users/me/calendarList');
    expect(list.body.items).toEqual([
      expect.objectContaining({ id: s.account.email, primary: true, selected: true, accessRole: 'owner' }),
      expect.objectContaining({ id: 'shown@group.calendar.google.com', selected: true }),
      expect.not.objectContaining({ selected: expect.anything() }),
    ]);
    expect(await get(accessToken, '/calendars/primary')).toMatchObject({
      status: 200,
      body: { id: s.account.email, summary: s.account.email, timeZone: 'UTC' },
    });
    expect(await get('ya29.nope', '/users/me/calendarList')).toMatchObject({
      status: 401,
      body: { error: { code: 401, status: 'UNAUTHENTICATED' } },
    });
  });
});

describe('Microsoft Graph API', () => {
  const get = async (accessToken: string, path: string, prefer?: string) => {
    const res = await fetch(`${fake.endpoints.microsoft.apiUrl}${path}`, {
      headers: { authorization: `Bearer ${accessToken}`, ...(prefer ? { prefer } : {}) },
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  it('refuses GET /me without User.Read, and gives the default calendar with its owner', async () => {
    const s = setup('microsoft');
    const basic = fake.createGrant('microsoft', { scopes: ['Calendars.ReadBasic'] });
    expect((await get(basic.accessToken, '/me')).status).toBe(403);
    expect(await get(basic.accessToken, '/me/calendar')).toMatchObject({
      status: 200,
      body: { name: 'Calendar', owner: { name: s.account.name, address: s.account.email } },
    });
    const withUser = fake.createGrant('microsoft', { scopes: ['User.Read', 'Calendars.ReadBasic'] });
    expect((await get(withUser.accessToken, '/me')).body).toMatchObject({ mail: s.account.email });
    expect(await get('not-a-token', '/me/calendar')).toMatchObject({
      status: 401,
      body: { error: { code: 'InvalidAuthenticationToken' } },
    });
  });

  it('gives calendarView pages by absolute nextLink, in the Prefer zone, all-day events at its midnights', async () => {
    setup('microsoft');
    const { accessToken } = fake.createGrant('microsoft');
    fake.addMicrosoftEvents([
      {
        id: 'allday',
        subject: 'Day off',
        isAllDay: true,
        start: { dateTime: '2026-11-24T00:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-11-25T00:00:00', timeZone: 'UTC' },
      },
      {
        id: 'timed',
        subject: 'Review',
        start: { dateTime: '2026-11-24T18:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-11-24T19:00:00', timeZone: 'UTC' },
      },
    ]);
    const path =
      '/me/calendarView?startDateTime=2026-11-24T08:00:00Z&endDateTime=2026-11-25T08:00:00Z&$select=subject,start,isAllDay&$top=1&$orderby=start/dateTime';
    const first = await get(accessToken, path, 'outlook.timezone="Pacific Standard Time"');
    expect(first.status).toBe(200);
    expect(first.headers.get('preference-applied')).toBe('outlook.timezone="Pacific Standard Time"');
    expect(first.body.value).toEqual([
      {
        '@odata.etag': expect.any(String),
        id: 'allday',
        subject: 'Day off',
        isAllDay: true,
        start: { dateTime: '2026-11-24T00:00:00.0000000', timeZone: 'Pacific Standard Time' },
      },
    ]);
    const nextLink = first.body['@odata.nextLink'] as string;
    expect(nextLink.startsWith(`${fake.endpoints.microsoft.apiUrl}/me/calendarView?`)).toBe(true);
    const second = await get(accessToken, nextLink.slice(fake.endpoints.microsoft.apiUrl.length));
    expect(second.body.value).toMatchObject([
      { id: 'timed', start: { dateTime: '2026-11-24T18:00:00.0000000', timeZone: 'UTC' } },
    ]);
    expect(second.body['@odata.nextLink']).toBeUndefined();

    expect((await get(accessToken, '/me/calendarView?startDateTime=2026-11-24T08:00:00Z')).status).toBe(400);
    expect((await get(accessToken, `${path.replace('subject,', 'subjct,')}`)).status).toBe(400);
  });
});
