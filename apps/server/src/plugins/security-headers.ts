import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

// Only the app's own scripts may run; nothing may frame us. Styles are files too (Vite emits CSS).
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface SecurityHeadersOptions {
  /** Served over https (PUBLIC_URL): browsers are told to never use plain http for a year. */
  hsts: boolean;
}

export default fp<SecurityHeadersOptions>(
  async (app: FastifyInstance, { hsts }) => {
    app.addHook('onSend', async (_request, reply) => {
      if (hsts) reply.header('Strict-Transport-Security', 'max-age=31536000');
      reply.header('Content-Security-Policy', CSP);
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('X-Frame-Options', 'DENY');
      reply.header('Referrer-Policy', 'strict-origin-when-cross-origin');
      reply.header('Cross-Origin-Opener-Policy', 'same-origin');
      reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
    });
  },
  { name: 'security-headers' },
);
