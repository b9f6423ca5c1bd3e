// The user's own data through the real app: the export (every table, no secrets, paged, limited)
// and deleting the account (password, last administrator, calendar grants revoked, every row gone,
// sessions and chat sockets ended, the address free to sign up again).
import { ACCOUNT_DATA_MESSAGES, type TAccountExport, ZAccountExport } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CalendarHost,
  type FakeCalendarProviders,
  registerDaybook,
  startCalendarHost,
  startFakeCalendarProviders,
} from '../../../../../tests/helpers/fake-calendar.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { PASSWORD, randomIp, signedInUser, signUp } from '../../test/factories.ts';
import { Browser, TEST_SECRET, type TestApp } from '../../test/test-app.ts';
import { type ChatApp, captureLogs, connect, startChatApp, type } from '../chat/chat.test-client.ts';

const API = '/_allauth/browser/v1';
const PUBLIC = 'http://daybook.test';
const ICS_PATH = '/private/cal-s3cret-7f3a9c/family.ics';
const ICS = `BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Test//EN\r
X-WR-CALNAME:Family\r
BEGIN:VEVENT\r
UID:family-1\r
DTSTAMP:20260101T000000Z\r
DTSTART:20260101T170000Z\r
DTEND:20260101T180000Z\r
SUMMARY:Swimming lesson\r
END:VEVENT\r
END:VCALENDAR\r
`;

let chatApp: ChatApp;
let t: TestApp;
let providers: FakeCalendarProviders;
let icsHost: CalendarHost;
let logs: ReturnType<typeof captureLogs>;

beforeAll(async () => {
  providers = await startFakeCalendarProviders();
  icsHost = await startCalendarHost({ [ICS_PATH]: ICS });
  chatApp = await startChatApp(
    { ...registerDaybook(providers, PUBLIC), FETCH_ALLOW: '127.0.0.1', LOG_LEVEL: 'debug', LOG_FORMAT: 'json' },
    { calendar: { endpoints: providers.endpoints, cacheMs: 0 } },
  );
  t = chatApp.t;
  chatApp.fake.onChat(() => ({ text: 'Noted.' }));
  chatApp.fake.onJson(() => ({ text: '{"operations":[]}' }));
  logs = captureLogs(t.app);
});

afterAll(async () => {
  await chatApp?.close();
  await providers?.close();
  await icsHost?.close();
});

const prisma = () => t.database.db.prisma;

