// A browser's cookies and CSRF token for tests that drive real server processes over HTTP: requests
// may go to whichever instance, as behind a load balancer.
import request from 'supertest';

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
