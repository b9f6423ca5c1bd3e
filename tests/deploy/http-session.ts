// A browser's cookies and CSRF token for tests that drive real server processes over HTTP, and its
// chat tabs over WebSocket: requests may go to whichever instance, as behind a load balancer.
import { type TServerEvent, ZServerEvent } from '@daybook/contracts';
import request from 'supertest';
import WebSocket from 'ws';
import { waitFor } from '../helpers/wait-for.ts';

export const ALLAUTH = '/_allauth/browser/v1';
export const PUBLIC_URL = 'http://daybook.test';

export class HttpSession {
  cookies = new Map<string, string>();
  /** `forwardedFor`: the client address a trusted proxy would report (rate limits key on it). */
  constructor(private readonly options: { forwardedFor?: string } = {}) {}
  private keep(res: request.Response) {
    for (const line of (res.headers['set-cookie'] as unknown as string[] | undefined) ?? []) {
      const [pair] = line.split(';');
      const [k, v] = (pair ?? '').split('=');
      if (!k) continue;
      if (!v || /max-age=0/i.test(line)) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    return res;
  }
  header = () => [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  async get(p: { base: string }, url: string) {
    return this.keep(await request(p.base).get(url).set('cookie', this.header()));
  }
  async send(p: { base: string }, method: 'post' | 'patch' | 'delete', url: string, body: unknown = {}) {
    if (!this.cookies.has('csrftoken')) await this.get(p, `${ALLAUTH}/config`);
    const req = request(p.base)
      [method](url)
      .set('cookie', this.header())
      .set('origin', PUBLIC_URL)
      .set('x-csrftoken', this.cookies.get('csrftoken') ?? '');
    if (this.options.forwardedFor) req.set('x-forwarded-for', this.options.forwardedFor);
    return this.keep(await req.send(body as object));
  }
  post = (p: { base: string }, url: string, body: unknown = {}) => this.send(p, 'post', url, body);
}

/** A chat tab: its socket, and the events it got. */
export interface Tab {
  ws: WebSocket;
  /** What the socket got and `next` has not taken, in order (the history is taken at the opening). */
  events: TServerEvent[];
  /** The close code, once the socket has closed. */
  closed: Promise<number>;
  /** Takes the first event that matches, waiting (at most `timeoutMs`) for it to come. */
  next(match: (e: TServerEvent) => boolean, timeoutMs?: number): Promise<TServerEvent>;
  /** Sends a message as the user types it; a resend with the same `clientId` is stored once. */
  say(text: string, clientId?: string): void;
}

/** Opens the session's chat on instance `p`, once it has sent its history. */
export async function openTab(p: { base: string }, session: HttpSession): Promise<Tab> {
  const ws = new WebSocket(`${p.base.replace(/^http/, 'ws')}/ws/chat/`, {
    headers: { cookie: session.header(), origin: PUBLIC_URL },
  });
  const events: TServerEvent[] = [];
  ws.on('message', (data) => events.push(ZServerEvent.parse(JSON.parse(data.toString()))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const tab: Tab = {
    ws,
    events,
    closed,
    say: (text, clientId) =>
      ws.send(
        JSON.stringify({
          author_type: 'human',
          message_type: 'message',
          raw_text: text,
          ...(clientId ? { client_id: clientId } : {}),
        }),
      ),
    next: (match, timeoutMs = 15_000) =>
      waitFor(
        () => `a matching event; the tab has ${JSON.stringify(events)}`,
        () => {
          const i = events.findIndex(match);
          return i >= 0 ? events.splice(i, 1)[0] : undefined;
        },
        { timeoutMs, intervalMs: 25 },
      ),
  };
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await tab.next((e) => e.message_type === 'history', 20_000);
  return tab;
}
