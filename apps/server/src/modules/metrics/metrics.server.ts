// The worker's metrics: it serves no web app or API, so a bare HTTP server answers GET /metrics
// (same token as the web processes) on WORKER_METRICS_PORT and nothing else.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TApiError } from '@daybook/contracts';
import { bearerMatches } from './metrics.routes.ts';
import type { Metrics } from './metrics.ts';

export async function serveMetrics(
  metrics: Metrics,
  options: { host: string; port: number; token: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      const body: TApiError = { error: 'Only /metrics is served here.', code: 'not_found' };
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (!bearerMatches(req.headers.authorization, options.token)) {
      const body: TApiError = {
        error: 'Metrics need the token set in METRICS_TOKEN (Authorization: Bearer <token>).',
        code: 'unauthorized',
      };
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="metrics"' })
        .end(JSON.stringify(body));
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
