// The client side of the chat benchmark, in a worker thread of its own: the fake model and the 100
// simulated users, so their work does not share the server's event loop.

import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';
import { startFakeOpenAI } from '../tests/helpers/fake-openai.ts';
import { BENCH_ORIGIN } from './lib/bench-settings.ts';

const port = parentPort;
if (!port) throw new Error('run as a worker');
const { turns, thinkMs } = workerData as { turns: number; thinkMs: number };
const fake = await startFakeOpenAI();
fake.onChat(() => ({ text: 'Sure, here is a short answer.', chunks: 4 }));
port.postMessage({ type: 'fake', baseUrl: fake.baseUrl });

const now = () => performance.timeOrigin + performance.now();

function openSocket(wsUrl: string, cookie: string) {
  const ws = new WebSocket(wsUrl, { headers: { cookie, origin: BENCH_ORIGIN } });
  return new Promise<WebSocket>((resolve, reject) => {
    ws.once('message', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Total turn time, and the server's share: frame sent → model request arrives, plus model done → reply at the client. */
function turn(ws: WebSocket, text: string): Promise<{ total: number; server: number }> {
  const start = now();
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      if (JSON.parse(data.toString()).message_type !== 'markdown') return;
      ws.off('message', onMessage);
      const end = now();
      const i = fake.requests.findIndex((r) => r.stream && r.messages.at(-1)?.content === text);
      const t = fake.timings[i];
      const server = t
        ? performance.timeOrigin + t.receivedAt - start + (end - (performance.timeOrigin + t.finishedAt))
        : Number.NaN;
      resolve({ total: end - start, server });
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ author_type: 'human', message_type: 'message', raw_text: text }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

port.on('message', async (msg: { type: string; wsUrl: string; cookies: string[]; cookie?: string; text?: string }) => {
  if (msg.type === 'load') {
    const sockets = await Promise.all(msg.cookies.map((c) => openSocket(msg.wsUrl, c)));
    // One unmeasured turn per user first, so the numbers describe a warm server, not JIT compilation.
    for (const [i, ws] of sockets.entries()) await turn(ws, `Warm-up from user ${i}`);
    const totals: number[] = [];
    const server: number[] = [];
    await Promise.all(
      sockets.map(async (ws, i) => {
        await sleep(Math.random() * thinkMs);
        for (let n = 0; n < turns; n++) {
          if (n) await sleep(thinkMs * (0.5 + Math.random()));
          const t = await turn(ws, `Message ${n} from user ${i}: what should I read this week?`);
          totals.push(t.total);
          server.push(t.server);
        }
      }),
    );
    for (const ws of sockets) ws.close();
    port.postMessage({ type: 'load', totals, server });
  } else if (msg.type === 'prompt' && msg.cookie && msg.text) {
    const ws = await openSocket(msg.wsUrl, msg.cookie);
    const before = fake.requests.length;
    await turn(ws, msg.text);
    ws.close();
    const request = fake.requests.slice(before).find((r) => r.stream);
    port.postMessage({ type: 'prompt', chars: request?.messages.reduce((n, m) => n + m.content.length, 0) ?? 0 });
  } else if (msg.type === 'close') {
    await fake.close();
    port.close();
  }
});
