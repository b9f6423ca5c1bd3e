// Attacks on /metrics over real HTTP: requests that try to grow the label sets without bound
// (made-up methods, random paths, odd encodings) and ways around the token.
import { connect as tcpConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/test-app.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

/** One raw HTTP/1.1 request line; resolves with the status line. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString();
    });
    socket.on('error', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.setTimeout(2000, () => socket.destroy());
  });
}

describe('/metrics under attack', () => {
  let t: TestApp;
  let port = 0;
  beforeAll(async () => {
    t = await createTestApp({ METRICS_ENABLED: 'true', METRICS_TOKEN: TOKEN });
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = Number(new URL(address).port);
  });
  afterAll(() => t.close());

  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  const httpSeries = (text: string) =>
    text.split('\n').filter((l) => l.startsWith('daybook_http_request_duration_seconds_count{'));

  it('keeps the HTTP label sets bounded whatever method, path or query a client sends', async () => {
    for (let i = 0; i < 40; i++) {
      await fetch(`http://127.0.0.1:${port}/api/memories/${i}/?q=${i}`);
      await fetch(`http://127.0.0.1:${port}/no/such/path/${i}`);
      await fetch(`http://127.0.0.1:${port}/api/%2e%2e/${i}`);
      await raw(port, `FOO${i} /api/users/me/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    }
    for (const method of ['PROPFIND', 'MKCALENDAR', 'SEARCH', 'PURGE', 'LINK']) {
      await raw(port, `${method} /api/users/me/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    }
    const series = httpSeries(await scrape());
    // Made-up methods never reach the app; real but unusual ones are a short, fixed list.
    expect(series.join('\n')).not.toMatch(/FOO\d/);
    expect(series.join('\n')).not.toMatch(/no\/such|%2e|\/api\/memories\/\d/);
    expect(series.length).toBeLessThan(20);
  });

  it('takes the token only as a bearer header: not in the query, a cookie or another header', async () => {
    for (const [url, headers] of [
      [`/metrics?token=${TOKEN}`, {}],
      [`/metrics?access_token=${TOKEN}`, {}],
      ['/metrics', { cookie: `token=${TOKEN}` }],
      ['/metrics', { 'x-metrics-token': TOKEN }],
      ['/metrics', { authorization: `Bearer ${TOKEN} extra` }],
      ['/metrics', { authorization: `Bearer  ${TOKEN.toUpperCase()}` }],
    ] as const) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers });
      expect(res.status, `${url} ${JSON.stringify(headers)}`).toBe(401);
      expect(await res.text()).not.toContain('daybook_');
    }
    const head = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(401);
  });
});
