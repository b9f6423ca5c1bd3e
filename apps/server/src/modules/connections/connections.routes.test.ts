// The Calendar Connections page as a browser without scripts uses it: pages, form posts answered by
// redirects, against the real app, a real database and calendars served over HTTP on 127.0.0.1.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CALENDAR_CONNECTIONS_MAX } from '@daybook/contracts';
import Fastify, { type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeCalendarProviders,
  registerDaybook,
  startFakeCalendarProviders,
  startCalendarHost as startIcsHost,
} from '../../../../../tests/helpers/fake-calendar.ts';
import { type FakeSite, startFakeSite } from '../../../../../tests/helpers/fake-site.ts';
import { REPO_ROOT } from '../../config.ts';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import type { CalendarService } from '../calendar/calendar.types.ts';
import connectionsRoutes from './connections.routes.ts';

const PAGE = '/accounts/3rdparty/';
const WEB_STYLES = path.join(REPO_ROOT, 'apps/web/src/styles');

const ics = (name: string) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Daybook tests//EN',
    `X-WR-CALNAME:${name}`,
    'BEGIN:VEVENT',
    'UID:standup-1@daybook.test',
    'DTSTAMP:20260101T000000Z',
    'DTSTART:20260105T090000Z',
    'DTEND:20260105T093000Z',
    'SUMMARY:Stand-up',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

/** Calendars as a calendar host serves them: /team.ics (any query), /evil.ics (a hostile name). */
const startCalendarHost = () =>
  startIcsHost({ '/team.ics': ics('Team Rota'), '/evil.ics': ics('<script>alert(1)</script>') });

/** The hidden CSRF field of the page's forms, as a browser would send it back. */
function formToken(html: string): string {
  const token = /name="csrfmiddlewaretoken" value="([^"]*)"/.exec(html)?.[1];
  if (!token) throw new Error('no csrfmiddlewaretoken field on the page');
  return token;
}

/** A form post as a browser without scripts sends it: urlencoded, the token only in the body. */
async function submit(
  t: TestApp,
  browser: Browser,
  url: string,
  fields: Record<string, string>,
): Promise<LightMyRequestResponse> {
  const res = await t.app.inject({
    method: 'POST',
    url,
    payload: new URLSearchParams(fields).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'http://daybook.test',
      cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    },
  });
  for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
    if (c.maxAge === 0 || c.value === '' || (c.expires && c.expires.getTime() < Date.now()))
      browser.cookies.delete(c.name);
    else browser.cookies.set(c.name, c.value);
  }
  return res;
}

/** Opens the page and posts its ICS form. */
async function addIcs(t: TestApp, browser: Browser, url: string, name = '') {
  const page = await browser.get(PAGE);
  return submit(t, browser, `${PAGE}ics/`, { csrfmiddlewaretoken: formToken(page.body), url, name });
}

const alertText = (html: string) => /role="alert"><p class="banner-message">([\s\S]*?)<\/p>/.exec(html)?.[1];
const statusText = (html: string) => /role="status"><p class="banner-message">([\s\S]*?)<\/p>/.exec(html)?.[1];
const fieldError = (html: string, id: string) =>
  new RegExp(`<p class="field-error" id="${id}">([^<]*)</p>`).exec(html)?.[1];
