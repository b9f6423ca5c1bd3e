// Sends mail over SMTP when SMTP_URL is set; otherwise writes each message to DATA_DIR/mail, so
// someone running `npm start` with no mail server can still open a link. Logs name the template
// and a message id or file, never the recipient or the links: addresses are personal data, and
// links are live keys.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';
import { createInFlight } from '../../lib/in-flight.ts';
import { privateDir } from '../../lib/private-files.ts';

export interface MailMessage {
  /** Which mail this is (templates.ts), for logs. */
  template: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra header lines, e.g. List-Unsubscribe on the daily mail. */
  headers?: Record<string, string>;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** An error's text with email addresses blanked (SMTP rejections quote the recipient). */
const withoutAddresses = (text: string) => text.replace(/[^\s<>"'@]+@[^\s<>"'@]+/g, '<address>');

/**
 * What callers see of an SMTP failure: its words without addresses, and its codes. Nodemailer's own
 * error lists the rejected recipients in its fields, and callers log errors and jobs store them.
 */
export class MailError extends Error {
  override name = 'MailError';
  constructor(
    message: string,
    readonly code?: string,
    readonly responseCode?: number,
  ) {
    super(message);
  }
}

function mailError(err: unknown): MailError {
  const e = err as (Error & { code?: unknown; responseCode?: unknown }) | undefined;
  return new MailError(
    withoutAddresses(String(e?.message ?? e)),
    typeof e?.code === 'string' ? e.code : undefined,
    typeof e?.responseCode === 'number' ? e.responseCode : undefined,
  );
}

export function createMailer({
  smtpUrl,
  from,
  outboxDir,
  log,
  production = false,
}: {
  smtpUrl?: string;
  from: string;
  outboxDir: string;
  log: FastifyBaseLogger;
  /** Without SMTP in production, say loudly that nobody receives account mail. */
  production?: boolean;
}): Mailer {
  if (smtpUrl) {
    const transport = nodemailer.createTransport(smtpUrl);
    return {
      async send({ template, ...message }) {
        const info = await transport.sendMail({ from, ...message }).catch((err: unknown) => {
          throw mailError(err);
        });
        log.info({ template, messageId: info.messageId }, `mail sent: ${template}`);
      },
      close: () => transport.close(),
    };
  }

  if (production) {
    log.warn(
      `SMTP_URL is not set: account mail (verification and password reset links) is NOT delivered; it is written to ${outboxDir}`,
    );
  } else {
    log.info(`SMTP_URL is not set: account mail is written to ${outboxDir}`);
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let counter = 0;
  return {
    async send({ template, ...message }) {
      const info = await transport.sendMail({ from, ...message });
      // The outbox holds live reset links: only the user running Daybook may read it.
      await privateDir(outboxDir);
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      // Random too: several processes (server, workers) write to one outbox.
      const file = `${stamp}-${++counter}-${randomBytes(4).toString('hex')}-${template}.eml`;
      await writeFile(path.join(outboxDir, file), info.message as Buffer, { mode: 0o600, flag: 'wx' });
      log.info({ template, file }, `mail waits in the outbox: ${file}`);
    },
    close: () => transport.close(),
  };
}

export interface MailQueue {
  /** Starts sending and returns at once; a failure is logged, never thrown to the caller. */
  send(message: MailMessage): void;
  /**
   * Waits (at most `timeoutMs`) until every mail sent so far was taken by the mail server or refused
   * (a shutdown; a test that checks that no other mail went out); returns how many are left.
   */
  drain(timeoutMs: number): Promise<number>;
}

/**
 * Keeps mail off the request path: a slow or stalled mail server must not delay answers, and the
 * time an answer takes must not tell whether a mail went out (which would tell who has an account).
 */
export function createMailQueue(mailer: Mailer, log: FastifyBaseLogger): MailQueue {
  const sending = createInFlight();
  return {
    send(message) {
      void sending.track(
        mailer.send(message).catch((err: Error & { code?: string; responseCode?: number }) => {
          log.error(
            {
              template: message.template,
              code: err?.code,
              responseCode: err?.responseCode,
              reason: withoutAddresses(String(err?.message ?? err)),
            },
            `could not send mail: ${message.template}`,
          );
        }),
      );
    },
    drain: sending.drain,
  };
}