async function connectGoogle(browser: Browser, sub: string) {
  providers.setAccount('google', { sub, email: `${sub}@gmail.test`, name: sub });
  const start = await browser.request(
    'POST',
    `${API}/auth/provider/redirect`,
    new URLSearchParams({
      provider: 'google',
      process: 'connect',
      callback_url: '/accounts/3rdparty/',
      csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '',
    }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded' },
  );
  expect(start.statusCode).toBe(302);
  const back = new URL(await providers.approve(String(start.headers.location)));
  const landed = await browser.get(back.pathname + back.search);
  expect(landed.headers.location).toBe('/accounts/3rdparty/?connected=google');
}

async function addIcs(browser: Browser) {
  const res = await browser.request(
    'POST',
    '/accounts/3rdparty/ics/',
    new URLSearchParams({
      url: icsHost.url(ICS_PATH),
      csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '',
    }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded' },
  );
  expect(res.statusCode).toBe(303);
}

/** A user with a row in every table the export covers. */
async function richUser() {
  const user = await signedInUser(t);
  const { browser, userId } = user;
  expect(
    (await browser.patch('/api/users/me/', { time_zone: 'Europe/Lisbon', daily_message_time: '06:30' })).statusCode,
  ).toBe(200);
  const kept = await browser.post('/api/memories/', { key: 'home city', data: 'Lisbon', memory_type: 'location' });
  expect(kept.statusCode).toBe(201);
  const gone = await browser.post('/api/memories/', { key: 'old job', data: 'Baker' });
  expect((await browser.delete(`/api/memories/${gone.json().id}/`, { reason: 'changed jobs' })).statusCode).toBe(204);
  const db = prisma();
  const ask = await db.chatMessage.create({
    data: { userId, authorType: 'human', messageType: 'message', rawText: 'Research e-bikes please' },
  });
  await db.chatMessage.create({
    data: { userId, authorType: 'assistant', messageType: 'markdown', rawText: 'On it.', replyToId: ask.id },
  });
  await db.chatMessage.create({
    data: { userId, channel: 'onboarding', authorType: 'human', messageType: 'message', rawText: 'I am Maya' },
  });
  const daily = await db.dailyMessage.create({
    data: {
      userId,
      localDate: new Date('2026-03-02T00:00:00Z'),
      status: 'ready',
      messageText: '# Good morning\nSunny in Lisbon.',
      deliveredAt: new Date('2026-03-02T07:01:00Z'),
    },
  });
  const dailyResearch = await db.research.create({
    data: {
      userId,
      query: 'cycling in Lisbon',
      status: 'done',
      origin: 'daily',
      dailyMessageId: daily.id,
      introduction: 'Intro.',
      body: 'Hills [1].',
      conclusion: 'Go.',
      sources: [{ url: 'https://example.org/hills', title: 'Hills' }],
    },
  });
  const chatResearch = await db.research.create({
    data: { userId, query: 'e-bikes', status: 'queued', requestMessageId: ask.id },
  });
  await connectGoogle(browser, `g-${userId}`);
  await addIcs(browser);
  // What the model spent for them (model.usage.ts writes these rows as calls end).
  await t.database.db.query(
    `INSERT INTO model_usage (user_id, day, purpose, calls, prompt_tokens, cached_tokens, completion_tokens)
     VALUES ($1, '2026-03-02', 'chat', 3, 4200, 3100, 380), ($1, '2026-03-02', 'daily', 1, 900, 0, 210)`,
    [userId],
  );
  return {
    ...user,
    ids: {
      kept: kept.json().id,
      gone: gone.json().id,
      ask: ask.id,
      daily: daily.id,
      dailyResearch: dailyResearch.id,
      chatResearch: chatResearch.id,
    },
  };
}

async function exportOf(browser: Browser) {
  const res = await browser.get('/api/users/me/export/');
  expect(res.statusCode).toBe(200);
  return { res, doc: ZAccountExport.parse(res.json()) };
}

/** Every row of `userId` (with the address `email`) in the tables that hold users' data. */
async function rowsOf(userId: number, email = '') {
  const [row] = await t.database.db.query<Record<string, string>>(
    `SELECT
      (SELECT count(*) FROM users WHERE id = $1) AS users,
      (SELECT count(*) FROM email_addresses WHERE user_id = $1) AS emails,
      (SELECT count(*) FROM sessions WHERE user_id = $1) AS sessions,
      (SELECT count(*) FROM memories WHERE user_id = $1) AS memories,
      (SELECT count(*) FROM chat_messages WHERE user_id = $1) AS chat,
      (SELECT count(*) FROM researches WHERE user_id = $1) AS researches,
      (SELECT count(*) FROM daily_messages WHERE user_id = $1) AS daily,
      (SELECT count(*) FROM calendar_connections WHERE user_id = $1) AS calendars,
      (SELECT count(*) FROM calendar_oauth_states WHERE user_id = $1) AS oauth_states,
      (SELECT count(*) FROM model_usage WHERE user_id = $1) AS model_usage,
      (SELECT count(*) FROM invite_uses WHERE user_id = $1) AS invite_uses,
      (SELECT count(*) FROM rate_limit_hits WHERE key LIKE '%:user:' || $1::text) AS rate_limits,
      (SELECT count(*) FROM rate_limit_hits WHERE key LIKE '%:' || $2::text) AS address_limits,
      (SELECT count(*) FROM realtime_events WHERE payload ->> 'userId' = $1::text) AS realtime`,
    [userId, email],
  );
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
}

describe('GET /api/users/me/export/', () => {
  let user: Awaited<ReturnType<typeof richUser>>;
  let doc: TAccountExport;
  let text = '';

  beforeAll(async () => {
    user = await richUser();
    const { res, doc: parsed } = await exportOf(user.browser);
    doc = parsed;
    text = res.body;
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="daybook-export-\d{4}-\d{2}-\d{2}\.json"$/,
    );
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('names its format and version and when it was made', () => {
    expect(doc.format).toBe('daybook-export');
    expect(doc.version).toBe(1);
    expect(Math.abs(Date.parse(doc.exported_at) - Date.now())).toBeLessThan(60_000);
  });

  it('has the account: addresses, settings with the daily message ones, time zone, dates', () => {
    expect(doc.account).toMatchObject({
      id: user.userId,
      email: user.email,
      email_addresses: [{ email: user.email, primary: true, verified: true }],
      is_admin: false,
      has_usable_password: true,
      settings: {
        time_zone: 'Europe/Lisbon',
        learn_from_chats: true,
        location: null,
        temperature_unit: 'auto',
        daily_message: { paused: false, time: '06:30', email: true },
      },
    });
    expect(doc.account.last_sign_in).not.toBeNull();
    expect(Date.parse(doc.account.created)).toBeLessThanOrEqual(Date.now());
  });

  it('has memories, the deleted (restorable) one marked as such', () => {
    expect(doc.memories.map((m) => [m.id, m.key, m.deleted_at !== null, m.deleted_reason])).toEqual([
      [user.ids.kept, 'home city', false, null],
      [user.ids.gone, 'old job', true, 'changed jobs'],
    ]);
    expect(doc.memories[0]).toMatchObject({ data: 'Lisbon', memory_type: 'location', source: 'user' });
  });

  it('has the chat messages of both channels, oldest first', () => {
    expect(doc.chat_messages.map((m) => [m.channel, m.author_type, m.raw_text])).toEqual([
      ['chat', 'human', 'Research e-bikes please'],
      ['chat', 'assistant', 'On it.'],
      ['onboarding', 'human', 'I am Maya'],
    ]);
    expect(doc.chat_messages[1]?.reply_to_id).toBe(user.ids.ask);
  });

  it('has daily messages with their research reports, and every research with its sources', () => {
    expect(doc.daily_messages).toEqual([
      expect.objectContaining({
        id: user.ids.daily,
        delivery_date: '2026-03-02',
        status: 'ready',
        message_text: '# Good morning\nSunny in Lisbon.',
        delivered: '2026-03-02T07:01:00.000Z',
        research_ids: [user.ids.dailyResearch],
      }),
    ]);
    expect(doc.researches).toEqual([
      expect.objectContaining({
        id: user.ids.dailyResearch,
        query: 'cycling in Lisbon',
        origin: 'daily',
        daily_message_id: user.ids.daily,
        body: 'Hills [1].',
        sources: [{ url: 'https://example.org/hills', title: 'Hills' }],
      }),
      expect.objectContaining({ id: user.ids.chatResearch, status: 'queued', request_message_id: user.ids.ask }),
    ]);
  });

  it('has the calendar connections without tokens, ICS addresses or anything from the secret box', async () => {
    expect(doc.calendar_connections).toEqual([
      expect.objectContaining({
        provider: 'google',
        provider_name: 'Google',
        name: `g-${user.userId}@gmail.test`,
        status: 'connected',
      }),
      expect.objectContaining({ provider: 'ics', provider_name: 'ICS calendar', name: 'Family', status: 'connected' }),
    ]);
    const box = createSecretBox([TEST_SECRET], 'calendar connections');
    const rows = await prisma().calendarConnection.findMany({ where: { userId: user.userId }, orderBy: { id: 'asc' } });
    const google = box.openJson<{ access: string; refresh?: string }>(rows[0]?.secret ?? '');
    expect(google.access.length).toBeGreaterThan(10);
    expect(google.refresh?.length).toBeGreaterThan(10);
    for (const secret of [google.access, google.refresh ?? '', rows[0]?.secret, rows[1]?.secret, rows[1]?.uid]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('cal-s3cret-7f3a9c');
    expect(text).not.toContain(icsHost.url(ICS_PATH));
    const hash = (await prisma().user.findUniqueOrThrow({ where: { id: user.userId } })).passwordHash ?? '';
    expect(text).not.toContain(hash);
    expect(text).not.toMatch(/argon2|password_hash|"secret"|"uid"/);
  });

  it('has what the model spent for the user, by day and purpose', () => {
    expect(doc.model_usage).toEqual([
      {
        day: '2026-03-02',
        purpose: 'chat',
        calls: 3,
        prompt_tokens: 4200,
        cached_tokens: 3100,
        completion_tokens: 380,
      },
      { day: '2026-03-02', purpose: 'daily', calls: 1, prompt_tokens: 900, cached_tokens: 0, completion_tokens: 210 },
    ]);
  });

  it("holds only the user's own rows", async () => {
    const other = await signedInUser(t);
    const { doc: theirs } = await exportOf(other.browser);
    expect(theirs.account.email).toBe(other.email);
    expect([
      theirs.memories,
      theirs.chat_messages,
      theirs.daily_messages,
      theirs.researches,
      theirs.calendar_connections,
      theirs.model_usage,
    ]).toEqual([[], [], [], [], [], []]);
  });

  it('answers 401 without a session', async () => {
    const res = await new Browser(t.app).get('/api/users/me/export/');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Authentication credentials were not provided.', code: 'unauthorized' });
  });

  it('allows 5 downloads an hour, then 429 in the error shape', async () => {
    const { browser } = await signedInUser(t);
    for (let i = 0; i < 5; i++) expect((await browser.get('/api/users/me/export/')).statusCode).toBe(200);
    const limited = await browser.get('/api/users/me/export/');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: ACCOUNT_DATA_MESSAGES.exportLimit, code: 'rate_limited' });
  });

  it('pages through a long history: 6,000 chat messages and 1,200 memories, all in id order', async () => {
    const { browser, userId } = await signedInUser(t);
    const db = prisma();
    await db.chatMessage.createMany({
      data: Array.from({ length: 6000 }, (_, i) => ({
        userId,
        authorType: i % 2 ? 'assistant' : 'human',
        messageType: 'message',
        rawText: `message ${i} ${'lorem ipsum '.repeat(10)}`,
      })),
    });
    await db.memory.createMany({
      data: Array.from({ length: 1200 }, (_, i) => ({ userId, key: `fact ${i}`, data: `detail ${i}` })),
    });
    const started = performance.now();
    const res = await browser.get('/api/users/me/export/');
    const ms = performance.now() - started;
    expect(res.statusCode).toBe(200);
    const parsed = ZAccountExport.parse(res.json());
    expect(parsed.chat_messages).toHaveLength(6000);
    expect(parsed.memories).toHaveLength(1200);
    expect(parsed.chat_messages.map((m) => m.raw_text.split(' ')[1])).toEqual(
      Array.from({ length: 6000 }, (_, i) => String(i)),
    );
    console.log(
      `export of 6,000 chat messages + 1,200 memories: ${Math.round(ms)} ms, ${(res.body.length / 1e6).toFixed(2)} MB`,
    );
  });
});

describe('POST /api/users/me/delete/', () => {
  it('answers 401 without a session', async () => {
    const res = await new Browser(t.app).post('/api/users/me/delete/', { password: PASSWORD });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a missing or wrong password with a field error, and counts wrong ones like logins', async () => {
    const { browser, userId } = await signedInUser(t);
    const missing = await browser.post('/api/users/me/delete/', {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      error: 'Some fields are invalid.',
      code: 'validation_error',
      field_errors: { password: [ACCOUNT_DATA_MESSAGES.passwordRequired] },
    });
    for (let i = 0; i < 5; i++) {
      const wrong = await browser.post('/api/users/me/delete/', { password: `not it ${i}` });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json()).toEqual({
        error: ACCOUNT_DATA_MESSAGES.wrongPassword,
        code: 'validation_error',
        field_errors: { password: [ACCOUNT_DATA_MESSAGES.wrongPassword] },
      });
    }
    // The sixth try is refused before the password is looked at, even the right one.
    const limited = await browser.post('/api/users/me/delete/', { password: PASSWORD });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toBe(ACCOUNT_DATA_MESSAGES.tooManyAttempts);
    expect((await rowsOf(userId)).users).toBe(1);
    expect((await browser.get('/api/users/me/')).statusCode).toBe(200);
  });

  it('refuses an account without a usable password, with a clear message', async () => {
    const { browser, userId } = await signedInUser(t);
    await prisma().user.update({ where: { id: userId }, data: { passwordHash: null } });
    const res = await browser.post('/api/users/me/delete/', { password: PASSWORD });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: ACCOUNT_DATA_MESSAGES.noPassword, code: 'forbidden' });
    expect((await rowsOf(userId)).users).toBe(1);
  });

  it('refuses the only active administrator while other accounts exist, until another is one', async () => {
    const admin = await signedInUser(t);
    const db = prisma();
    // Other tests' administrators would count: this one is the only one for now.
    const others = await db.user.findMany({ where: { isAdmin: true }, select: { id: true } });
    await db.user.updateMany({ where: { isAdmin: true }, data: { isAdmin: false } });
    try {
      await db.user.update({ where: { id: admin.userId }, data: { isAdmin: true } });
      const refused = await admin.browser.post('/api/users/me/delete/', { password: PASSWORD });
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toEqual({ error: ACCOUNT_DATA_MESSAGES.lastAdmin, code: 'conflict' });
      expect((await rowsOf(admin.userId)).users).toBe(1);

      const second = await signedInUser(t);
      await db.user.update({ where: { id: second.userId }, data: { isAdmin: true } });
      expect((await admin.browser.post('/api/users/me/delete/', { password: PASSWORD })).statusCode).toBe(200);
      expect((await rowsOf(admin.userId)).users).toBe(0);
    } finally {
      await db.user.updateMany({ where: { id: { in: others.map((o) => o.id) } }, data: { isAdmin: true } });
    }
  });

  it('deletes everything of the user, revokes Google, ends sessions and sockets; others keep theirs', async () => {
    const user = await richUser();
    const other = await richUser();
    // A second device, an invite the user made (as an administrator would), an open chat.
    const laptop = new Browser(t.app, { ip: randomIp() });
    expect((await laptop.post(`${API}/auth/login`, { email: user.email, password: PASSWORD })).statusCode).toBe(200);
    const invite = await t.app.invites.create({ maxUses: 3, createdById: user.userId });
    const chat = await connect(chatApp.wsBase, user.browser);
    await chat.next(type('history'));
    const otherChat = await connect(chatApp.wsBase, other.browser);
    await otherChat.next(type('history'));
    await user.browser.post('/api/users/me/delete/', { password: 'wrong password' });
    // What other instances read of the chat (the PostgreSQL realtime bus keeps events 5 minutes), and
    // a limit keyed by the address (invites mailed to it).
    await t.database.db.query(`INSERT INTO realtime_events (origin, payload) VALUES ('other-instance', $1::jsonb)`, [
      JSON.stringify({ type: 'chat', userId: user.userId, channel: 'chat', event: { raw_text: 'my secret plans' } }),
    ]);
    await t.database.db.query(`INSERT INTO rate_limit_hits (key, at) VALUES ($1, now())`, [
      `invite_mail:to:${user.email}`,
    ]);
    const before = await rowsOf(user.userId, user.email);
    expect(before).toMatchObject({
      users: 1,
      memories: 2,
      chat: 3,
      researches: 2,
      daily: 1,
      calendars: 2,
      model_usage: 2,
      // The signup's own session, the signed-in browser's and the laptop's.
      sessions: 3,
      realtime: 1,
    });
    // The verification mail's and the invite mail's.
    expect(before.address_limits).toBe(2);
    const otherBefore = await rowsOf(other.userId);
    const revokedBefore = providers.revoked.length;
    logs.length = 0;

    const res = await user.browser.post('/api/users/me/delete/', { password: PASSWORD });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true });
    expect(res.cookies).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'sessionid', value: '' })]));

    expect(await rowsOf(user.userId, user.email)).toEqual({
      users: 0,
      emails: 0,
      sessions: 0,
      memories: 0,
      chat: 0,
      researches: 0,
      daily: 0,
      calendars: 0,
      oauth_states: 0,
      model_usage: 0,
      invite_uses: 0,
      rate_limits: 0,
      address_limits: 0,
      realtime: 0,
    });
    expect(await rowsOf(other.userId)).toEqual(otherBefore);
    expect(providers.revoked.slice(revokedBefore)).toEqual([
      expect.objectContaining({ provider: 'google', tokenType: 'refresh_token', sub: `g-${user.userId}` }),
    ]);
    // Invites they made stay for the other administrators.
    expect(await prisma().invite.findUnique({ where: { id: invite.invite.id } })).toMatchObject({ createdById: null });

    // Every session ended: this browser's, the laptop's, and the open chat socket.
    expect((await chat.closed).code).toBe(1008);
    expect((await user.browser.get('/api/users/me/')).statusCode).toBe(401);
    expect((await laptop.get('/api/users/me/')).statusCode).toBe(401);
    expect((await connect(chatApp.wsBase, laptop)).ws.readyState).not.toBe(1);
    // The other user's chat carries on.
    otherChat.say('still here');
    await otherChat.next(type('markdown'));
    otherChat.ws.close();

    // Signing in again fails like any unknown account.
    const login = await new Browser(t.app, { ip: randomIp() }).post(`${API}/auth/login`, {
      email: user.email,
      password: PASSWORD,
    });
    expect(login.statusCode).toBe(400);

    // Nothing personal in the logs of the deletion.
    const logged = JSON.stringify(logs);
    expect(logged).toContain('account deleted');
    for (const secret of [user.email, PASSWORD, 'wrong password', 'Lisbon']) expect(logged).not.toContain(secret);
  });

  it('leaves the address free: it signs up again with an invite as a new, empty account', async () => {
    const { browser, email, userId } = await signedInUser(t);
    expect((await browser.post('/api/users/me/delete/', { password: PASSWORD })).statusCode).toBe(200);
    const again = await signUp(t, email, 'a brand new passphrase');
    const me = await again.browser.get('/api/users/me/');
    expect(me.statusCode).toBe(200);
    expect(me.json().id).not.toBe(userId);
    expect(me.json().email).toBe(email);
    const { doc } = await exportOf(again.browser);
    expect([doc.memories, doc.chat_messages]).toEqual([[], []]);
  });
});
