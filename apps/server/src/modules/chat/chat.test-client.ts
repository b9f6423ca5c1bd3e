// A chat client over a real WebSocket for the chat tests: collects events, waits for matches, and
// tells how the socket closed.
import { type TServerEvent, ZServerEvent } from '@daybook/contracts';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import WebSocket from 'ws';
import { type FakeOpenAI, startFakeOpenAI } from '../../../../../tests/helpers/fake-openai.ts';
import { type Browser, createTestApp, type TestApp, type TestAppDeps } from '../../test/test-app.ts';

export interface Client {
  ws: WebSocket;
  events: TServerEvent[];
  /** The first unclaimed event that matches, removed from `events`. */
  next(match: (e: TServerEvent) => boolean, timeoutMs?: number): Promise<TServerEvent>;
  send(body: unknown): void;
  say(text: string, clientId?: string): void;
  closed: Promise<{ code: number; reason: string }>;
}

export function connect(
  base: string,
  browser: Browser | null,
  path = '/ws/chat/',
  options: { autoPong?: boolean } = {},
): Promise<Client> {
  const cookie = browser ? [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  const ws = new WebSocket(`${base}${path}`, {
    headers: { cookie, origin: 'http://daybook.test' },
    autoPong: options.autoPong ?? true,
  });
  const events: TServerEvent[] = [];
  ws.on('message', (data) => events.push(ZServerEvent.parse(JSON.parse(data.toString()))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const send = (body: unknown) => ws.send(typeof body === 'string' ? body : JSON.stringify(body));
  const client: Client = {
    ws,
    events,
    closed,
    send,
    say: (text, clientId) =>
      send({
        author_type: 'human',
        message_type: 'message',
        raw_text: text,
        ...(clientId ? { client_id: clientId } : {}),
      }),
    async next(match, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const i = events.findIndex(match);
        if (i >= 0) return events.splice(i, 1)[0] as TServerEvent;
        if (Date.now() > until) throw new Error(`no matching event in ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
  return new Promise((resolve) => {
    ws.on('open', () => resolve(client));
    ws.on('unexpected-response', () => resolve(client));
    ws.on('close', () => resolve(client));
  });
}

export const type = (t: string) => (e: TServerEvent) => e.message_type === t;

/** Collects the app's log lines (parsed JSON) from now on; the app must log as JSON. */
export function captureLogs(
  app: FastifyInstance,
  /** Each line as written, too. */
  onLine?: (line: string) => void,
): Array<Record<string, unknown> & { level: number; msg?: string }> {
  const lines: Array<Record<string, unknown> & { level: number; msg?: string }> = [];
  const stream = (app.log as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym];
  if (!stream) throw new Error('no log stream');
  // Lines carry level names ("warn"); tests compare pino's numbers.
  const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
  stream.write = (line: string) => {
    onLine?.(line);
    for (const part of line.split('\n').filter(Boolean)) {
      const parsed = JSON.parse(part) as { level: number | string };
      lines.push({ ...parsed, level: typeof parsed.level === 'string' ? (LEVELS[parsed.level] ?? 0) : parsed.level });
    }
  };
  return lines;
}

export interface ChatApp {
  t: TestApp;
  fake: FakeOpenAI;
  /** ws://127.0.0.1:<port> of the listening app. */
  wsBase: string;
  close(): Promise<void>;
}

/** The real app answering with the fake model, listening on a free port for real sockets. */
export async function startChatApp(env: Record<string, string> = {}, deps: TestAppDeps = {}): Promise<ChatApp> {
  const fake = await startFakeOpenAI();
  const t = await createTestApp(
    { LLM_BASE_URL: fake.baseUrl, LLM_MODEL: 'fake-model', LLM_MAX_RETRIES: '0', ...env },
    deps,
  );
  const wsBase = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
  return {
    t,
    fake,
    wsBase,
    async close() {
      await t.close();
      await fake.close();
    },
  };
}
