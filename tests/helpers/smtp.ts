// A real SMTP server on 127.0.0.1 that keeps what it receives, for reading links out of mail.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMime } from './mime.ts';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
  /** The top-level headers, names lower-cased, folded lines joined (List-Unsubscribe…). */
  headers: Record<string, string>;
  /** The message exactly as it arrived. */
  raw: string;
}

export interface SmtpOptions {
  /** Answers a mail with 451 (try again later), as a busy server does, when this says so. */
  refuse?: (mail: ReceivedMail) => boolean;
}

/** The top-level headers of a raw message, as RFC 5322 reads them. */
export function headersOf(raw: string): Record<string, string> {
  const head = raw.slice(0, Math.max(0, raw.search(/\r?\n\r?\n/)));
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

export interface TestSmtp {
  url: string;
  messages: ReceivedMail[];
  /** Waits for a message to `to` (optionally matching `subject`) that arrives after `since` messages. */
  waitFor(to: string, opts?: { subject?: RegExp; timeoutMs?: number; after?: number }): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtp(options: SmtpOptions = {}): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const to = session.envelope.rcptTo.map((r) => r.address).join(',');
        const parsed = parseMime(raw);
        const mail = { ...parsed, to, links: parsed.text.match(/https?:\/\/\S+/g) ?? [], headers: headersOf(raw), raw };
        if (options.refuse?.(mail)) {
          callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
          return;
        }
        messages.push(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(to, { subject, timeoutMs = 10_000, after = 0 } = {}) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.slice(after).find((m) => m.to === to && (!subject || subject.test(m.subject)));
        if (found) return found;
        if (Date.now() > until)
          throw new Error(
            `no mail to ${to}${subject ? ` matching ${subject}` : ''}; got: ${messages.map((m) => `${m.to}: ${m.subject}`).join('; ')}`,
          );
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