const inputTag = (html: string, id: string) => new RegExp(`<input[^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? '';
const providerForms = (html: string) =>
  [
    ...html.matchAll(
      /<form method="post" action="\/_allauth\/browser\/v1\/auth\/provider\/redirect">([\s\S]*?)<\/form>/g,
    ),
  ].map((m) => m[1] ?? '');
const connectionIds = (html: string) =>
  [...html.matchAll(/href="\/accounts\/3rdparty\/(\d+)\/remove\/"/g)].map((m) => m[1]);

let t: TestApp;
let site: FakeSite;
let host: Awaited<ReturnType<typeof startCalendarHost>>;
beforeAll(async () => {
  [site, host] = await Promise.all([startFakeSite(), startCalendarHost()]);
  t = await createTestApp({ FETCH_ALLOW: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([site?.close(), host?.close()]);
});

describe('signed out', () => {
  it('sends visitors of /accounts/3rdparty/ to sign in, and back afterwards', async () => {
    for (const url of [PAGE, '/accounts/3rdparty']) {
      const res = await new Browser(t.app).get(url);
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('/auth/login?next=%2Faccounts%2F3rdparty%2F');
    }
    const confirm = await new Browser(t.app).get(`${PAGE}1/remove/`);
    expect(confirm.statusCode).toBe(302);
    expect(confirm.headers.location).toMatch(/^\/auth\/login\?next=/);
  });

  it('adds and removes nothing, and sends the form to sign in', async () => {
    const browser = new Browser(t.app);
    const page = await browser.get('/_allauth/browser/v1/config');
    const token = page.json().meta.csrf_token as string;
    const add = await submit(t, browser, `${PAGE}ics/`, { csrfmiddlewaretoken: token, url: host.url('/team.ics') });
    expect(add.statusCode).toBe(303);
    expect(add.headers.location).toBe('/auth/login?next=%2Faccounts%2F3rdparty%2F');
    const remove = await submit(t, browser, `${PAGE}1/remove/`, { csrfmiddlewaretoken: token });
    expect(remove.statusCode).toBe(303);
    expect(remove.headers.location).toMatch(/^\/auth\/login\?next=/);
  });
});

describe('the page', () => {
  it('shows a signed-in user an empty list, the header of the app and no scripts', async () => {
    const { browser, email } = await signedInUser(t);
    const res = await browser.get(PAGE);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['content-security-policy']).toContain("style-src 'self'");
    expect(res.body).toContain('<html lang="en">');
    expect(res.body).toContain('<title>Calendar Connections · Daybook</title>');
    expect(res.body.match(/<h1[ >]/g)).toHaveLength(1);
    expect(res.body).toContain('<h1 class="page-title">Calendar Connections</h1>');
    expect(res.body).toContain(`No calendars are connected to ${email}.`);
    // The app's account menu, as plain links and a sign-out form.
    for (const link of [
      '<a href="/" class="nav-link">Home</a>',
      '<a href="/chat" class="nav-link">Chat</a>',
      '<a href="/memories">Memories</a>',
      '<a href="/resources">History</a>',
      '<a href="/accounts/3rdparty/" aria-current="page">Calendar Connections</a>',
      '<form class="user-menu-section" method="post" action="/accounts/logout/">',
    ])
      expect(res.body).toContain(link);
    expect(res.body).toContain(`>${email}</span>`);
    expect(res.body).not.toMatch(/<script/i);
    expect(res.body).toContain('<label class="field-label" for="ics-url">Calendar address</label>');
    expect(inputTag(res.body, 'ics-url')).toContain('type="text" inputmode="url"');

    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(res.body)?.[1] ?? '';
    expect(href).toMatch(/^\/accounts\/3rdparty\/style\.css\?v=[0-9a-f]{12}$/);
    const css = await browser.get(href);
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=3600');
    expect(css.body).toContain('--color-primary: #4338ca;');
    // The web app's own stylesheets in index.css's order, then the page's few rules: one source.
    let at = 0;
    for (const name of ['tokens.css', 'base.css', 'components.css', 'layout.css', 'auth.css']) {
      const found = css.body.indexOf(readFileSync(path.join(WEB_STYLES, name), 'utf8'), at);
      expect(found, name).toBeGreaterThanOrEqual(at);
      at = found;
    }
    expect(css.body.indexOf('.connection-list {', at)).toBeGreaterThan(at);
    expect(res.body).toContain('<link rel="icon" href="/favicon.svg">');
  });

  it('says which providers are not enabled on this server, in words for users, and offers ICS anyway', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.get(PAGE);
    expect(res.body).toContain(
      'Google Calendar and Microsoft Outlook are not enabled on this server. Ask whoever runs this Daybook to turn them on. An ICS address works without that.',
    );
    expect(res.body).not.toMatch(/README|[A-Z]{3,}_[A-Z_]{3,}/);
    expect(res.body).not.toContain('name="provider"');
    expect(res.body).toContain('action="/accounts/3rdparty/ics/"');
    expect(res.headers['content-security-policy']).toContain("form-action 'self';");
  });

  it('shows each notice a redirect asks for, in its own words', async () => {
    const { browser } = await signedInUser(t);
    const status = async (query: string) => statusText((await browser.get(`${PAGE}?${query}`)).body);
    const alert = async (query: string) => alertText((await browser.get(`${PAGE}?${query}`)).body);
    expect(await status('added=1')).toBe('The calendar was added.');
    expect(await status('removed=1')).toBe('The calendar was removed.');
    expect(await status('connected=google')).toBe('Your Google calendar is connected.');
    expect(await status('connected=microsoft')).toBe('Your Microsoft Outlook calendar is connected.');
    expect(await status('connected=%3Cb%3Eevil')).toBeUndefined();
    expect(await alert('error=cancelled&error_process=connect')).toBe('You cancelled the connection.');
    expect(await alert('error=denied&error_process=connect')).toBe('The provider did not allow access.');
    expect(await alert('error=access_denied&error_process=connect')).toBe('The provider did not allow access.');
    expect(await alert('error=connected_other&error_process=connect')).toBe(
      'That account is already connected to another Daybook user.',
    );
    for (const code of ['unknown', 'unknown_provider', 'invalid_url', 'constructor'])
      expect(await alert(`error=${code}&error_process=connect`)).toBe('The connection did not work. Please try again.');
    const bogus = await browser.get(`${PAGE}?error=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&error_process=connect`);
    expect(alertText(bogus.body)).toBe('The connection did not work. Please try again.');
    expect(bogus.body).not.toContain('<img');
    expect(bogus.body).not.toContain('onerror');
    expect(statusText((await browser.get(PAGE)).body)).toBeUndefined();
  });

  it('answers unknown paths under the page with its HTML not-found page', async () => {
    const { browser } = await signedInUser(t);
    for (const res of [await browser.get(`${PAGE}nope`), await browser.post(`${PAGE}nope/deeper/`, {})]) {
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('<h1 class="page-title">Page not found</h1>');
      expect(res.body).toContain('<a href="/accounts/3rdparty/">Back to Calendar Connections</a>');
    }
  });
});

describe('starting', () => {
  it('stops with the name of a web stylesheet it cannot read', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'daybook-styles-'));
    const app = Fastify();
    try {
      // The service is never asked: the plugin stops before it serves anything.
      app.register(connectionsRoutes, { calendar: {} as CalendarService, webStyles: empty });
      await expect(app.ready()).rejects.toThrow(
        `The Calendar Connections page cannot read its stylesheet ${path.join(empty, 'tokens.css')}`,
      );
    } finally {
      await app.close().catch(() => {});
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('adding an ICS calendar', () => {
  it('adds it, redirects back, and lists it by its calendar name', async () => {
    const { browser } = await signedInUser(t);
    const res = await addIcs(t, browser, host.url('/team.ics'));
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/accounts/3rdparty/?added=1');
    const page = await browser.get(res.headers.location as string);
    expect(statusText(page.body)).toBe('The calendar was added.');
    expect(page.body).toContain('<h3 class="connection-name">Team Rota</h3>');
    expect(page.body).toContain('<p class="connection-provider">ICS calendar</p>');
    expect(page.body).toContain('<span class="badge badge-success">Connected</span>');
    expect(page.body).toMatch(/Last synced <time datetime="[^"]+"[^>]*>just now<\/time>/);
    expect(page.body).not.toContain('No calendars are connected');
    // The address is a secret: the page never shows it again.
    expect(page.body).not.toContain(host.url('/team.ics'));
  });

  it("uses the name the user gave instead of the calendar's own", async () => {
    const { browser } = await signedInUser(t);
    const res = await addIcs(t, browser, host.url('/team.ics?named'), '  Work shifts ');
    expect(res.statusCode).toBe(303);
    const page = await browser.get(PAGE);
    expect(page.body).toContain('<h3 class="connection-name">Work shifts</h3>');
  });

  it('re-renders the form with the message by the field and what was typed, for an address that is not one', async () => {
    const { browser } = await signedInUser(t);
    const res = await addIcs(t, browser, 'my calendar please', 'Family');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(fieldError(res.body, 'ics-url-error')).toMatch(/https:\/\//);
    const input = inputTag(res.body, 'ics-url');
    expect(input).toContain('value="my calendar please"');
    expect(input).toContain('aria-invalid="true"');
    expect(input).toContain('aria-describedby="ics-url-hint ics-url-error"');
    expect(inputTag(res.body, 'ics-name')).toContain('value="Family"');
    expect(alertText(res.body)).toContain('The calendar was not added');
    expect(connectionIds((await browser.get(PAGE)).body)).toHaveLength(0);
  });

  it('asks for the address when the field is empty, keeping the name', async () => {
    const { browser } = await signedInUser(t);
    const res = await addIcs(t, browser, '   ', 'Family');
    expect(res.statusCode).toBe(400);
    expect(fieldError(res.body, 'ics-url-error')).toBe('Enter the calendar&#39;s address.');
    expect(inputTag(res.body, 'ics-name')).toContain('value="Family"');
  });

  it('says so when the name is too long, by the name field', async () => {
    const { browser } = await signedInUser(t);
    const long = 'n'.repeat(101);
    const res = await addIcs(t, browser, host.url('/team.ics'), long);
    expect(res.statusCode).toBe(400);
    expect(fieldError(res.body, 'ics-name-error')).toBe('The name is too long (at most 100 characters).');
    expect(inputTag(res.body, 'ics-name')).toContain('aria-invalid="true"');
    expect(inputTag(res.body, 'ics-name')).toContain(`value="${long}"`);
    expect(inputTag(res.body, 'ics-url')).toContain(`value="${host.url('/team.ics')}"`);
  });

  it('refuses a web page that is not a calendar, keeping the address', async () => {
    const { browser } = await signedInUser(t);
    const url = site.url('/articles/heat-pumps');
    const res = await addIcs(t, browser, url);
    expect(res.statusCode).toBe(400);
    expect(fieldError(res.body, 'ics-url-error')).toMatch(/not a calendar/i);
    expect(inputTag(res.body, 'ics-url')).toContain(`value="${url}"`);
  });

  it('refuses addresses on the local network, keeping the address', async () => {
    const { browser } = await signedInUser(t);
    const url = 'http://169.254.169.254/latest/meta-data/calendar.ics';
    const res = await addIcs(t, browser, url);
    expect(res.statusCode).toBe(400);
    expect(fieldError(res.body, 'ics-url-error')).toMatch(/private or local networks/);
    expect(inputTag(res.body, 'ics-url')).toContain(`value="${url}"`);
  });

  it('shows a hostile calendar name as text', async () => {
    const { browser } = await signedInUser(t);
    expect((await addIcs(t, browser, host.url('/evil.ics'))).statusCode).toBe(303);
    const page = await browser.get(PAGE);
    expect(page.body).toContain('<h3 class="connection-name">&lt;script&gt;alert(1)&lt;/script&gt;</h3>');
    expect(page.body).not.toMatch(/<script/i);
    const [id] = connectionIds(page.body);
    const confirm = await browser.get(`${PAGE}${id}/remove/`);
    expect(confirm.body).toContain(
      '<h1 class="page-title confirm-title">Remove &lt;script&gt;alert(1)&lt;/script&gt;?</h1>',
    );
    expect(confirm.body).not.toMatch(/<script/i);
  });

  it('refuses a post without the form token with an HTML page, and adds nothing', async () => {
    const { browser } = await signedInUser(t);
    for (const token of [undefined, 'x'.repeat(32)]) {
      const fields: Record<string, string> = { url: host.url('/team.ics') };
      if (token) fields.csrfmiddlewaretoken = token;
      const res = await submit(t, browser, `${PAGE}ics/`, fields);
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('<h1 class="page-title">This form has expired</h1>');
      expect(res.body).toContain('Go back, reload the page and try again.');
    }
    expect(connectionIds((await browser.get(PAGE)).body)).toHaveLength(0);
  });

  it('answers a body over the size limit with an HTML page', async () => {
    const { browser } = await signedInUser(t);
    const page = await browser.get(PAGE);
    const res = await submit(t, browser, `${PAGE}ics/`, {
      csrfmiddlewaretoken: formToken(page.body),
      url: `https://example.com/${'a'.repeat(9000)}`,
    });
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).not.toContain('"error"');
  });

  it(`hides the add controls at ${CALENDAR_CONNECTIONS_MAX} calendars and says why`, async () => {
    const { browser } = await signedInUser(t);
    for (let i = 0; i < CALENDAR_CONNECTIONS_MAX; i++)
      expect((await addIcs(t, browser, host.url(`/team.ics?n=${i}`))).statusCode).toBe(303);
    const page = await browser.get(PAGE);
    expect(connectionIds(page.body)).toHaveLength(CALENDAR_CONNECTIONS_MAX);
    expect(page.body).toContain(
      `You have connected ${CALENDAR_CONNECTIONS_MAX} calendars, the most one account can have.`,
    );
    expect(page.body).not.toContain('action="/accounts/3rdparty/ics/"');
  });
});

