// The HTTP requests' metric: time by route pattern, method and status.
import client from 'prom-client';

/** The route label of requests that matched no route (404s, and client routes of the web app). */
export const UNMATCHED = 'unmatched';

export function createHttpMetrics(registers: client.Registry[]) {
  const http = new client.Histogram({
    name: 'daybook_http_request_duration_seconds',
    help: 'HTTP requests by route pattern ("unmatched" for no route), method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  return {
    /** One finished HTTP request; `route` is the route's pattern, never the URL. */
    httpRequest(method: string, route: string | undefined, status: number, seconds: number) {
      http.observe({ method, route: route ?? UNMATCHED, status: String(status) }, seconds);
    },
  };
}
