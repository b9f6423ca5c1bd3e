// The bare references `npm run bench` measures Daybook against, in a process of their own (forked
// by scripts/bench.ts with the scratch database's address): a bare Fastify app answering
// GET /lookup/:id with one primary-key lookup through a bare `pg` pool (the floor for any
// database-backed request), and a bare `ws` server that echoes every frame (the floor for a chat
// turn). It reports both addresses over IPC and runs until told to close.
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { WebSocketServer } from 'ws';

const send = (message: object) => process.send?.(message);
const databaseUrl = process.env.BENCH_DATABASE_URL;
if (!databaseUrl || !process.send) throw new Error('run by scripts/bench.ts (forked, with BENCH_DATABASE_URL)');

// Daybook's own pool holds 10 connections (apps/server/src/db/database.ts): the same here.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/lookup/:id', async (request, reply) => {
  const { rows } = await pool.query('SELECT id, email, is_active, time_zone, created_at FROM users WHERE id = $1', [
    Number(request.params.id),
  ]);
  if (!rows[0]) return reply.code(404).send({ error: 'not found' });
  return rows[0];
});
const httpUrl = await app.listen({ host: '127.0.0.1', port: 0 });

const echo = new WebSocketServer({ host: '127.0.0.1', port: 0 });
echo.on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })));
await new Promise<void>((resolve) => echo.once('listening', resolve));
const wsUrl = `ws://127.0.0.1:${(echo.address() as AddressInfo).port}/`;

process.on('message', async (message: { type: string }) => {
  if (message.type !== 'close') return;
  for (const client of echo.clients) client.terminate();
  await new Promise((resolve) => echo.close(resolve));
  await app.close();
  await pool.end();
  process.exit(0);
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', httpUrl, wsUrl, pid: process.pid });