describe('removing a calendar', () => {
  it('asks first, then removes it and says so', async () => {
    const { browser } = await signedInUser(t);
    await addIcs(t, browser, host.url('/team.ics'));
    const [id] = connectionIds((await browser.get(PAGE)).body);
    const confirm = await browser.get(`${PAGE}${id}/remove/`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('<h1 class="page-title confirm-title">Remove Team Rota?</h1>');
    expect(confirm.body).toContain('Daybook stops reading this calendar');
    expect(confirm.body).toContain(`<form method="post" action="/accounts/3rdparty/${id}/remove/">`);
    expect(confirm.body).toContain('<a class="btn btn-secondary" href="/accounts/3rdparty/">Cancel</a>');

    const res = await submit(t, browser, `${PAGE}${id}/remove/`, { csrfmiddlewaretoken: formToken(confirm.body) });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/accounts/3rdparty/?removed=1');
    const page = await browser.get(res.headers.location as string);
    expect(statusText(page.body)).toBe('The calendar was removed.');
    expect(page.body).toContain('No calendars are connected to');
    expect((await browser.get(`${PAGE}${id}/remove/`)).statusCode).toBe(404);
  });

  it("answers 404 for another user's calendar and for ids that cannot be one, and leaves it alone", async () => {
    const owner = await signedInUser(t);
    await addIcs(t, owner.browser, host.url('/team.ics'));
    const [id] = connectionIds((await owner.browser.get(PAGE)).body);
    const other = await signedInUser(t);
    const token = formToken((await other.browser.get(PAGE)).body);
    for (const bad of [id, 'abc', '0', '-1', '1.5', '2147483648', '99999999999999999999']) {
      const page = await other.browser.get(`${PAGE}${bad}/remove/`);
      expect(page.statusCode).toBe(404);
      expect(page.body).toContain('<h1 class="page-title">Page not found</h1>');
      const post = await submit(t, other.browser, `${PAGE}${bad}/remove/`, { csrfmiddlewaretoken: token });
      expect(post.statusCode).toBe(404);
      expect(post.headers['content-type']).toBe('text/html; charset=utf-8');
    }
    expect(connectionIds((await owner.browser.get(PAGE)).body)).toEqual([id]);
  });
});

describe('OAuth providers', () => {
  let withProviders: TestApp;
  let providers: FakeCalendarProviders;
  beforeAll(async () => {
    providers = await startFakeCalendarProviders();
    withProviders = await createTestApp(registerDaybook(providers, 'http://daybook.test'), {
      calendar: { endpoints: providers.endpoints },
    });
  });
  afterAll(async () => {
    await withProviders?.close();
    await providers?.close();
  });

  /** Posts the page's connect (or reconnect) form for `provider`: the answer sends the browser to its consent page. */
  async function startConnect(browser: Browser, provider: string) {
    const page = await browser.get(PAGE);
    const form = providerForms(page.body).find((f) => f.includes(`name="provider" value="${provider}"`)) ?? '';
    const fields = Object.fromEntries([...form.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const res = await submit(withProviders, browser, '/_allauth/browser/v1/auth/provider/redirect', fields);
    expect(res.statusCode).toBe(302);
    return res.headers.location as string;
  }

  /** Follows the provider's redirect back to Daybook, then Daybook's to the page. */
  async function comeBack(browser: Browser, redirect: string) {
    const back = new URL(redirect);
    const res = await browser.get(back.pathname + back.search);
    expect(res.statusCode).toBe(302);
    return browser.get(res.headers.location as string);
  }

  it('connects a Google calendar through the consent page, asks to reconnect when access is withdrawn, and revokes on removal', async () => {
    const { browser } = await signedInUser(withProviders);
    const email = providers.account('google').email;
    const consent = await startConnect(browser, 'google');
    expect(consent.startsWith(providers.url)).toBe(true);
    const page = await comeBack(browser, await providers.approve(consent));
    expect(statusText(page.body)).toBe('Your Google calendar is connected.');
    expect(page.body).toContain(`<h3 class="connection-name">${email}</h3>`);
    expect(page.body).toContain('<p class="connection-provider">Google</p>');
    expect(page.body).toContain('<span class="badge badge-success">Connected</span>');

    // The user withdrew Daybook's access at Google; the next read finds out.
    providers.revokeAllGrants('google');
    await browser.get('/api/calendar/events/?date=2026-01-05');
    const stale = await browser.get(PAGE);
    expect(stale.body).toContain('<span class="badge badge-warning">Needs reconnecting</span>');
    expect(stale.body).toContain('Reconnect to give it again.');
    const reconnect = providerForms(stale.body).filter((f) => f.includes('Reconnect'));
    expect(reconnect).toHaveLength(1);
    expect(reconnect[0]).toContain('<input type="hidden" name="provider" value="google">');
    const again = await comeBack(browser, await providers.approve(await startConnect(browser, 'google')));
    expect(again.body).toContain('<span class="badge badge-success">Connected</span>');
    expect(connectionIds(again.body)).toHaveLength(1);

    const [id] = connectionIds(again.body);
    const confirm = await browser.get(`${PAGE}${id}/remove/`);
    expect(confirm.body).toContain('Daybook also asks Google to revoke the access you gave it.');
    const revokedBefore = providers.revoked.length;
    const removed = await submit(withProviders, browser, `${PAGE}${id}/remove/`, {
      csrfmiddlewaretoken: formToken(confirm.body),
    });
    expect(removed.headers.location).toBe('/accounts/3rdparty/?removed=1');
    expect(providers.revoked.length).toBeGreaterThan(revokedBefore);
  });

  it('says so when the user turns the consent down', async () => {
    const { browser } = await signedInUser(withProviders);
    // allauth reports the provider's access_denied as cancelled.
    const page = await comeBack(browser, await providers.deny(await startConnect(browser, 'microsoft')));
    expect(alertText(page.body)).toBe('You cancelled the connection.');
    expect(connectionIds(page.body)).toHaveLength(0);
  });

  it('offers one connect button per enabled provider, each a form that starts the consent', async () => {
    const { browser } = await signedInUser(withProviders);
    const page = await browser.get(PAGE);
    expect(page.body).not.toContain('not enabled on this server');
    const forms = providerForms(page.body);
    expect(forms).toHaveLength(2);
    const csrf = browser.cookies.get('csrftoken');
    for (const [i, provider] of ['google', 'microsoft'].entries()) {
      expect(forms[i]).toContain(`<input type="hidden" name="provider" value="${provider}">`);
      expect(forms[i]).toContain('<input type="hidden" name="process" value="connect">');
      expect(forms[i]).toContain('<input type="hidden" name="callback_url" value="/accounts/3rdparty/">');
      expect(forms[i]).toContain(`<input type="hidden" name="csrfmiddlewaretoken" value="${csrf}">`);
    }
    expect(page.body).toContain('>Connect Google</button>');
    // The redirect after the post goes to the consent page (here both fakes'): the browser must allow it.
    expect(page.headers['content-security-policy']).toContain(`form-action 'self' ${new URL(providers.url).origin};`);
  });

  it('refuses addresses on this machine unless FETCH_ALLOW allows them', async () => {
    const { browser } = await signedInUser(withProviders);
    const res = await addIcs(withProviders, browser, host.url('/team.ics'));
    expect(res.statusCode).toBe(400);
    expect(fieldError(res.body, 'ics-url-error')).toMatch(/private or local networks/);
  });
});

describe('signing out', () => {
  it('ends the session with a plain form post and goes home', async () => {
    const { browser } = await signedInUser(t);
    const page = await browser.get(PAGE);
    const res = await submit(t, browser, '/accounts/logout/', { csrfmiddlewaretoken: formToken(page.body) });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(browser.cookies.has('sessionid')).toBe(false);
    expect((await browser.get(PAGE)).statusCode).toBe(302);
    expect((await browser.get('/_allauth/browser/v1/auth/session')).statusCode).toBe(401);
  });

  it('needs the form token', async () => {
    const { browser } = await signedInUser(t);
    const res = await submit(t, browser, '/accounts/logout/', {});
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('This form has expired');
    expect((await browser.get(PAGE)).statusCode).toBe(200);
  });
});
