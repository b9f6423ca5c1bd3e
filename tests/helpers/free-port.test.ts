import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './free-port.ts';

const listening: Server[] = [];
const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer().once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
    listening.push(s);
  });

afterEach(async () => {
  await Promise.all(listening.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('freePort', () => {
  it('hands out distinct ports below the ephemeral range, each one a server can listen on', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 40; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(40);
    for (const port of ports) expect(port).toBeLessThan(32_768);
    await Promise.all(ports.map(listen));
  });

  it('passes over a port something already listens on', async () => {
    const before = await freePort();
    const taken = before + 1; // the next one it would try (blocks are walked in order)
    await listen(taken);
    const after = await freePort();
    expect(after).not.toBe(taken);
    await listen(after);
  });
});
