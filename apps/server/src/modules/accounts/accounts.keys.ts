// The signed keys mailed links carry (email verification, password reset): when one was issued,
// how long it lasts, and where it goes in the front end's URL.
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Signer } from '../../lib/signing.ts';
import type { MailQueue } from '../mail/mail.service.ts';
import type { RateLimiter } from '../rate-limit/rate-limit.service.ts';
import type { FrontendUrls } from './accounts.types.ts';

/** What mailing a keyed link takes: the queue, its limits, the signer and the front end's URLs. */
export interface MailedKeyDeps {
  mail: MailQueue;
  limiter: RateLimiter;
  signer: Signer;
  clock: Clock;
  frontendUrls: FrontendUrls;
  log: FastifyBaseLogger;
}

export const KEY_TTL_SEC = 3 * 24 * 3600;

export const nowSecOf = (clock: Clock) => Math.floor(clock.now().getTime() / 1000);

export const withKey = (template: string, key: string) => template.replaceAll('{key}', encodeURIComponent(key));
