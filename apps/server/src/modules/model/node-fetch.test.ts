import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from './node-fetch.ts';

let server: Server;
let base = '';
let releaseSecondPiece = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (req.url === '/echo') {
        res.writeHead(201, { 'content-type': 'application/json', 'x-seen': req.headers.authorization ?? '' });
        res.end(JSON.stringify({ method: req.method, body }));
      } else if (req.url === '/empty') {
        res.writeHead(204).end();
      } else if (req.url === '/half-json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"half":');
        if (req.headers['x-then'] === 'hang-up') setTimeout(() => res.destroy(), 20);
      } else if (req.url === '/pieces') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('first;');
        releaseSecondPiece = () => res.end('second');
      } else {
        res.writeHead(404).end('nope');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('nodeFetch', () => {
  it('sends method, headers and body, and hands back status, headers and body', async () => {
    const res = await nodeFetch(`${base}/echo`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-seen')).toBe('Bearer k');
    expect(await res.json()).toEqual({ method: 'POST', body: '{"a":1}' });
  });

  it('streams the body as it arrives', async () => {
    const res = await nodeFetch(`${base}/pieces`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The first piece is readable while the server still holds back the second.
    expect(decoder.decode((await reader.read()).value)).toBe('first;');
    releaseSecondPiece();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value);
    expect(rest).toBe('second');
  });

  it('gives bodiless statuses an empty body, and errors their status', async () => {
    const empty = await nodeFetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
    const missing = await nodeFetch(`${base}/missing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('nope');
  });

  it('rejects with an AbortError when aborted before or during the response', async () => {
    await expect(nodeFetch(`${base}/echo`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    const controller = new AbortController();
    const res = await nodeFetch(`${base}/pieces`, { signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('reads whole answers before resolving, so aborting or a hang-up meanwhile rejects', async () => {
    const controller = new AbortController();
    const pending = nodeFetch(`${base}/half-json`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect(nodeFetch(`${base}/half-json`, { headers: { 'x-then': 'hang-up' } })).rejects.toThrow();
  });

  it('rejects when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    await expect(nodeFetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
